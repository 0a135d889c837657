package simcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainforge/trainforge/hack/simcluster/procnode"
)

// DefaultProcessNodes is how many process nodes a cluster has unless
// Options.ProcessNodes says otherwise.
const DefaultProcessNodes = 3

// Capacity of each process node: what the machine is shared out as, not
// what it has (the processes of all three share its cores).
const (
	ProcessNodeCPU    = "4"
	ProcessNodeMemory = "8Gi"
)

// processNodeNames are the names of n process nodes.
func processNodeNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("process-node-%d", i+1)
	}
	return names
}

// startProcessNodes starts the agent that plays the process nodes'
// kubelets, in this process, and waits until the API server has the
// nodes Ready.
func (c *Cluster) startProcessNodes(ctx context.Context) error {
	certDir := filepath.Join(c.opts.Dir, "procnode-certs")
	// The API server does not check a kubelet's certificate without a
	// --kubelet-certificate-authority, which kwokctl does not pass; the
	// certificate is for TLS only.
	if _, err := servingCert(certDir, 7*24*time.Hour); err != nil {
		return fmt.Errorf("process nodes: their certificate: %w", err)
	}
	log, err := os.OpenFile(filepath.Join(c.Logs, "procnode.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	c.procLog = log
	c.ProcessNodes = processNodeNames(c.opts.ProcessNodes)
	c.Agent, err = procnode.Start(ctx, procnode.Config{
		Rest: c.Config, Nodes: c.ProcessNodes, CPU: ProcessNodeCPU, Memory: ProcessNodeMemory,
		Dir:         filepath.Join(c.opts.Dir, "procnode"),
		TLSCertFile: filepath.Join(certDir, "tls.crt"), TLSKeyFile: filepath.Join(certDir, "tls.key"),
		Spawn: spawn, Watch: c.watchdog.watchGroup,
		ExtraHosts: c.opts.ProcessNodeHosts,
		Log:        log,
	})
	if err != nil {
		return fmt.Errorf("starting the process nodes: %w", err)
	}
	return poll(ctx, time.Minute, "the process nodes to be Ready (their log: "+log.Name()+")", func() error {
		for _, name := range c.ProcessNodes {
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
