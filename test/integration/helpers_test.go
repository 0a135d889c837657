package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

var ctx = context.Background()

// newNamespace creates a namespace for one spec and deletes it after.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tf-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, ns))).To(Succeed()) })
	return ns.Name
}

// createCluster creates a cluster-scoped object and deletes it after the spec.
func createCleaned(obj client.Object) {
	Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed()) })
}

// exampleObjects decodes the manifests of one seed example, from the
// repository's examples/seed: the examples whose comments say what
// Trainforge must produce.
func exampleObjects(file string) (runtimes []*trainer.ClusterTrainingRuntime, jobs []*trainer.TrainJob) {
	path := filepath.Join(repoRoot, "examples", "seed", file)
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		Expect(err).NotTo(HaveOccurred())
		var meta metav1.TypeMeta
		Expect(yaml.Unmarshal(doc, &meta)).To(Succeed())
		switch meta.Kind {
		case trainer.ClusterTrainingRuntimeKind:
			rt := &trainer.ClusterTrainingRuntime{}
			Expect(yaml.UnmarshalStrict(doc, rt)).To(Succeed())
			runtimes = append(runtimes, rt)
		case trainer.TrainJobKind:
			job := &trainer.TrainJob{}
			Expect(yaml.UnmarshalStrict(doc, job)).To(Succeed())
			jobs = append(jobs, job)
		case "":
		default:
			Fail("unexpected kind " + meta.Kind + " in " + path)
		}
	}
	return runtimes, jobs
}

func jobSetOf(ns, name string) func(Gomega) *jobsetv1alpha2.JobSet {
	return func(g Gomega) *jobsetv1alpha2.JobSet {
		js := &jobsetv1alpha2.JobSet{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, js)).To(Succeed())
		return js
	}
}

func trainJobOf(ns, name string) func(Gomega) *trainer.TrainJob {
	return func(g Gomega) *trainer.TrainJob {
		job := &trainer.TrainJob{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)).To(Succeed())
		return job
	}
}

// conditionOf returns a condition of a TrainJob, or nil.
func conditionOf(job *trainer.TrainJob, typ string) *metav1.Condition {
	return meta.FindStatusCondition(job.Status.Conditions, typ)
}

// eventReasons lists the reasons of the Events about one object.
func eventReasons(g Gomega, ns, name string) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// controllerOwner returns an object's controller owner reference, or nil.
func controllerOwner(obj metav1.Object) *metav1.OwnerReference {
	return metav1.GetControllerOfNoCopy(obj)
}

func container(js *jobsetv1alpha2.JobSet, rjob, name string) *corev1.Container {
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		if rj.Name != rjob {
			continue
		}
		for k := range rj.Template.Spec.Template.Spec.Containers {
			if c := &rj.Template.Spec.Template.Spec.Containers[k]; c.Name == name {
				return c
			}
		}
	}
	return nil
}

func replicatedJob(js *jobsetv1alpha2.JobSet, name string) *jobsetv1alpha2.ReplicatedJob {
	for i := range js.Spec.ReplicatedJobs {
		if js.Spec.ReplicatedJobs[i].Name == name {
			return &js.Spec.ReplicatedJobs[i]
		}
	}
	return nil
}
