package install

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainforge/trainforge/test/testenv"
)

const fieldOwner = client.FieldOwner("trainforge-install-test")

// startAPIServer starts kube-apiserver and etcd (testenv) with no CRDs:
// the installs bring their own.
func startAPIServer(t *testing.T) client.Client {
	t.Helper()
	env, err := testenv.Start(testenv.Options{NoCRDs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	cfg := env.Config
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// apply server-side applies obj, for real or as a dry run.
func apply(ctx context.Context, c client.Client, obj *unstructured.Unstructured, dryRun bool) error {
	obj = obj.DeepCopy()
	obj.SetManagedFields(nil)
	obj.SetResourceVersion("")
	opts := []client.ApplyOption{fieldOwner}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)
}

func ofKind(objs []*unstructured.Unstructured, kind string, want bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if (o.GetKind() == kind) == want {
			out = append(out, o)
		}
	}
	return out
}

func objName(o *unstructured.Unstructured) string {
	if o.GetNamespace() != "" {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	return o.GetKind() + " " + o.GetName()
}

// TestInstallOnAPIServer applies what the installs render to a real API
// server: the CRDs and the namespace for real, the example runtimes and
// every chart render as server-side dry runs, then the kustomization for
// real, twice, which must change nothing the second time. Last, a Pod of
// each rendered pod template is created (dry run) in the namespace, which
// enforces Pod Security "restricted".
func TestInstallOnAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := startAPIServer(t)
	all := renders(t)
	kustomized := all[0].objs // config/default, applied for real below

	// The CRDs and the namespace, for real; CRs wait until their CRDs are
	// established. The Prometheus Operator's CRDs too: the chart can render
	// a ServiceMonitor and a PrometheusRule.
	for _, o := range append(ofKind(kustomized, "CustomResourceDefinition", true), monitoringCRDs(t)...) {
		if err := apply(ctx, c, o, false); err != nil {
			t.Fatalf("applying %s: %v", objName(o), err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: o.GetName()}, crd); err != nil {
				return false, err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", o.GetName(), err)
		}
	}
	ns := find(t, kustomized, "Namespace", "trainforge-system")
	if ns.GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace trainforge-system does not enforce Pod Security restricted: %v", ns.GetLabels())
	}
	if err := apply(ctx, c, ns, false); err != nil {
		t.Fatalf("applying the namespace: %v", err)
	}

	t.Run("runtimes", func(t *testing.T) {
		runtimes := objects(t, kustomizeBuild(t, "config/runtimes"))
		var names []string
		for _, o := range runtimes {
			if err := apply(ctx, c, o, true); err != nil {
				t.Errorf("dry-run apply of %s: %v", objName(o), err)
			}
			names = append(names, o.GetName())
		}
		want := "torch-distributed mpi-distributed jax-distributed xgboost-distributed flux-distributed"
		if strings.Join(names, " ") != want {
			t.Errorf("config/runtimes has %v, want %s", names, want)
		}
	})

	for _, r := range all[1:] {
		t.Run("dry run "+r.name, func(t *testing.T) {
			for _, o := range r.objs {
				if err := apply(ctx, c, o, true); err != nil {
					t.Errorf("dry-run apply of %s: %v", objName(o), err)
				}
			}
		})
	}

	t.Run("kustomize twice", func(t *testing.T) {
		versions := map[string]string{}
		for round := 1; round <= 2; round++ {
			for _, o := range kustomized {
				if err := apply(ctx, c, o, false); err != nil {
					t.Fatalf("round %d: applying %s: %v", round, objName(o), err)
				}
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(o.GroupVersionKind())
				if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
					t.Fatal(err)
				}
				key := objName(o)
				if round == 1 {
					versions[key] = got.GetResourceVersion()
				} else if got.GetResourceVersion() != versions[key] {
					t.Errorf("applying again changed %s (resourceVersion %s, then %s)", key, versions[key], got.GetResourceVersion())
				}
			}
		}
		// Once the controller has written its certificate into the
		// Secret, another apply must leave it there.
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "trainforge-system", Name: "trainforge-webhook-server-cert"}, secret); err != nil {
			t.Fatal(err)
		}
		secret.Data = map[string][]byte{"tls.crt": []byte("certificate"), "tls.key": []byte("key")}
		secret.ManagedFields = nil
		if err := c.Update(ctx, secret, client.FieldOwner("trainforge-controller")); err != nil {
			t.Fatal(err)
		}
		if err := apply(ctx, c, find(t, kustomized, "Secret", "trainforge-webhook-server-cert"), false); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			t.Fatal(err)
		}
		if string(secret.Data["tls.crt"]) != "certificate" {
			t.Error("applying the install again removed the controller's webhook certificate")
		}
	})

	t.Run("pod security", func(t *testing.T) {
		for _, r := range all {
			dep := find(t, r.objs, "Deployment", "trainforge-controller")
			tmpl, _, _ := unstructured.NestedMap(dep.Object, "spec", "template")
			pod := &unstructured.Unstructured{Object: tmpl}
			pod.SetAPIVersion("v1")
			pod.SetKind("Pod")
			pod.SetNamespace("trainforge-system")
			pod.SetName("pod-security-check")
			if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
				t.Errorf("%s: the namespace refuses the controller's pod: %v", r.name, err)
			}
		}
		// The control: a pod that may escalate its privileges is refused,
		// so the namespace does enforce the level.
		dep := find(t, kustomized, "Deployment", "trainforge-controller")
		tmpl, _, _ := unstructured.NestedMap(dep.Object, "spec", "template")
		bad := &unstructured.Unstructured{Object: tmpl}
		bad.SetAPIVersion("v1")
		bad.SetKind("Pod")
		bad.SetNamespace("trainforge-system")
		bad.SetName("pod-security-control")
		containers, _, _ := unstructured.NestedSlice(bad.Object, "spec", "containers")
		_ = unstructured.SetNestedField(containers[0].(map[string]any), true, "securityContext", "allowPrivilegeEscalation")
		_ = unstructured.SetNestedSlice(bad.Object, containers, "spec", "containers")
		err := c.Create(ctx, bad, client.DryRunAll)
		if !apierrors.IsForbidden(err) {
			t.Errorf("a pod with allowPrivilegeEscalation was not refused by Pod Security: %v", err)
		}
	})
}
