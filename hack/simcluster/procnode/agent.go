package procnode

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// Label and taint of process nodes.
const (
	// NodeLabel is "true" on every process node: a pod template chooses
	// them with a nodeSelector on it.
	NodeLabel = "trainforge.dev/process-node"
	// NodeTaint keeps every pod that does not tolerate it (all the fake
	// workloads) off process nodes: NoSchedule, value "true".
	NodeTaint = "trainforge.dev/process-node"
)

// Toleration is what a pod needs to run on a process node, with the
// nodeSelector {NodeLabel: "true"}.
var Toleration = corev1.Toleration{Key: NodeTaint, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}

// Config says what nodes an agent plays and how.
type Config struct {
	// Rest reaches the API server.
	Rest *rest.Config
	// Nodes are the names of the nodes; CPU and Memory the capacity of
	// each.
	Nodes       []string
	CPU, Memory string
	// Dir holds the pods' files (volumes, hosts files, logs).
	Dir string
	// TLSCertFile and TLSKeyFile are the log servers' certificate (the
	// API server does not check it: kwokctl gives it no kubelet CA).
	TLSCertFile, TLSKeyFile string
	// Spawn starts a container's process (exec.Cmd.Start, from a thread
	// that lives as long as the agent so that the parent-death signal
	// comes when the agent dies, not when a thread ends).
	Spawn func(*exec.Cmd) error
	// Watch, when set, is told the process group of every process
	// started, for a watchdog that kills them if the agent dies.
	Watch func(pgid int)
	// ExtraHosts are entries of every pod's /etc/hosts (for example the
	// name of a Service whose endpoint listens on the host).
	ExtraHosts []corev1.HostAlias
	// RestartBackoff is the first back-off of a container restarted in
	// place (doubled each time, at most 5 minutes); 10s, the kubelet's,
	// when zero. As the kubelet's, a container's first failure restarts it
	// at once, and the back-off delays only a failure that comes within it
	// of the one before.
	RestartBackoff time.Duration
	// RetryInterval is how soon what could not be set up (a missing
	// ConfigMap) is tried again; 1s when zero.
	RetryInterval time.Duration
	// Log, when set, is told what the agent does, a line at a time.
	Log io.Writer
}

// Agent plays the kubelet of process nodes.
type Agent struct {
	cfg      Config
	client   kubernetes.Interface
	dynamic  dynamic.Interface
	addrs    *addresses
	mountBin string
	// containerEnv is what every container starts with: the package's
	// baseEnv with the stand-ins for what a runtime's image would have
	// first on its PATH (image.go).
	containerEnv []string
	// serviceEnv is what every container gets about the API server.
	serviceEnv map[string]string
	cancel     context.CancelFunc
	// runCtx and cert are what a node starts with, at the start or when
	// revived.
	runCtx context.Context
	cert   tls.Certificate
	wg     sync.WaitGroup
	logMu  sync.Mutex

	mu    sync.Mutex
	nodes map[string]*nodeAgent
}

// A nodeAgent is the kubelet of one node.
type nodeAgent struct {
	agent *Agent
	name  string
	ip    string
	port  int
	srv   *http.Server
	stop  context.CancelFunc
	done  chan struct{}

	mu      sync.Mutex
	node    *corev1.Node
	workers map[string]*podWorker // by pod UID
}

// Start registers the nodes, keeps them Ready and runs the pods bound to
// them until Stop.
func Start(ctx context.Context, cfg Config) (*Agent, error) {
	client, err := kubernetes.NewForConfig(cfg.Rest)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg.Rest)
	if err != nil {
		return nil, err
	}
	return start(ctx, cfg, client, dyn)
}

// start is Start with the clients given (fakes, in unit tests).
func start(ctx context.Context, cfg Config, client kubernetes.Interface, dyn dynamic.Interface) (*Agent, error) {
	if cfg.Spawn == nil {
		cfg.Spawn = (*exec.Cmd).Start
	}
	if cfg.RestartBackoff == 0 {
		cfg.RestartBackoff = 10 * time.Second
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = time.Second
	}
	mountBin, err := hostMount()
	if err != nil {
		return nil, err
	}
	imageBin, err := writeImage(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("process nodes: writing the images' stand-ins: %w", err)
	}
	// Pod addresses are 127.<second>.x.y, the second octet drawn so that
	// two clusters on one machine seldom share addresses.
	n, err := rand.Int(rand.Reader, big.NewInt(250))
	if err != nil {
		return nil, err
	}
	a := &Agent{
		cfg: cfg, client: client, dynamic: dyn, mountBin: mountBin, containerEnv: imageEnv(imageBin),
		addrs:      newAddresses(byte(2+n.Int64()), cfg.ExtraHosts),
		serviceEnv: serviceEnv(host(cfg.Rest)),
		nodes:      map[string]*nodeAgent{},
	}
	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("the log servers' certificate: %w", err)
	}
	a.runCtx, a.cert = runCtx, cert
	for i, name := range cfg.Nodes {
		na, err := a.startNode(ctx, runCtx, name, net.IPv4(127, a.addrs.second, 255, byte(i+1)).String(), cert)
		if err != nil {
			a.Stop()
			return nil, err
		}
		a.mu.Lock()
		a.nodes[name] = na
		a.mu.Unlock()
	}
	return a, nil
}

func (a *Agent) logf(format string, args ...any) {
	if a.cfg.Log == nil {
		return
	}
	a.logMu.Lock()
	defer a.logMu.Unlock()
	fmt.Fprintf(a.cfg.Log, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func host(c *rest.Config) string {
	if c == nil {
		return ""
	}
	return c.Host
}

// serviceEnv is the kubernetes Service's variables a kubelet gives every
// container, pointing at the API server itself: the simulated cluster has
// no Service network.
func serviceEnv(host string) map[string]string {
	u, err := url.Parse(host)
	if err != nil || u.Hostname() == "" {
		return map[string]string{}
	}
	h, p := u.Hostname(), u.Port()
	if p == "" {
		p = "443"
	}
	return map[string]string{
		"KUBERNETES_SERVICE_HOST": h, "KUBERNETES_SERVICE_PORT": p, "KUBERNETES_SERVICE_PORT_HTTPS": p,
		"KUBERNETES_PORT": "tcp://" + net.JoinHostPort(h, p), "KUBERNETES_PORT_443_TCP": "tcp://" + net.JoinHostPort(h, p),
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp", "KUBERNETES_PORT_443_TCP_ADDR": h, "KUBERNETES_PORT_443_TCP_PORT": p,
	}
}

// Stop kills every pod's processes (without touching the API server:
// the cluster goes with the agent) and stops the nodes' kubelets.
func (a *Agent) Stop() {
	if a == nil {
		return
	}
	a.cancel()
	a.mu.Lock()
	nodes := make([]*nodeAgent, 0, len(a.nodes))
	for _, n := range a.nodes {
		nodes = append(nodes, n)
	}
	a.mu.Unlock()
	for _, n := range nodes {
		n.shutdown(true)
	}
	a.wg.Wait()
}

// Lose makes a node as lost: its kubelet stops (no more heartbeats) and
// its pods' processes are killed, while the Node and its pods stay in the
// API server for the control plane to deal with, as when a machine dies.
func (a *Agent) Lose(name string) error {
	a.mu.Lock()
	n := a.nodes[name]
	a.mu.Unlock()
	if n == nil {
		return fmt.Errorf("no process node %q", name)
	}
	n.shutdown(true)
	return nil
}

// Revive brings a lost node back, as a machine that restarts: a new
// kubelet takes the Node over (Ready again, its lease renewed) and runs
// the pods bound to it from then on. The pods it lost stay lost: the
// control plane has failed or deleted them by then, and a kubelet does not
// start a pod that has ended.
func (a *Agent) Revive(ctx context.Context, name string) error {
	a.mu.Lock()
	old := a.nodes[name]
	a.mu.Unlock()
	if old == nil {
		return fmt.Errorf("no process node %q", name)
	}
	select {
	case <-old.done:
	default:
		return fmt.Errorf("process node %q is not lost", name)
	}
	n, err := a.startNode(ctx, a.runCtx, name, old.ip, a.cert)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.nodes[name] = n
	a.mu.Unlock()
	return nil
}

func (a *Agent) startNode(ctx, runCtx context.Context, name, ip string, cert tls.Certificate) (*nodeAgent, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, fmt.Errorf("node %s: listening on %s: %w", name, ip, err)
	}
	nodeCtx, stop := context.WithCancel(runCtx)
	n := &nodeAgent{
		agent: a, name: name, ip: ip, port: l.Addr().(*net.TCPAddr).Port,
		stop: stop, done: make(chan struct{}), workers: map[string]*podWorker{},
	}
	n.srv = &http.Server{Handler: n.handler(), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = n.srv.ServeTLS(l, "", "") }()
	if err := n.register(ctx); err != nil {
		stop()
		n.srv.Close()
		return nil, err
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(n.done)
		n.run(nodeCtx)
	}()
	return n, nil
}

func (n *nodeAgent) nodeObject() *corev1.Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.node
}

// register creates the Node (or takes it over) with its status.
func (n *nodeAgent) register(ctx context.Context) error {
	a := n.agent
	capacity := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}
	var err error
	if capacity[corev1.ResourceCPU], err = resource.ParseQuantity(a.cfg.CPU); err != nil {
		return fmt.Errorf("process nodes: cpu %q: %w", a.cfg.CPU, err)
	}
	if capacity[corev1.ResourceMemory], err = resource.ParseQuantity(a.cfg.Memory); err != nil {
		return fmt.Errorf("process nodes: memory %q: %w", a.cfg.Memory, err)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.name,
			Labels: map[string]string{
				"kubernetes.io/hostname": n.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				NodeLabel: "true",
			},
		},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: NodeTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
	}
	nodes := a.client.CoreV1().Nodes()
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// A revived node's kubelet, as a restarted one, takes over the
		// Node it registered before.
		created, err = nodes.Get(ctx, n.name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("creating node %s: %w", n.name, err)
	}
	// The control plane writes a new Node too (the node lifecycle and
	// taint controllers): the first status goes on its latest version.
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		created.Status = n.status(capacity, nil)
		updated, err := nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if latest, getErr := nodes.Get(ctx, n.name, metav1.GetOptions{}); getErr == nil {
				created = latest
			}
			return err
		}
		if err == nil {
			created = updated
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s: writing its status: %w", n.name, err)
	}
	n.mu.Lock()
	n.node = created
	n.mu.Unlock()
	return n.renewLease(ctx)
}

func (n *nodeAgent) status(capacity corev1.ResourceList, old []corev1.NodeCondition) corev1.NodeStatus {
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, o := range old {
			if o.Type == t && o.Status == s {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		return c
	}
	return corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity.DeepCopy(), Phase: corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "the simulated cluster's process-node agent is posting ready status"),
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", ""),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", ""),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", ""),
		},
		// Only an InternalIP: the API server reaches the first address
		// of its preferred types, and a Hostname would not resolve.
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.ip}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(n.port)}},
		NodeInfo: corev1.NodeSystemInfo{
			Architecture: "amd64", OperatingSystem: "linux", KubeletVersion: "v1.37.2-procnode",
			ContainerRuntimeVersion: "procnode://0", OSImage: "the host's root filesystem",
		},
	}
}

// renewLease creates or renews the node's Lease in kube-node-lease.
func (n *nodeAgent) renewLease(ctx context.Context) error {
	leases := n.agent.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node := n.nodeObject()
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: corev1.NamespaceNodeLease, OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
			}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(n.name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now},
		}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// run heartbeats the node and runs the pods bound to it.
func (n *nodeAgent) run(ctx context.Context) {
	a := n.agent
	factory := informers.NewSharedInformerFactoryWithOptions(a.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", n.name).String()
	}))
	inf := factory.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.podChanged(ctx, obj) },
		UpdateFunc: func(_, obj any) { n.podChanged(ctx, obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				n.podDeleted(pod)
			}
		},
	})
	nodeInf := informers.NewSharedInformerFactoryWithOptions(a.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", n.name).String()
	}))
	_, _ = nodeInf.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		// A deleted Node is a removed machine: its pods' processes go.
		DeleteFunc: func(any) {
			a.logf("node %s: deleted; killing its pods' processes", n.name)
			go n.shutdown(true)
		},
	})
	factory.Start(ctx.Done())
	nodeInf.Start(ctx.Done())
	lease := time.NewTicker(10 * time.Second)
	defer lease.Stop()
	status := time.NewTicker(time.Minute)
	defer status.Stop()
	for {
		select {
		case <-ctx.Done():
			factory.Shutdown()
			nodeInf.Shutdown()
			return
		case <-lease.C:
			if err := n.renewLease(ctx); err != nil && ctx.Err() == nil {
				a.logf("node %s: renewing its lease: %v", n.name, err)
			}
		case <-status.C:
			if err := n.heartbeat(ctx); err != nil && ctx.Err() == nil {
				a.logf("node %s: writing its status: %v", n.name, err)
			}
		}
	}
}

func (n *nodeAgent) heartbeat(ctx context.Context) error {
	nodes := n.agent.client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	node.Status = n.status(node.Status.Capacity, node.Status.Conditions)
	node, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if err == nil {
		n.mu.Lock()
		n.node = node
		n.mu.Unlock()
	}
	return err
}

func (n *nodeAgent) podChanged(ctx context.Context, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := n.workers[string(pod.UID)]; w != nil {
		w.update(pod)
		return
	}
	if n.workers == nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil {
		// A pod that ended before the agent saw it, or a node shut down.
		if pod.DeletionTimestamp != nil && n.workers != nil {
			_ = n.agent.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		}
		return
	}
	w := newPodWorker(n, pod)
	n.workers[string(pod.UID)] = w
	n.agent.logf("node %s: pod %s/%s bound", n.name, pod.Namespace, pod.Name)
	n.agent.wg.Add(1)
	go func() {
		defer n.agent.wg.Done()
		w.run(ctx)
		n.mu.Lock()
		if n.workers != nil && n.workers[string(pod.UID)] == w {
			delete(n.workers, string(pod.UID))
		}
		n.mu.Unlock()
	}()
}

func (n *nodeAgent) podDeleted(pod *corev1.Pod) {
	n.mu.Lock()
	w := n.workers[string(pod.UID)]
	n.mu.Unlock()
	if w != nil {
		w.remove(false)
	}
}

// worker finds the worker of a pod by namespace and name.
func (n *nodeAgent) worker(namespace, name string) *podWorker {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, w := range n.workers {
		if p := w.current(); p.Namespace == namespace && p.Name == name {
			return w
		}
	}
	return nil
}

// shutdown stops the node's kubelet and kills its pods' processes.
func (n *nodeAgent) shutdown(lost bool) {
	n.mu.Lock()
	workers := n.workers
	n.workers = nil
	n.mu.Unlock()
	if workers == nil {
		return
	}
	for _, w := range workers {
		w.remove(lost)
	}
	for _, w := range workers {
		<-w.finished
	}
	n.stop()
	_ = n.srv.Close()
	<-n.done
}

// configMap and secret read what pods refer to (the objects interface).
func (a *Agent) configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return a.client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (a *Agent) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return a.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

// token asks TokenRequest for a token of the pod's service account bound
// to the pod (the tokens interface).
func (a *Agent) token(ctx context.Context, pod *corev1.Pod, audience string, expirationSeconds int64) (string, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &expirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if audience != "" {
		req.Spec.Audiences = []string{audience}
	}
	tr, err := a.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a token of service account %s/%s: %w", pod.Namespace, sa, err)
	}
	return tr.Status.Token, nil
}

var jobSetResource = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}

// reserveJobSet gives every pod hostname of the pod's JobSet its address
// before the first of them starts, so that all resolve from every pod
// whenever each starts.
func (a *Agent) reserveJobSet(ctx context.Context, pod *corev1.Pod) error {
	name := pod.Labels[jobsetv1alpha2.JobSetNameKey]
	if name == "" || pod.Spec.Subdomain == "" {
		return nil
	}
	u, err := a.dynamic.Resource(jobSetResource).Namespace(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading its JobSet %s: %w", name, err)
	}
	js := &jobsetv1alpha2.JobSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, js); err != nil {
		return fmt.Errorf("reading its JobSet %s: %w", name, err)
	}
	return a.addrs.reserve(pod.Namespace, pod.Spec.Subdomain, jobSetHostnames(js)...)
}

// jobSetHostnames are the hostnames of a JobSet's pods:
// <jobset>-<replicatedJob>-<job index>-<completion index>.
func jobSetHostnames(js *jobsetv1alpha2.JobSet) []string {
	var names []string
	for _, rj := range js.Spec.ReplicatedJobs {
		pods := int32(1)
		if p := rj.Template.Spec.Parallelism; p != nil {
			pods = *p
		}
		if c := rj.Template.Spec.Completions; c != nil && *c > pods {
			pods = *c
		}
		for j := int32(0); j < rj.Replicas; j++ {
			for i := int32(0); i < pods; i++ {
				names = append(names, fmt.Sprintf("%s-%s-%d-%d", js.Name, rj.Name, j, i))
			}
		}
	}
	return names
}
