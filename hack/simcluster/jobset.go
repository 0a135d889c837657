package simcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainforge/trainforge/internal/freeport"
)

// jobSetConfig is the JobSet controller's configuration: its webhooks on
// 127.0.0.1 with the certificate of certDir, no certificate management of
// its own (it would want a Service and a Secret in a namespace it is not
// deployed to), no leader election, and no metrics server (its metrics
// need authentication the simulated cluster does not set up).
const jobSetConfig = `apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: %s
# Elastic TrainJobs: a running JobSet's Job parallelism and completions
# may change in place (alpha in JobSet v0.12, off by default); and the
# in-place restart (failurePolicy.restartStrategy InPlaceRestart, alpha).
featureGates:
  ElasticJobSet: true
  InPlaceRestart: true
`

// startJobSet runs the JobSet controller and registers its webhooks. They
// are not optional: its controller relies on its defaulting webhook and
// fails on JobSets the webhook never saw.
func (c *Cluster) startJobSet(ctx context.Context) error {
	port, err := freeport.Port()
	if err != nil {
		return err
	}
	probe, err := freeport.Port()
	if err != nil {
		return err
	}
	certDir := filepath.Join(c.opts.Dir, "jobset-certs")
	ca, err := servingCert(certDir, 30*24*time.Hour)
	if err != nil {
		return fmt.Errorf("making the JobSet webhook certificate: %w", err)
	}
	probeAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(probe))
	config := filepath.Join(c.opts.Dir, "jobset-config.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, jobSetConfig, port, certDir, probeAddr), 0o644); err != nil {
		return err
	}
	p, err := startProcess("the JobSet controller", filepath.Join(c.Logs, "jobset-controller.log"), c.bin("jobset-controller"),
		[]string{"--config", config}, []string{"KUBECONFIG=" + c.Kubeconfig})
	if err != nil {
		return err
	}
	c.track(p)
	if err := c.waitReady(ctx, p, "http://"+probeAddr+"/readyz", 2*time.Minute); err != nil {
		return err
	}
	return c.registerJobSetWebhooks(ctx, port, ca)
}

// waitReady waits until a readiness URL answers 200, or the process exits.
func (c *Cluster) waitReady(ctx context.Context, p *process, url string, timeout time.Duration) error {
	return poll(ctx, timeout, p.name+" to be ready ("+url+")", func() error {
		if done, err := p.exited(); done {
			return &permanent{p.exitError(err)}
		}
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answers %s", url, resp.Status)
		}
		return nil
	})
}

// registerJobSetWebhooks registers the webhooks of JobSet's own manifests
// at https://127.0.0.1:port. As JobSet's kustomization does, its pod
// webhooks see only the pods of JobSets.
func (c *Cluster) registerJobSetWebhooks(ctx context.Context, port int, ca []byte) error {
	dir, err := moduleDir(c.opts.RepoRoot, "sigs.k8s.io/jobset")
	if err != nil {
		return err
	}
	podsOfJobSets := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "jobset.sigs.k8s.io/jobset-name", Operator: metav1.LabelSelectorOpExists,
	}}}
	_, err = c.registerWebhooks(ctx, webhookSet{
		owner: "jobset", manifests: filepath.Join(dir, "config", "components", "webhook", "manifests.yaml"),
		port: port, ca: ca, podSelector: podsOfJobSets,
	})
	return err
}

// webhookSet says which webhooks of a controller's manifests to register,
// and where the controller serves them.
type webhookSet struct {
	// owner names the configurations: <owner>-mutating-webhook-configuration
	// and <owner>-validating-webhook-configuration.
	owner     string
	manifests string
	port      int
	ca        []byte
	// keep, when set, says which webhooks (by their service path) to
	// register; all when nil.
	keep func(path string) bool
	// podSelector, when set, is the object selector of the pod webhooks.
	podSelector *metav1.LabelSelector
}

// adapt points one webhook of the manifests (its client config, rules
// and object selector) at base, with the set's CA and, on pods, its pod
// selector. It reports false for a webhook the set does not keep.
func (set webhookSet) adapt(base string, cc *admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations, selector **metav1.LabelSelector) bool {
	if set.keep != nil && (cc.Service == nil || cc.Service.Path == nil || !set.keep(*cc.Service.Path)) {
		return false
	}
	*cc = urlClientConfig(base, *cc, set.ca)
	if set.podSelector != nil && onPods(rules) {
		*selector = set.podSelector
	}
	return true
}

// registerWebhooks registers the Mutating and ValidatingWebhookConfigurations
// of a controller's webhook manifests at https://127.0.0.1:port, with the
// CA of its serving certificate, and returns what it created.
func (c *Cluster) registerWebhooks(ctx context.Context, set webhookSet) ([]client.Object, error) {
	objs, err := ReadManifests(set.manifests)
	if err != nil {
		return nil, err
	}
	base := "https://127.0.0.1:" + strconv.Itoa(set.port)
	var created []client.Object
	for _, u := range objs {
		var obj client.Object
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := fromUnstructured(u, m); err != nil {
				return created, err
			}
			m.Name = set.owner + "-mutating-webhook-configuration"
			var hooks []admissionregistrationv1.MutatingWebhook
			for _, w := range m.Webhooks {
				if set.adapt(base, &w.ClientConfig, w.Rules, &w.ObjectSelector) {
					hooks = append(hooks, w)
				}
			}
			m.Webhooks = hooks
			obj = m
		case "ValidatingWebhookConfiguration":
			v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := fromUnstructured(u, v); err != nil {
				return created, err
			}
			v.Name = set.owner + "-validating-webhook-configuration"
			var hooks []admissionregistrationv1.ValidatingWebhook
			for _, w := range v.Webhooks {
				if set.adapt(base, &w.ClientConfig, w.Rules, &w.ObjectSelector) {
					hooks = append(hooks, w)
				}
			}
			v.Webhooks = hooks
			obj = v
		default:
			continue
		}
		if err := c.Client.Create(ctx, obj); err != nil {
			return created, fmt.Errorf("registering %s: %w", obj.GetName(), err)
		}
		created = append(created, obj)
	}
	return created, nil
}

// urlClientConfig points a webhook's service client config at a URL.
func urlClientConfig(base string, cc admissionregistrationv1.WebhookClientConfig, ca []byte) admissionregistrationv1.WebhookClientConfig {
	path := ""
	if cc.Service != nil && cc.Service.Path != nil {
		path = *cc.Service.Path
	}
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + path), CABundle: ca}
}

func onPods(rules []admissionregistrationv1.RuleWithOperations) bool {
	for _, r := range rules {
		for _, res := range r.Resources {
			if res == "pods" {
				return true
			}
		}
	}
	return false
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
