package framework

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

func TestGang(t *testing.T) {
	info := &Info{PodSets: []PodSet{
		{Name: "dataset", AncestorStep: trainer.DatasetInitializerStep},
		{Name: "launcher", AncestorStep: trainer.TrainerStep},
		{Name: "model", AncestorStep: trainer.ModelInitializerStep},
		{Name: "workers", AncestorStep: trainer.TrainerStep},
	}}
	pods, err := info.Gang()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ps := range pods {
		names = append(names, ps.Name)
	}
	if diff := cmp.Diff([]string{"launcher", "workers"}, names); diff != "" {
		t.Errorf("gang (-want +got):\n%s", diff)
	}

	if _, err := (&Info{PodSets: []PodSet{{Name: "dataset", AncestorStep: trainer.DatasetInitializerStep}}}).Gang(); !errors.Is(err, ErrNoGang) {
		t.Errorf("Gang of a runtime without a trainer step = %v, want ErrNoGang", err)
	}
}

func TestGangSize(t *testing.T) {
	q := resource.MustParse
	for name, tc := range map[string]struct {
		pods          []*PodSet
		wantMembers   int32
		wantResources corev1.ResourceList
		wantErr       string
	}{
		"replicas times count, requests summed per resource": {
			pods: []*PodSet{
				{Replicas: 1, Count: 1, SinglePodRequests: corev1.ResourceList{corev1.ResourceCPU: q("300m"), corev1.ResourceMemory: q("1Gi")}},
				{Replicas: 2, Count: 2, SinglePodRequests: corev1.ResourceList{corev1.ResourceCPU: q("500m"), "nvidia.com/gpu": q("2")}},
			},
			wantMembers:   5,
			wantResources: corev1.ResourceList{corev1.ResourceCPU: q("2300m"), corev1.ResourceMemory: q("1Gi"), "nvidia.com/gpu": q("8")},
		},
		"an elastic PodSet counts its minimum, whatever its size": {
			pods: []*PodSet{
				{Replicas: 1, Count: 4, Elastic: &CountRange{Min: 2, Max: 6}, SinglePodRequests: corev1.ResourceList{corev1.ResourceCPU: q("1"), "nvidia.com/gpu": q("8")}},
				{Replicas: 1, Count: 1, SinglePodRequests: corev1.ResourceList{corev1.ResourceCPU: q("500m")}},
			},
			wantMembers:   3,
			wantResources: corev1.ResourceList{corev1.ResourceCPU: q("2500m"), "nvidia.com/gpu": q("16")},
		},
		"pods without requests count as members only": {
			pods:        []*PodSet{{Replicas: 1, Count: 3}},
			wantMembers: 3,
		},
		"a PodSet without pods is skipped": {
			pods:          []*PodSet{{Replicas: 1, Count: 0, SinglePodRequests: corev1.ResourceList{corev1.ResourceCPU: q("1")}}, {Replicas: 1, Count: 2, SinglePodRequests: corev1.ResourceList{corev1.ResourceCPU: q("1")}}},
			wantMembers:   2,
			wantResources: corev1.ResourceList{corev1.ResourceCPU: q("2")},
		},
		"no pod at all": {
			pods:    []*PodSet{{Replicas: 1, Count: 0}},
			wantErr: ErrEmptyGang.Error(),
		},
		"more pods than an int32": {
			pods:    []*PodSet{{Replicas: 1 << 16, Count: 1 << 16}},
			wantErr: "the trainer step has 4294967296 pods, more than a PodGroup's minMember can hold",
		},
	} {
		t.Run(name, func(t *testing.T) {
			members, res, err := GangSize(tc.pods)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if members != tc.wantMembers {
				t.Errorf("minMember = %d, want %d", members, tc.wantMembers)
			}
			if diff := cmp.Diff(tc.wantResources, res, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("minResources (-want +got):\n%s", diff)
			}
		})
	}
}
