package integration

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// reportingJob is a TrainJob with its JobSet, and one trainer pod created
// as the JobSet controller would (there is no kubelet nor JobSet
// controller here): what a training container's token is bound to.
type reportingJob struct {
	c        client.Client
	ns, name string
	job      *trainer.TrainJob
	pod      *corev1.Pod
}

// newReportingJob creates the namespace's service account (no controller
// makes it here), a runtime, a TrainJob, and a pod of its JobSet.
func newReportingJob(ns, name string) reportingJob {
	GinkgoHelper()
	return newReportingJobIn(k8sClient, ns, name)
}

// newReportingJobIn is newReportingJob on the API server of c.
func newReportingJobIn(c client.Client, ns, name string) reportingJob {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
	if err := c.Create(ctx, sa); err != nil {
		Expect(err.Error()).To(ContainSubstring("already exists"))
	}
	rt := torchRuntime(ns, "torch-"+name, false)
	// A controller just started may not serve admission yet.
	Eventually(func() error { return c.Create(ctx, rt) }).Should(Succeed())
	job := trainJob(ns, name, rt.Name)
	Eventually(func() error { return c.Create(ctx, job) }).Should(Succeed())
	jobset := &jobsetv1alpha2.JobSet{}
	Eventually(func() error { return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, jobset) }).Should(Succeed())
	return reportingJob{c: c, ns: ns, name: name, job: job, pod: createTrainerPodIn(c, ns, name+"-node-0-0", jobset)}
}

// createTrainerPod creates a pod of jobset as the JobSet and Job
// controllers would: controlled by a Job that the JobSet controls, with
// the JobSet's labels.
func createTrainerPod(ns, name string, jobset *jobsetv1alpha2.JobSet) *corev1.Pod {
	GinkgoHelper()
	return createTrainerPodIn(k8sClient, ns, name, jobset)
}

func createTrainerPodIn(c client.Client, ns, name string, jobset *jobsetv1alpha2.JobSet) *corev1.Pod {
	GinkgoHelper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobset.Name + "-node-0", OwnerReferences: []metav1.OwnerReference{
			*metav1.NewControllerRef(jobset, jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet")),
		}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "node", Image: "busybox"}},
		}}},
	}
	if err := c.Create(ctx, job); err != nil {
		Expect(err.Error()).To(ContainSubstring("already exists"))
		Expect(c.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
	}
	return createPodOf(c, ns, name, job, batchv1.SchemeGroupVersion.WithKind("Job"), map[string]string{
		jobsetv1alpha2.JobSetNameKey: jobset.Name, jobsetv1alpha2.JobSetUIDKey: string(jobset.UID),
	})
}

// createPodOf creates a pod that owner controls, with labels.
func createPodOf(c client.Client, ns, name string, owner metav1.Object, kind schema.GroupVersionKind, labels map[string]string) *corev1.Pod {
	GinkgoHelper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{ServiceAccountName: "default", Containers: []corev1.Container{{Name: "node", Image: "busybox"}}},
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, kind)}
	}
	Expect(c.Create(ctx, pod)).To(Succeed())
	return pod
}

// podToken asks the API server, as a kubelet does, for a token of the
// pod's service account bound to the pod, with the given audience.
func podToken(pod *corev1.Pod, audience string) string {
	GinkgoHelper()
	return podTokenIn(k8sClient, pod, audience)
}

func podTokenIn(c client.Client, pod *corev1.Pod, audience string) string {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Spec.ServiceAccountName}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         []string{audience},
		ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	Expect(c.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	return tr.Status.Token
}

func (r reportingJob) token() string {
	return podTokenIn(r.c, r.pod, trainer.StatusTokenAudience(r.ns, r.name))
}

// statusClient trusts the CA of the endpoint's certificate only.
func statusClient() *http.Client {
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(testEnv.WebhookInstallOptions.LocalServingCAData)).To(BeTrue())
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

type answer struct {
	code       int
	body       string
	retryAfter string
}

// post sends body to the TrainJob's status endpoint, as the Kubeflow SDK
// does, with token as bearer token (none when empty).
func post(ns, name, token string, body []byte) answer {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodPost, "https://"+statusAddr+trainer.StatusPath(ns, name), bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := statusClient().Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return answer{code: resp.StatusCode, body: string(data), retryAfter: resp.Header.Get("Retry-After")}
}

func progressBody(percent, remaining int32, metrics ...trainer.Metric) []byte {
	data, err := json.Marshal(trainer.UpdateTrainJobStatusRequest{TrainerStatus: &trainer.TrainerStatus{
		ProgressPercentage: ptr.To(percent), EstimatedRemainingSeconds: ptr.To(remaining),
		Metrics: metrics, LastUpdatedTime: metav1.NewTime(time.Now().Truncate(time.Second)),
	}})
	Expect(err).NotTo(HaveOccurred())
	return data
}

// trainerStatusOf reads the TrainJob's status.trainerStatus.
func trainerStatusOf(ns, name string) func(Gomega) *trainer.TrainerStatus {
	return func(g Gomega) *trainer.TrainerStatus { return trainJobOf(ns, name)(g).Status.TrainerStatus }
}

// waitInterval lets the TrainJob's update interval (1s) pass.
func waitInterval() { time.Sleep(1100 * time.Millisecond) }

var _ = Describe("the status endpoint", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("tells the trainer containers where to report, and publishes the CA once per namespace", func() {
		newReportingJob(ns, "told")
		js := jobSetOf(ns, "told")(Default)
		for _, rj := range js.Spec.ReplicatedJobs {
			pod := rj.Template.Spec.Template.Spec
			env := map[string]string{}
			for _, c := range pod.Containers {
				for _, e := range c.Env {
					env[e.Name] = e.Value
				}
			}
			if rj.Name != "node" {
				Expect(env).NotTo(HaveKey(trainer.StatusURLEnv), "replicatedJob %s is not the trainer step", rj.Name)
				continue
			}
			// The URL names the port the status endpoint serves on (the
			// suite's, set after the configuration was loaded): the
			// plugin gets it from the host's facts, not from args the
			// loader wrote.
			_, port, err := net.SplitHostPort(statusAddr)
			Expect(err).NotTo(HaveOccurred())
			Expect(env).To(HaveKeyWithValue(trainer.StatusURLEnv, "https://trainforge-webhook-service.trainforge-system.svc:"+port+trainer.StatusPath(ns, "told")))
			Expect(env).To(HaveKeyWithValue(trainer.StatusCACertEnv, "/var/run/secrets/kubeflow/trainer/ca.crt"))
			Expect(env).To(HaveKeyWithValue(trainer.StatusTokenEnv, "/var/run/secrets/kubeflow/trainer/token"))
			Expect(pod.Volumes).To(ContainElement(HaveField("VolumeSource.Projected.Sources", ContainElement(
				HaveField("ServiceAccountToken", PointTo(HaveField("Audience", trainer.StatusTokenAudience(ns, "told"))))))))
		}
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "trainforge-status-ca"}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKeyWithValue("ca.crt", string(testEnv.WebhookInstallOptions.LocalServingCAData)))
		}).Should(Succeed())

		By("a second TrainJob of the namespace costs no write of the CA")
		cm := &corev1.ConfigMap{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "trainforge-status-ca"}, cm)).To(Succeed())
		newReportingJob(ns, "told-too")
		Consistently(func(g Gomega) string {
			again := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "trainforge-status-ca"}, again)).To(Succeed())
			return again.ResourceVersion
		}).Should(Equal(cm.ResourceVersion))
	})

	It("applies the progress a pod of the TrainJob posts, and kubectl get shows it", func() {
		r := newReportingJob(ns, "accepted")
		a := post(ns, "accepted", r.token(), progressBody(40, 120, trainer.Metric{Name: "loss", Value: "0.25"}, trainer.Metric{Name: "phase", Value: "warmup"}))
		Expect(a.code).To(Equal(http.StatusOK), a.body)
		var answered trainer.UpdateTrainJobStatusRequest
		Expect(json.Unmarshal([]byte(a.body), &answered)).To(Succeed())
		Expect(answered.TrainerStatus.ProgressPercentage).To(Equal(ptr.To[int32](40)))

		ts := trainerStatusOf(ns, "accepted")(Default)
		Expect(ts).NotTo(BeNil())
		Expect(ts.ProgressPercentage).To(Equal(ptr.To[int32](40)))
		Expect(ts.EstimatedRemainingSeconds).To(Equal(ptr.To[int32](120)))
		Expect(ts.Metrics).To(Equal([]trainer.Metric{{Name: "loss", Value: "0.25"}, {Name: "phase", Value: "warmup"}}))

		By("with a field manager of its own that owns trainerStatus only")
		job := trainJobOf(ns, "accepted")(Default)
		var owned []string
		for _, mf := range job.ManagedFields {
			if mf.Manager == "trainforge-status-server" {
				Expect(mf.Operation).To(Equal(metav1.ManagedFieldsOperationApply))
				Expect(mf.Subresource).To(Equal("status"))
				fields := map[string]map[string]any{}
				Expect(json.Unmarshal(mf.FieldsV1.Raw, &fields)).To(Succeed())
				for k := range fields["f:status"] {
					owned = append(owned, k)
				}
			}
		}
		Expect(owned).To(ConsistOf("f:trainerStatus"))

		By("in the table kubectl get prints")
		Eventually(func(g Gomega) {
			table := trainJobTable(g, ns)
			g.Expect(table.Rows).To(HaveLen(1))
			g.Expect(table.Rows[0].Cells[4:6]).To(Equal([]any{float64(40), float64(120)}), "after Name, Runtime, State and Nodes")
		}).Should(Succeed())

		By("in the metrics: progress, time left, and the numeric metrics")
		labels := map[string]string{"namespace": ns, "trainjob": "accepted"}
		Eventually(func(g Gomega) {
			g.Expect(gaugeValue(g, "trainforge_trainjob_progress_percent", labels)).To(Equal(ptr.To(40.0)))
			g.Expect(gaugeValue(g, "trainforge_trainjob_estimated_remaining_seconds", labels)).To(Equal(ptr.To(120.0)))
			g.Expect(gaugeValue(g, "trainforge_trainjob_reported_metric", withMetric(labels, "loss"))).To(Equal(ptr.To(0.25)))
			g.Expect(gaugeValue(g, "trainforge_trainjob_reported_metric", withMetric(labels, "phase"))).To(BeNil(), "not a number")
		}).Should(Succeed())

		By("a later post replaces it whole")
		waitInterval()
		Expect(post(ns, "accepted", r.token(), progressBody(90, 10)).code).To(Equal(http.StatusOK))
		ts = trainerStatusOf(ns, "accepted")(Default)
		Expect(ts.ProgressPercentage).To(Equal(ptr.To[int32](90)))
		Expect(ts.Metrics).To(BeEmpty())
		Eventually(func(g Gomega) {
			g.Expect(gaugeValue(g, "trainforge_trainjob_progress_percent", labels)).To(Equal(ptr.To(90.0)))
			g.Expect(gaugeValue(g, "trainforge_trainjob_reported_metric", withMetric(labels, "loss"))).To(BeNil())
		}).Should(Succeed())

		By("its series go with the TrainJob")
		Expect(k8sClient.Delete(ctx, trainJobOf(ns, "accepted")(Default))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(gaugeValue(g, "trainforge_trainjob_progress_percent", labels)).To(BeNil())
			g.Expect(gaugeValue(g, "trainforge_trainjob_estimated_remaining_seconds", labels)).To(BeNil())
		}).Should(Succeed())
	})

	It("refuses tokens of other pods, namespaces and audiences, expired ones and none", func() {
		r := newReportingJob(ns, "guarded")
		other := newReportingJob(ns, "other")
		body := progressBody(50, 60)

		By("no token")
		Expect(post(ns, "guarded", "", body).code).To(Equal(http.StatusForbidden))
		By("a token that is not a token")
		Expect(post(ns, "guarded", "not-a-jwt", body).code).To(Equal(http.StatusForbidden))
		By("another audience: the other TrainJob's, from a pod of this one")
		Expect(post(ns, "guarded", podToken(r.pod, trainer.StatusTokenAudience(ns, "other")), body).code).To(Equal(http.StatusForbidden))
		By("a pod of another TrainJob with a token for this one's audience (Kubeflow Trainer accepts it)")
		Expect(post(ns, "guarded", podToken(other.pod, trainer.StatusTokenAudience(ns, "guarded")), body).code).To(Equal(http.StatusForbidden))
		By("a pod of no JobSet")
		stray := createPodOf(k8sClient, ns, "stray", nil, schema.GroupVersionKind{}, nil)
		Expect(post(ns, "guarded", podToken(stray, trainer.StatusTokenAudience(ns, "guarded")), body).code).To(Equal(http.StatusForbidden))
		By("a pod with the JobSet's labels that no Job of the TrainJob controls: labels are anyone's to set")
		js := jobSetOf(ns, "guarded")(Default)
		labelled := createPodOf(k8sClient, ns, "labelled", nil, schema.GroupVersionKind{}, map[string]string{
			jobsetv1alpha2.JobSetNameKey: js.Name, jobsetv1alpha2.JobSetUIDKey: string(js.UID),
		})
		Expect(post(ns, "guarded", podToken(labelled, trainer.StatusTokenAudience(ns, "guarded")), body).code).To(Equal(http.StatusForbidden))
		By("a pod of a Job that names the TrainJob's JobSet with another uid (an earlier JobSet of the same name)")
		earlier := js.DeepCopy()
		earlier.UID = "0e4b1d5e-0000-4000-8000-000000000000"
		earlierJob := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "earlier", OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(earlier, jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet"))}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "node", Image: "busybox"}},
			}}},
		}
		Expect(k8sClient.Create(ctx, earlierJob)).To(Succeed())
		stale := createPodOf(k8sClient, ns, "stale", earlierJob, batchv1.SchemeGroupVersion.WithKind("Job"), nil)
		Expect(post(ns, "guarded", podToken(stale, trainer.StatusTokenAudience(ns, "guarded")), body).code).To(Equal(http.StatusForbidden))
		By("a pod of another namespace, with this TrainJob's audience")
		ns2 := newNamespace()
		elsewhere := newReportingJob(ns2, "guarded")
		Expect(post(ns, "guarded", podToken(elsewhere.pod, trainer.StatusTokenAudience(ns, "guarded")), body).code).To(Equal(http.StatusForbidden))
		By("an expired token, signed by the cluster's key, while the same one unexpired is accepted")
		Expect(post(ns, "guarded", signedPodToken(r, -time.Minute), body).code).To(Equal(http.StatusForbidden))
		Expect(trainerStatusOf(ns, "guarded")(Default)).To(BeNil(), "a refused post wrote the status")
		Expect(post(ns, "guarded", signedPodToken(r, time.Hour), body).code).To(Equal(http.StatusOK))

		By("a token of a pod deleted since")
		gone := createTrainerPod(ns, "gone", jobSetOf(ns, "guarded")(Default))
		token := podToken(gone, trainer.StatusTokenAudience(ns, "guarded"))
		Expect(k8sClient.Delete(ctx, gone, client.GracePeriodSeconds(0))).To(Succeed())
		waitInterval()
		Expect(post(ns, "guarded", token, body).code).To(Equal(http.StatusForbidden))
	})

	It("answers 404, 413 and 422 as Kubeflow Trainer does, with the API server's message", func() {
		r := newReportingJob(ns, "checked")
		token := r.token()
		By("a TrainJob that does not exist (the token is for its audience)")
		Expect(post(ns, "ghost", podToken(r.pod, trainer.StatusTokenAudience(ns, "ghost")), progressBody(1, 1)).code).To(Equal(http.StatusNotFound))
		By("more than 64 KiB")
		big := []byte(`{"trainerStatus":{"metrics":[{"name":"x","value":"` + strings.Repeat("y", 70<<10) + `"}]}}`)
		Expect(post(ns, "checked", token, big).code).To(Equal(http.StatusRequestEntityTooLarge))
		By("not JSON")
		a := post(ns, "checked", token, []byte(`{"trainerStatus": {`))
		Expect(a.code).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.body).To(ContainSubstring("Invalid payload"))
		By("out of range: the API server's message")
		a = post(ns, "checked", token, progressBody(150, -1))
		Expect(a.code).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.body).To(ContainSubstring("status.trainerStatus.progressPercentage"))
		Expect(a.body).To(ContainSubstring("should be less than or equal to 100"))
		Expect(a.body).To(ContainSubstring("status.trainerStatus.estimatedRemainingSeconds"))
		By("no lastUpdatedTime")
		a = post(ns, "checked", token, []byte(`{"trainerStatus":{"progressPercentage":5}}`))
		Expect(a.code).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.body).To(ContainSubstring("lastUpdatedTime is required when trainerStatus is present"))
		By("too many metrics")
		var metrics []trainer.Metric
		for i := range 257 {
			metrics = append(metrics, trainer.Metric{Name: fmt.Sprintf("m%d", i), Value: "1"})
		}
		a = post(ns, "checked", token, progressBody(5, 5, metrics...))
		Expect(a.code).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.body).To(ContainSubstring("must have at most 256 items"))
		Expect(trainerStatusOf(ns, "checked")(Default)).To(BeNil())
		By("a refused update does not use up the interval")
		Expect(post(ns, "checked", token, progressBody(5, 5)).code).To(Equal(http.StatusOK))
	})

	It("refuses a burst beyond one update per interval, and applies one", func() {
		r := newReportingJob(ns, "burst")
		token := r.token()
		var mu sync.Mutex
		codes := map[int]int{}
		var retryAfter []string
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				a := post(ns, "burst", token, progressBody(int32(10+i), 100))
				mu.Lock()
				defer mu.Unlock()
				codes[a.code]++
				if a.code == http.StatusTooManyRequests {
					retryAfter = append(retryAfter, a.retryAfter)
				}
			}()
		}
		wg.Wait()
		Expect(codes).To(Equal(map[int]int{http.StatusOK: 1, http.StatusTooManyRequests: 7}))
		Expect(retryAfter).To(HaveEach("1"))
		// The applied post opens the TrainJob's goodput account: one write
		// of the goodput controller, which the refused posts must not add to.
		Eventually(goodputOf(ns, "burst")).ShouldNot(BeNil())
		job := trainJobOf(ns, "burst")(Default)
		Expect(*job.Status.TrainerStatus.ProgressPercentage).To(BeNumerically(">=", 10))
		rv := job.ResourceVersion
		By("nothing else was written")
		Consistently(func(g Gomega) string { return trainJobOf(ns, "burst")(g).ResourceVersion }, 500*time.Millisecond).Should(Equal(rv))
		By("after the interval, the next is applied")
		waitInterval()
		Expect(post(ns, "burst", token, progressBody(99, 1)).code).To(Equal(http.StatusOK))
		Expect(*trainerStatusOf(ns, "burst")(Default).ProgressPercentage).To(Equal(int32(99)))
	})

	It("never loses Complete to posts racing the completion, nor the progress to the reconciler", func() {
		r := newReportingJob(ns, "racing")
		token := r.token()
		stop := make(chan struct{})
		posted := make(chan int32, 100)
		go func() {
			defer GinkgoRecover()
			for p := int32(1); ; p++ {
				select {
				case <-stop:
					close(posted)
					return
				default:
				}
				if post(ns, "racing", token, progressBody(p, 100-p)).code == http.StatusOK {
					posted <- p
				}
				time.Sleep(250 * time.Millisecond)
			}
		}()
		time.Sleep(1500 * time.Millisecond)
		setJobSetStatus(ns, "racing", jobsetv1alpha2.JobSetStatus{
			Conditions: []metav1.Condition{{
				Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted",
				Message: "jobset completed successfully", LastTransitionTime: metav1.Now(),
			}},
		})
		time.Sleep(2500 * time.Millisecond)
		close(stop)
		var last int32
		for p := range posted {
			last = p
		}
		Expect(last).To(BeNumerically(">", 1), "no post was applied after the completion")
		Eventually(func(g Gomega) {
			job := trainJobOf(ns, "racing")(g)
			g.Expect(job.Status.Conditions).To(ContainElement(And(HaveField("Type", trainer.TrainJobComplete), HaveField("Status", metav1.ConditionTrue))))
			g.Expect(job.Status.TrainerStatus).NotTo(BeNil())
			g.Expect(*job.Status.TrainerStatus.ProgressPercentage).To(Equal(last))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			job := trainJobOf(ns, "racing")(g)
			g.Expect(job.Status.Conditions).To(ContainElement(And(HaveField("Type", trainer.TrainJobComplete), HaveField("Status", metav1.ConditionTrue))))
			g.Expect(*job.Status.TrainerStatus.ProgressPercentage).To(Equal(last))
		}).Should(Succeed())
	})
})

// gaugeValue reads a gauge of the controller's registry, what /metrics
// serves; nil when the series does not exist.
func gaugeValue(g Gomega, name string, labels map[string]string) *float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue series
				}
			}
			return ptr.To(m.GetGauge().GetValue())
		}
	}
	return nil
}

func withMetric(labels map[string]string, metric string) map[string]string {
	out := map[string]string{"metric": metric}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// signedPodToken makes a token as the API server makes one for r's pod
// and r's audience, expiring after ttl (in the past when negative), signed
// with the service-account key envtest gives the API server: the only way
// to get an expired token, since a TokenRequest lasts at least 10 minutes.
func signedPodToken(r reportingJob, ttl time.Duration) string {
	GinkgoHelper()
	apiServer := testEnv.ControlPlane.GetAPIServer()
	keyPEM, err := os.ReadFile(filepath.Join(apiServer.CertDir, "sa-signer.key"))
	Expect(err).NotTo(HaveOccurred())
	block, _ := pem.Decode(keyPEM)
	Expect(block).NotTo(BeNil())
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	key, ok := parsed.(*ecdsa.PrivateKey)
	Expect(ok).To(BeTrue(), "envtest's service-account key is not ECDSA")
	sa := &corev1.ServiceAccount{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "default"}, sa)).To(Succeed())
	now := time.Now()
	claims := map[string]any{
		"iss": apiServer.SecureServing.URL("https", "/").String(),
		"aud": []string{trainer.StatusTokenAudience(r.ns, r.name)},
		"sub": "system:serviceaccount:" + r.ns + ":default",
		"iat": now.Add(-2 * time.Hour).Unix(), "nbf": now.Add(-2 * time.Hour).Unix(), "exp": now.Add(ttl).Unix(),
		"kubernetes.io": map[string]any{
			"namespace":      r.ns,
			"serviceaccount": map[string]any{"name": "default", "uid": string(sa.UID)},
			"pod":            map[string]any{"name": r.pod.Name, "uid": string(r.pod.UID)},
		},
	}
	enc := func(v any) string {
		data, err := json.Marshal(v)
		Expect(err).NotTo(HaveOccurred())
		return base64.RawURLEncoding.EncodeToString(data)
	}
	signing := enc(map[string]string{"alg": "ES256", "typ": "JWT"}) + "." + enc(claims)
	digest := sha256.Sum256([]byte(signing))
	rr, ss, err := ecdsa.Sign(rand.Reader, key, digest[:])
	Expect(err).NotTo(HaveOccurred())
	sig := make([]byte, 64)
	rr.FillBytes(sig[:32])
	ss.FillBytes(sig[32:])
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}
