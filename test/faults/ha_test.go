package faults

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/test/load/harness"
)

// The lease and the certificate Secret, as the controller names them by
// default.
const (
	leaseName     = "trainforge-controller.trainforge.dev"
	certSecret    = "trainforge-webhook-server-cert"
	vwcName       = "trainforge-validating-webhook-configuration"
	webhookLabel  = "faults.trainforge.dev/webhook"
	trainJobPath  = "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
	leaseDuration = 15 * time.Second // controller-runtime's default
	retryPeriod   = 2 * time.Second  // controller-runtime's default
	// jitterFactor is client-go's leaderelection.JitterFactor: a
	// candidate tries the lease every retryPeriod to retryPeriod × 2.2.
	jitterFactor = 1.2
)

// takeoverBound is the longest a standby may take after the leader dies:
// it sees the leader's last renewal up to one jittered retry late, counts
// the lease duration from when it saw it, and tries again up to one
// jittered retry after the lease expired.
const takeoverBound = leaseDuration + 2*time.Duration(float64(retryPeriod)*(1+jitterFactor))

// TestLeaderElection runs two replicas with leader election, each with its
// own webhook server (own port, own certDir, certManagement sharing one
// Secret), each as its own user of the API server. It checks that both
// webhook servers answer, kills the leader (SIGKILL) 2 s into the storm,
// and checks that the standby takes over within the lease duration plus a
// retry period (jittered, twice: takeoverBound), that the two never wrote at the same time (the API
// server's audit log: every write of the standby's user in the storm's
// namespace comes after the last of the leader's, and after it took the
// lease; and the standby's reconcile counter is 0 until then), and that
// nothing is duplicated (the storm's usual checks).
func TestLeaderElection(t *testing.T) {
	base := baselineMakespan(t)
	const a, b = "replica-a", "replica-b"
	e := newEnv(t, "leader-election", setup{leaderElection: true, webhooks: true}, a, b)
	portA, portB := freePort(t), freePort(t)
	e.webhookPorts = map[string]int{a: portA, b: portB}
	e.createWebhookConfiguration(portA)

	ra := e.startController(a, e.cl.Kubeconfigs[a])
	holder := e.waitLease("", 60*time.Second)
	rb := e.startController(b, e.cl.Kubeconfigs[b])

	ca := e.webhookCA()
	for _, r := range []*controllerProc{ra, rb} {
		if err := checkWebhook(ca, r.webhookPort); err != nil {
			t.Errorf("the webhook server of %s: %v", r.name, err)
		}
	}
	if n, err := reconciles(rb.metrics); err != nil || n != 0 {
		t.Errorf("the standby's reconcile count before the storm: %v, %v; want 0", n, err)
	}

	expect := everyNormal
	w := e.startWatcher(expect)
	var killedAt, tookAt time.Time
	var standbyReconciles float64
	m := e.storm(w, func(start time.Time) {
		sleepUntil(start.Add(faultAt))
		n, err := reconciles(rb.metrics)
		if err != nil {
			t.Error(err)
		}
		standbyReconciles = n
		killedAt = time.Now()
		e.kill(ra)
		l := e.waitLeaseNot(holder, 2*time.Minute)
		tookAt = time.Now()
		if l.Spec.AcquireTime != nil && l.Spec.AcquireTime.After(killedAt) {
			tookAt = l.Spec.AcquireTime.Time
		}
	})
	if standbyReconciles != 0 {
		t.Errorf("the standby reconciled %v TrainJobs while the leader ran", standbyReconciles)
	}
	takeover := tookAt.Sub(killedAt)
	if !killedAt.IsZero() && takeover > takeoverBound+time.Second {
		// Leader election's own promise, checked with a second of slack
		// for a busy machine.
		t.Errorf("the standby took over %.2f s after the leader died; the bound is %v (lease %v, retry period %v jittered by %v, twice)", takeover.Seconds(), takeoverBound, leaseDuration, retryPeriod, jitterFactor)
	}
	if err := checkWebhook(ca, rb.webhookPort); err != nil {
		t.Errorf("the webhook server of %s after the takeover: %v", b, err)
	}
	r := e.finish(w, expect)

	e.stopCl() // flushes the audit log
	writes, err := auditWrites(e.cl.AuditLog, namespace)
	if err != nil {
		t.Fatal(err)
	}
	wa, wb := writes[a], writes[b]
	if len(wa) == 0 || len(wb) == 0 {
		t.Errorf("writes in the storm's namespace: %s %d, %s %d; want both", a, len(wa), b, len(wb))
	} else {
		lastA, firstB := wa[len(wa)-1], wb[0]
		if !lastA.Before(firstB) {
			t.Errorf("both replicas wrote during the same time: %s's last write at %s, %s's first at %s", a, lastA.Format(time.StampMicro), b, firstB.Format(time.StampMicro))
		}
		if firstB.Before(killedAt) {
			t.Errorf("%s wrote at %s, before the leader was killed at %s", b, firstB.Format(time.StampMicro), killedAt.Format(time.StampMicro))
		}
		if lastA.After(killedAt.Add(time.Second)) {
			t.Errorf("%s wrote at %s, after it was killed at %s", a, lastA.Format(time.StampMicro), killedAt.Format(time.StampMicro))
		}
	}
	addFigure(figure{name: "HA: leader SIGKILLed at 2 s, standby takes over", makespan: m, base: base, peakRSS: r.peakRSS, maxEvents: r.maxEvents, maxOccurs: r.maxOccurs, cpu: r.cpu, pluginCPU: r.pluginCPU, outage: takeover,
		note: fmt.Sprintf("outage: takeover %.2f s after the kill (bound %v: lease %v + 2 jittered retries of %v); writes: leader %d, then standby %d", takeover.Seconds(), takeoverBound, leaseDuration, retryPeriod, len(wa), len(wb)), load: harness.LoadAvg()})
}

func freePort(t *testing.T) int {
	addr, err := harness.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// createWebhookConfiguration creates the validating webhook configuration
// of the install, reaching replica A at a URL, so that the controllers'
// certificate management has a caBundle to keep. It selects only objects
// labelled webhookLabel: the storm is admitted without it, so that the
// kill of replica A (there is no Service in front of the replicas here)
// does not refuse the storm's creates.
func (e *env) createWebhookConfiguration(port int) {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "webhook", "manifests.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte("---\n")), vwc); err != nil {
		e.t.Fatal(err)
	}
	vwc.Name = vwcName
	for i := range vwc.Webhooks {
		wh := &vwc.Webhooks[i]
		wh.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://localhost:%d%s", port, *wh.ClientConfig.Service.Path))}
		wh.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{webhookLabel: "on"}}
	}
	if err := e.c.Create(e.ctx, vwc); err != nil {
		e.t.Fatal(err)
	}
}

// waitLease waits for the lease to have a holder other than not.
func (e *env) waitLeaseNot(not string, timeout time.Duration) *coordinationv1.Lease {
	deadline := time.Now().Add(timeout)
	for {
		l := &coordinationv1.Lease{}
		err := e.c.Get(e.ctx, types.NamespacedName{Namespace: systemNamespace, Name: leaseName}, l)
		if err == nil && ptr.Deref(l.Spec.HolderIdentity, "") != "" && *l.Spec.HolderIdentity != not {
			return l
		}
		if time.Now().After(deadline) {
			e.t.Errorf("no new holder of lease %s/%s within %v (err %v)", systemNamespace, leaseName, timeout, err)
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLease waits for a holder and returns its identity.
func (e *env) waitLease(not string, timeout time.Duration) string {
	return ptr.Deref(e.waitLeaseNot(not, timeout).Spec.HolderIdentity, "")
}

// webhookCA waits for the CA that certManagement keeps in its Secret.
func (e *env) webhookCA() []byte {
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := &corev1.Secret{}
		if err := e.c.Get(e.ctx, types.NamespacedName{Namespace: systemNamespace, Name: certSecret}, s); err == nil && len(s.Data["ca.crt"]) > 0 {
			return s.Data["ca.crt"]
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no ca.crt in Secret %s/%s", systemNamespace, certSecret)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkWebhook sends the TrainJob webhook of the replica listening on
// port two AdmissionReviews over TLS, trusting only ca: a TrainJob whose
// runtimeRef kind is not a runtime must be denied, a good one allowed.
func checkWebhook(ca []byte, port int) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("the Secret's ca.crt is not PEM")
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}
	bad := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bad"}}
	bad.Spec.RuntimeRef = trainer.RuntimeRef{Name: "x", Kind: ptr.To("JAXRuntime")}
	good := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "good"}}
	good.Spec.RuntimeRef = trainer.RuntimeRef{Name: runtimeTorch, Kind: ptr.To(trainer.ClusterTrainingRuntimeKind), APIGroup: ptr.To(trainer.GroupVersion.Group)}
	for _, tc := range []struct {
		job   *trainer.TrainJob
		allow bool
	}{{bad, false}, {good, true}} {
		tc.job.APIVersion, tc.job.Kind = trainer.GroupVersion.String(), trainer.TrainJobKind
		raw, err := json.Marshal(tc.job)
		if err != nil {
			return err
		}
		review := admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID:       types.UID("faults-" + tc.job.Name),
				Kind:      metav1.GroupVersionKind{Group: trainer.GroupVersion.Group, Version: trainer.GroupVersion.Version, Kind: trainer.TrainJobKind},
				Resource:  metav1.GroupVersionResource{Group: trainer.GroupVersion.Group, Version: trainer.GroupVersion.Version, Resource: "trainjobs"},
				Name:      tc.job.Name,
				Namespace: namespace,
				Operation: admissionv1.Create,
				Object:    runtime.RawExtension{Raw: raw},
			},
		}
		body, err := json.Marshal(review)
		if err != nil {
			return err
		}
		var resp *http.Response
		// The replica's certificate may still be on its way to its certDir.
		for try := 0; ; try++ {
			resp, err = hc.Post(fmt.Sprintf("https://127.0.0.1:%d%s", port, trainJobPath), "application/json", bytes.NewReader(body))
			if err == nil || try == 50 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			return err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var out admissionv1.AdmissionReview
		if err := json.Unmarshal(data, &out); err != nil || out.Response == nil {
			return fmt.Errorf("%s: not an AdmissionReview (%v): %.200s", resp.Status, err, data)
		}
		if out.Response.Allowed != tc.allow {
			msg := ""
			if out.Response.Result != nil {
				msg = out.Response.Result.Message
			}
			return fmt.Errorf("TrainJob %s: allowed %t, want %t (%s)", tc.job.Name, out.Response.Allowed, tc.allow, msg)
		}
	}
	return nil
}

// reconciles is the TrainJob controller's reconcile count on a replica's
// /metrics.
func reconciles(addr string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var total float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "controller_runtime_reconcile_total{") || !strings.Contains(line, `controller="trainjob"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total, sc.Err()
}

// auditWrites returns, per user, when the API server received each of its
// writes to objects in ns, in order.
func auditWrites(path, ns string) (map[string][]time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]time.Time{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Stage string `json:"stage"`
			Verb  string `json:"verb"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				Namespace string `json:"namespace"`
			} `json:"objectRef"`
			RequestReceived time.Time `json:"requestReceivedTimestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, err
		}
		switch ev.Verb {
		case "create", "update", "patch", "delete", "deletecollection":
		default:
			continue
		}
		if ev.Stage != "ResponseComplete" || ev.ObjectRef == nil || ev.ObjectRef.Namespace != ns {
			continue
		}
		out[ev.User.Username] = append(out[ev.User.Username], ev.RequestReceived)
	}
	for _, ts := range out {
		slices.SortFunc(ts, time.Time.Compare)
	}
	return out, sc.Err()
}
