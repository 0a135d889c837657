package simcluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GPUResource is the extended resource of NVIDIA's device plugin, which
// the fake GPU nodes offer.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// A NodePool is a number of identical fake nodes.
type NodePool struct {
	// Prefix names the nodes: <prefix>-1, <prefix>-2, ...
	Prefix string
	Count  int
	CPU    string
	Memory string
	// GPUs is the number of nvidia.com/gpu of each node.
	GPUs int
}

// DefaultNodes are 4 GPU nodes with 8 GPUs each and 4 CPU nodes.
var DefaultNodes = []NodePool{
	{Prefix: "gpu-node", Count: 4, CPU: "64", Memory: "512Gi", GPUs: 8},
	{Prefix: "cpu-node", Count: 4, CPU: "32", Memory: "128Gi"},
}

func countNodes(pools []NodePool) int {
	n := 0
	for _, p := range pools {
		n += p.Count
	}
	return n
}

// describeNodes says what the pools are, for example
// "4 × (64 CPU, 512Gi, 8 GPU), 4 × (32 CPU, 128Gi)".
func describeNodes(pools []NodePool) string {
	var parts []string
	for _, p := range pools {
		d := fmt.Sprintf("%d × (%s CPU, %s", p.Count, p.CPU, p.Memory)
		if p.GPUs > 0 {
			d += fmt.Sprintf(", %d GPU", p.GPUs)
		}
		parts = append(parts, d+")")
	}
	return strings.Join(parts, ", ")
}

// node is one fake node of a pool. kwok manages it (it plays its kubelet)
// and keeps the capacity it is created with: nodes may set their status
// on create.
func (p NodePool) node(i int) (*corev1.Node, error) {
	name := fmt.Sprintf("%s-%d", p.Prefix, i)
	capacity := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}
	var err error
	if capacity[corev1.ResourceCPU], err = resource.ParseQuantity(p.CPU); err != nil {
		return nil, fmt.Errorf("node pool %s: cpu %q: %w", p.Prefix, p.CPU, err)
	}
	if capacity[corev1.ResourceMemory], err = resource.ParseQuantity(p.Memory); err != nil {
		return nil, fmt.Errorf("node pool %s: memory %q: %w", p.Prefix, p.Memory, err)
	}
	if p.GPUs > 0 {
		capacity[GPUResource] = *resource.NewQuantity(int64(p.GPUs), resource.DecimalSI)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
	}, nil
}

// createNodes creates the fake nodes and waits until kwok has made them
// Ready.
func (c *Cluster) createNodes(ctx context.Context) error {
	var names []string
	for _, p := range c.opts.Nodes {
		for i := 1; i <= p.Count; i++ {
			n, err := p.node(i)
			if err != nil {
				return err
			}
			if err := c.Client.Create(ctx, n); err != nil {
				return fmt.Errorf("creating node %s: %w", n.Name, err)
			}
			names = append(names, n.Name)
		}
	}
	return poll(ctx, time.Minute, "the fake nodes to be Ready (kwok's log: "+c.KwokLogs+"/kwok-controller.log)", func() error {
		for _, name := range names {
			n := &corev1.Node{}
			if err := c.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
				return err
			}
			if !nodeReady(n) {
				return fmt.Errorf("node %s is not Ready", name)
			}
		}
		return nil
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
