package e2e

import (
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// What `make demo` shows, as a test: every example runs to Complete.
var _ = Describe("the examples of make demo", func() {
	It("all run to Complete, the gang once the GPUs it needs are free, with jobsStatus counting their Jobs", func() {
		examples := filepath.Join(repoRoot, "examples")
		runtimes, err := filepath.Glob(filepath.Join(examples, "runtimes", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		_, err = simcluster.ApplyFiles(ctx, k8s, "", runtimes...)
		Expect(err).NotTo(HaveOccurred())

		type job struct{ ns, name string }
		var jobs []job
		apply := func(ns string, files ...string) {
			GinkgoHelper()
			objs, err := simcluster.ApplyFiles(ctx, k8s, ns, files...)
			Expect(err).NotTo(HaveOccurred())
			for _, u := range objs {
				if u.GetKind() == trainer.TrainJobKind {
					jobs = append(jobs, job{ns, u.GetName()})
				}
			}
		}
		ns := newNamespace()
		gang := filepath.Join(examples, "jobs", "gang-gpu.yaml")
		files, err := filepath.Glob(filepath.Join(examples, "jobs", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(ContainElement(gang))
		for _, f := range files {
			if f != gang {
				apply(ns, f)
			}
		}
		seeds, err := filepath.Glob(filepath.Join(examples, "seed", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(seeds).To(HaveLen(3))
		for _, f := range seeds {
			// Two seeds name their TrainJob first-job.
			apply(newNamespace(), f)
		}

		By("the gang comes once torch-gpu holds its 16 GPUs, as in the demo")
		expectState(ns, "torch-gpu", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)
		apply(ns, gang)

		for _, j := range jobs {
			Eventually(func(g Gomega) string { return state(getTrainJob(g, j.ns, j.name)) }, 5*time.Minute).Should(
				Equal(trainer.TrainJobComplete), "TrainJob %s/%s", j.ns, j.name)
			expectJobsStatusMatchesTheJobs(j.ns, j.name)
		}
		Expect(jobs).To(HaveLen(8))

		By("torch-restart restarted once, on its transient exit code, and recovered")
		restarts := getTrainJob(Default, ns, "torch-restart").Status.Restarts
		Expect(restarts).NotTo(BeNil())
		Expect(restarts.Count).To(Equal(int32(1)))
		Expect(restarts.LastReason).To(Equal(trainer.RestartRetryableExitCodeReason))
	})
})
