package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/controller"
)

// namespace holds every TrainJob of a run.
const namespace = "load"

// The runtimes: Kubeflow's torch-distributed shape with 4 nodes, and the
// same with gang scheduling (one PodGroup per TrainJob besides the JobSet).
const (
	runtimeTorch        = "torch"
	runtimeCoscheduling = "coscheduling"
)

// clusterRuntime returns the ClusterTrainingRuntime of a runtime variant.
func clusterRuntime(variant string) *trainer.ClusterTrainingRuntime {
	container := corev1.Container{
		Name:    "node",
		Image:   "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime",
		Command: []string{"torchrun", "/workspace/train.py"},
	}
	rt := &trainer.ClusterTrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: "torch-distributed", Labels: map[string]string{"trainer.kubeflow.org/framework": "torch"}},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{
				NumNodes:       ptr.To[int32](4),
				MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{NumProcPerNode: ptr.To(intstr.FromString("auto"))}},
			},
		},
	}
	if variant == runtimeCoscheduling {
		rt.Name = "torch-distributed-gang"
		rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
			Coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](100)},
		}}
		container.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	}
	rj := jobsetv1alpha2.ReplicatedJob{Name: "node", Replicas: 1}
	rj.Template.Labels = map[string]string{trainer.AncestorStepLabel: trainer.TrainerStep}
	rj.Template.Spec.Template.Spec = corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{container}}
	rt.Spec.Template = trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{rj}}}
	return rt
}

// trainJob returns the i-th TrainJob of a sweep: same runtime, a different
// learning rate.
func trainJob(i int, runtimeName string) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: jobName(i)},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: runtimeName, Kind: ptr.To(trainer.ClusterTrainingRuntimeKind), APIGroup: ptr.To(trainer.GroupVersion.Group)},
			Trainer:    &trainer.Trainer{Args: []string{"--lr", fmt.Sprintf("0.%04d", i+1)}},
		},
	}
}

func jobName(i int) string { return fmt.Sprintf("sweep-%05d", i) }

// floorObjects returns, per TrainJob, the objects the built-ins build for it
// (JobSet, and PodGroup for the gang runtime), as the controller would apply
// them: owner reference, labels and the desired-state annotation included.
func floorObjects(ctx context.Context, rt *trainer.ClusterTrainingRuntime, n int) ([][]*unstructured.Unstructured, error) {
	var specs []frameworkruntime.PluginSpec
	for _, name := range []string{"PlainML", "Torch", "JobSet", "Coscheduling"} {
		specs = append(specs, frameworkruntime.PluginSpec{Name: name})
	}
	fw, err := frameworkruntime.New(ctx, builtin.Registry(), specs)
	if err != nil {
		return nil, err
	}
	plugins := fw.Current()
	out := make([][]*unstructured.Unstructured, n)
	for i := range n {
		job := trainJob(i, rt.Name)
		job.UID = types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		info, err := framework.NewInfo(job, &rt.Spec)
		if err != nil {
			return nil, err
		}
		keys, err := info.PolicyKeys()
		if err != nil {
			return nil, err
		}
		cycle, err := plugins.NewCycle(job, keys)
		if err != nil {
			return nil, err
		}
		if err := cycle.Enforce(ctx, info); err != nil {
			return nil, err
		}
		objs, err := cycle.Build(ctx, info)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			a := o.Object.GetAnnotations()
			framework.MergeMap(&a, map[string]string{controller.DesiredHashAnnotation: "0123456789abcdef0123456789abcdef"})
			o.Object.SetAnnotations(a)
			out[i] = append(out[i], o.Object)
		}
	}
	return out, nil
}

// createAll runs create(i) for i in [0, n) on `clients` goroutines and
// records when each create was sent. It returns the first error.
func createAll(n, clients int, sent []time.Time, create func(i int) error) error {
	work := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				sent[i] = time.Now()
				if err := create(i); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("creating object %d: %w", i, err) })
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return firstErr
}

// createTrainJobs submits the N TrainJobs as the (unaudited) admin.
func createTrainJobs(ctx context.Context, c client.Client, runtimeName string, n, clients int, sent []time.Time) error {
	return createAll(n, clients, sent, func(i int) error { return c.Create(ctx, trainJob(i, runtimeName)) })
}

// createFloor creates the built objects directly, as the controller user.
func createFloor(ctx context.Context, c client.Client, objs [][]*unstructured.Unstructured, clients int, sent []time.Time) error {
	return createAll(len(objs), clients, sent, func(i int) error {
		for _, o := range objs[i] {
			if err := c.Create(ctx, o.DeepCopy()); err != nil {
				return err
			}
		}
		return nil
	})
}
