package procnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

func subdomainPod(uid, hostname string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: hostname + "-xyz", UID: types.UID("uid-" + uid)},
		Spec:       corev1.PodSpec{Hostname: hostname, Subdomain: "job"},
	}
}

func TestAddressesAreUniqueAndStayWithTheirName(t *testing.T) {
	a := newAddresses(7, nil)
	p0, p1 := subdomainPod("0", "job-node-0-0"), subdomainPod("1", "job-node-0-1")
	ip0, err := a.podIP(p0)
	if err != nil {
		t.Fatal(err)
	}
	ip1, _ := a.podIP(p1)
	if ip0.String() != "127.7.0.1" || ip1.String() != "127.7.0.2" {
		t.Errorf("addresses %s, %s; want 127.7.0.1, 127.7.0.2", ip0, ip1)
	}
	// The pod of a restart has the name, and so the address, of the pod
	// it replaces.
	again, _ := a.podIP(subdomainPod("0-again", "job-node-0-0"))
	if !again.Equal(ip0) {
		t.Errorf("the restarted pod has %s, want %s", again, ip0)
	}
	// Pods without a subdomain have addresses of their own.
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job-node-0-0", UID: "plain"}}
	if ip, _ := a.podIP(plain); ip.Equal(ip0) || ip.String() != "127.7.0.3" {
		t.Errorf("a pod without subdomain has %s", ip)
	}
	// The same hostname in another namespace is another name.
	other := subdomainPod("other", "job-node-0-0")
	other.Namespace = "ns2"
	if ip, _ := a.podIP(other); ip.Equal(ip0) {
		t.Errorf("the same hostname of another namespace has the same address %s", ip)
	}
}

func TestAddressesSkipZeroAndBroadcastOctets(t *testing.T) {
	a := newAddresses(9, nil)
	seen := map[string]bool{}
	for i := 0; i < 600; i++ {
		ip, err := a.allocate(string(rune(i)))
		if err != nil {
			t.Fatal(err)
		}
		if ip[3] == 0 || ip[3] == 255 || ip[2] == 255 || seen[ip.String()] {
			t.Fatalf("address %d is %s", i, ip)
		}
		seen[ip.String()] = true
	}
}

func TestHostsFileHasEveryPodOfTheSubdomainAndIsRewrittenInPlace(t *testing.T) {
	a := newAddresses(3, []corev1.HostAlias{{IP: "127.0.0.1", Hostnames: []string{"status.trainforge-system.svc"}}})
	p1 := subdomainPod("1", "job-node-0-1")
	if _, err := a.podIP(p1); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hosts")
	if err := a.writeHosts(p1, path); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Rank 0 appears after rank 1 started: rank 1's file gains it.
	if _, err := a.podIP(subdomainPod("0", "job-node-0-0")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("the hosts file was replaced, not rewritten: a bind mount of it would not see the change")
	}
	got := string(data)
	for _, want := range []string{
		"127.0.0.1\tlocalhost\n",
		"127.3.0.1\tjob-node-0-1.job.ns.svc.cluster.local\tjob-node-0-1.job.ns.svc\tjob-node-0-1.job.ns\tjob-node-0-1.job\tjob-node-0-1\n",
		"127.3.0.2\tjob-node-0-0.job.ns.svc.cluster.local\tjob-node-0-0.job.ns.svc\tjob-node-0-0.job.ns\tjob-node-0-0.job\n",
		"127.0.0.1\tstatus.trainforge-system.svc\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("hosts file lacks %q:\n%s", want, got)
		}
	}
	// The pod's own entry comes first, so that its hostname resolves to
	// its address.
	if strings.Index(got, "job-node-0-1") > strings.Index(got, "job-node-0-0") {
		t.Errorf("the pod's own entry is not first:\n%s", got)
	}
	a.forget(p1)
	if err := a.reserve("ns", "job", "job-node-1-0"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "job-node-1-0") {
		t.Error("a forgotten pod's hosts file is still rewritten")
	}
}

func TestJobSetHostnames(t *testing.T) {
	js := &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "train"}}
	js.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{{Name: "launcher", Replicas: 1}, {Name: "node", Replicas: 2}}
	js.Spec.ReplicatedJobs[1].Template.Spec.Parallelism = ptr.To[int32](2)
	js.Spec.ReplicatedJobs[1].Template.Spec.Completions = ptr.To[int32](2)
	got := strings.Join(jobSetHostnames(js), " ")
	want := "train-launcher-0-0 train-node-0-0 train-node-0-1 train-node-1-0 train-node-1-1"
	if got != want {
		t.Errorf("hostnames %q, want %q", got, want)
	}
}
