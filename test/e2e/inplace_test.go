package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
	"github.com/trainforge/trainforge/hack/steplog"
)

// inPlaceRestartExitCode is what the agent exits with to have its
// container restarted in place when another pod restarted.
const inPlaceRestartExitCode = 200

// A runtime whose JobSet restarts in place (JobSet's InPlaceRestart): the
// trainer container runs JobSet's in-place restart agent, which runs the
// training script behind a barrier; a retriable exit code restarts the
// container where it is (a container restart rule), and the agent holds
// the script until every pod of the job is at the same restart attempt.
// Pods keep their nodes; nothing is rescheduled.
var _ = Describe("real training processes on the process nodes: a restart in place", func() {
	var ns string
	var clientset *kubernetes.Clientset
	BeforeEach(func() { ns, clientset = prepareRealJobs() })

	It("restarts the workers of a real exit code 134 in their pods, on their nodes, from the checkpoint, and the goodput account counts the restart", func() {
		allowTheAgent(ns)
		dir := processRuntime{restartPolicy: realRestartPolicy(), inPlace: "--steps=40 --checkpoint-every=10 --min-step-seconds=0.2 --report-every-seconds=1" +
			" --fail-at-step=15 --fail-exit-code=134 --peer-lost-exit-code=134 --step-log=/checkpoints/steps.log --require-report"}.create(ns, "in-place")
		realTrainJob(ns, "in-place", "in-place", 2)

		first := map[string]corev1.Pod{} // by completion index
		Eventually(func(g Gomega) {
			pods := podsOf(g, ns, "in-place")
			g.Expect(pods).To(HaveLen(2))
			for _, p := range pods {
				g.Expect(p.Spec.NodeName).NotTo(BeEmpty())
				first[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = p
			}
		}, realJobTimeout).Should(Succeed())

		expectRealState(clientset, ns, "in-place", trainer.TrainJobComplete)
		job := withFinishedAccount(ns, "in-place")

		By("the same pods on the same nodes, each container restarted once: rank 0 for its exit 134, rank 1 for its peer's")
		pods := podsOf(Default, ns, "in-place")
		Expect(pods).To(HaveLen(2), "no pod was recreated")
		for _, p := range pods {
			index := p.Annotations[batchv1.JobCompletionIndexAnnotation]
			Expect(p.UID).To(Equal(first[index].UID), "rank %s's pod", index)
			Expect(p.Spec.NodeName).To(Equal(first[index].Spec.NodeName), "rank %s's node", index)
			Expect(p.Status.ContainerStatuses).To(HaveLen(1))
			cs := p.Status.ContainerStatuses[0]
			Expect(cs.RestartCount).To(BeEquivalentTo(1), "rank %s", index)
			Expect(cs.LastTerminationState.Terminated).NotTo(BeNil(), "rank %s", index)
			// Rank 1 ends on its own (its peer gone: 134), or its agent
			// ends it for the restart in place the JobSet asks for.
			Expect(cs.LastTerminationState.Terminated.ExitCode).To(BeElementOf(int32(134), int32(inPlaceRestartExitCode)), "rank %s", index)
		}
		js := &jobsetv1alpha2.JobSet{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "in-place"}, js)).To(Succeed())
		Expect(js.Status.Restarts).To(BeZero(), "no JobSet restart: the Jobs were not recreated")
		Expect(js.Status.CurrentInPlaceRestartAttempt).To(Equal(ptr.To[int32](1)), "one restart in place")
		Expect(job.Status.Restarts).NotTo(BeNil())
		Expect(*job.Status.Restarts).To(And(
			HaveField("Count", BeEquivalentTo(1)), HaveField("CountedTowardsMax", BeEquivalentTo(1)),
			HaveField("LastReason", trainer.RestartInPlaceReason)), "the TrainJob's restarts count it, within its budget")

		By("the script resumed from its checkpoint of step 10 and redid only what came after it")
		runs := readStepLog(filepath.Join(dir, "steps.log"))
		Expect(runs).To(HaveLen(2))
		Expect(runs[1].From).To(Equal(10))
		Expect(steplog.RedoneSteps(runs)).To(Equal([]int{11, 12, 13, 14, 15}))
		GinkgoWriter.Printf("from the last step to the first step again, in place: %.1fs\n",
			runs[1].Times[0]-runs[0].Times[len(runs[0].Times)-1])

		By("the goodput account saw the restart by the run start the script reported")
		gp := job.Status.Goodput
		Expect(gp).NotTo(BeNil())
		Expect(gp.Lost.RestartSeconds).To(BeNumerically(">", 0), "%+v", *gp)
		Expect(job.Status.LastRunStart).To(HaveField("FromStep", int64(10)))
	})
})

// allowTheAgent lets the namespace's default service account, which the
// trainer pods run as, do what JobSet's in-place restart agent does: read
// its JobSet and write its pod's restart attempt.
func allowTheAgent(ns string) {
	GinkgoHelper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "in-place-restart-agent"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{jobsetv1alpha2.GroupVersion.Group}, Resources: []string{"jobsets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "patch"}},
		},
	}
	Expect(k8s.Create(ctx, role)).To(Succeed())
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "in-place-restart-agent"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "default"}},
	})).To(Succeed())
}

// restartInPlace makes a processRuntime's trainer pods run train_ddp.py
// with args under JobSet's in-place restart agent. Rank 0's script fails
// only on its first run: a restart in place keeps the JobSet's
// restart-attempt label, so a marker file in the checkpoint directory
// says which run it is.
func restartInPlace(rt *trainer.TrainingRuntime, node *jobsetv1alpha2.ReplicatedJob, args string) {
	GinkgoHelper()
	agent := filepath.Join(os.Getenv(simcluster.BinariesEnv), "jobset-in-place-restart-agent")
	_, err := os.Stat(agent)
	Expect(err).NotTo(HaveOccurred(), "JobSet's in-place restart agent: run hack/cluster-binaries.sh")
	worker := strings.Join([]string{
		`attempt=1; if [ "$PET_NODE_RANK" = 0 ] && [ ! -e /checkpoints/started ]; then attempt=0; touch /checkpoints/started; fi;`,
		`RESTART_ATTEMPT=$attempt exec python3 /workspace/train_ddp.py --fail-on-attempt=0 ` + args,
	}, " ")
	rt.Spec.Template.Spec.FailurePolicy = &jobsetv1alpha2.FailurePolicy{RestartStrategy: jobsetv1alpha2.InPlaceRestart}
	// What JobSet's webhook asks of an in-place restart: the Jobs never
	// fail for a restart, and a failed pod is replaced only once it is.
	node.Template.Spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
	node.Template.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	c := &node.Template.Spec.Template.Spec.Containers[0]
	c.Command = []string{agent}
	// The restart policy's retriable exit code, and the agent's own,
	// restart the container where it is; any other ends it (the restart
	// policy's Fail on 1 fails the job).
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicy(corev1.RestartPolicyNever))
	c.RestartPolicyRules = []corev1.ContainerRestartRule{{
		Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
			Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{134, inPlaceRestartExitCode},
		},
	}}
	c.Env = append(slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "RESTART_ATTEMPT" }),
		corev1.EnvVar{Name: "WORKER_COMMAND", Value: worker},
		corev1.EnvVar{Name: "IN_PLACE_RESTART_EXIT_CODE", Value: fmt.Sprint(inPlaceRestartExitCode)},
		corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		corev1.EnvVar{Name: "JOBSET_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.labels['" + jobsetv1alpha2.JobSetNameKey + "']",
		}}},
	)
}
