package simcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner is the field manager of what the package applies.
const FieldOwner = "trainforge-simcluster"

// ReadManifests decodes every object of YAML files (several documents a
// file), in order.
func ReadManifests(files ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(u.Object) == 0 {
				continue // an empty document
			}
			if u.GetKind() == "" || u.GetName() == "" {
				return nil, fmt.Errorf("%s: an object without kind or metadata.name", f)
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// Apply applies objects server-side, as `kubectl apply --server-side`
// does, putting namespaced ones without a namespace into namespace. The
// first requests after a webhook's start may fail while the API server
// learns its certificate: Apply retries for up to a minute.
func Apply(ctx context.Context, c client.Client, namespace string, objs ...*unstructured.Unstructured) error {
	for _, u := range objs {
		u = u.DeepCopy()
		namespaced, err := c.IsObjectNamespaced(u)
		if err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if namespaced && u.GetNamespace() == "" {
			u.SetNamespace(namespace)
		}
		err = poll(ctx, time.Minute, "applying "+u.GetKind()+" "+u.GetName(), func() error {
			err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership)
			if err != nil && !transient(err) {
				return &permanent{err}
			}
			return err
		})
		var p *permanent
		if errors.As(err, &p) {
			return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), p.err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ApplyFiles applies every object of YAML files (Apply).
func ApplyFiles(ctx context.Context, c client.Client, namespace string, files ...string) ([]*unstructured.Unstructured, error) {
	objs, err := ReadManifests(files...)
	if err != nil {
		return nil, err
	}
	return objs, Apply(ctx, c, namespace, objs...)
}

// permanent is an error that retrying does not cure.
type permanent struct{ err error }

func (p *permanent) Error() string { return p.err.Error() }

// transient reports whether an apply may succeed if tried again: a webhook
// that does not answer yet, or whose certificate the API server does not
// trust yet.
func transient(err error) bool {
	msg := err.Error()
	for _, s := range []string{"failed calling webhook", "connection refused", "x509", "no endpoints available", "the server could not find the requested resource", "no matches for kind"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// moduleDir is where the module cache holds a dependency of the
// repository, at the version go.mod requires.
func moduleDir(repoRoot, path string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return "", fmt.Errorf("finding module %s (go list -m in %s): %v; run go mod download", path, repoRoot, err)
	}
	return dir, nil
}

// installCRDs applies the CRDs of Trainforge (from the repository), JobSet
// and PodGroup (from the modules the code compiles against) and waits until
// they are served.
func (c *Cluster) installCRDs(ctx context.Context) error {
	jobset, err := moduleDir(c.opts.RepoRoot, "sigs.k8s.io/jobset")
	if err != nil {
		return err
	}
	sp, err := moduleDir(c.opts.RepoRoot, "sigs.k8s.io/scheduler-plugins")
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(c.opts.RepoRoot, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s/config/crd/bases", c.opts.RepoRoot)
	}
	files = append(files,
		filepath.Join(jobset, "config", "components", "crd", "bases", "jobset.x-k8s.io_jobsets.yaml"),
		filepath.Join(sp, "manifests", "coscheduling", "crd.yaml"))
	// The runtime CRDs embed a whole JobSet spec: too large for the
	// annotation a client-side apply keeps; server-side apply has none.
	return c.applyCRDs(ctx, files...)
}

// applyCRDs applies the CRDs of YAML files and waits until they are
// established.
func (c *Cluster) applyCRDs(ctx context.Context, files ...string) error {
	crds, err := ApplyFiles(ctx, c.Client, "", files...)
	if err != nil {
		return err
	}
	for _, u := range crds {
		name := u.GetName()
		err := poll(ctx, time.Minute, "CRD "+name+" to be established", func() error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("CRD %s is not established", name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
