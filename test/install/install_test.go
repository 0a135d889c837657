// Package install checks the two ways to install Trainforge, the
// kustomization of config/ and the Helm chart of charts/trainforge: what
// they render, and that a real kube-apiserver (envtest) accepts it.
package install

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
)

// A render: what one way of installing produces.
type render struct {
	name string
	objs []*unstructured.Unstructured
	// wantPlugins are the plugins the configuration file must list, in
	// order, with their failure policies.
	wantPlugins []wantPlugin
	// sidecars are the plugins expected as sidecar containers.
	sidecars []string
	// rules the ClusterRole must grant, beside the generated ones.
	rules []rbacv1.PolicyRule
}

type wantPlugin struct {
	name, failurePolicy string
	// socket: reached at a Unix socket (a sidecar); command: a child
	// process; module: a wasm module in the controller's process.
	socket, command, module string
}

var builtins = []wantPlugin{{name: "PlainML", failurePolicy: "Fail"}, {name: "Torch", failurePolicy: "Fail"}, {name: "JobSet", failurePolicy: "Fail"}, {name: "Coscheduling", failurePolicy: "Fail"}, trainJobStatus}

// trainJobStatus comes after every ML plugin, built in or not.
var trainJobStatus = wantPlugin{name: "TrainJobStatus", failurePolicy: "Fail"}

func sock(name string) string { return "/var/run/trainforge/plugins/" + name + ".sock" }

// wasmCacheDir is the emptyDir of the wasm modules' machine code.
const wasmCacheDir = "/var/cache/trainforge/wasm"

// wasmModule is where the installs mount a wasm plugin's module file.
func wasmModule(name, file string) string { return "/var/lib/trainforge/wasm/" + name + "/" + file }

var (
	mpiRule     = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}
	volcanoRule = rbacv1.PolicyRule{APIGroups: []string{"scheduling.volcano.sh"}, Resources: []string{"podgroups"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}
)

// renders renders the kustomization and the chart with each of its
// example values files, with what each must contain.
func renders(t *testing.T) []render {
	t.Helper()
	// config/vendor-plugins and the chart's vendor-plugins values install
	// the same plugins.
	vendorPlugins := append(slices.Clone(builtins[:4]),
		wantPlugin{name: "MPI", failurePolicy: "Fail", socket: sock("mpi")},
		wantPlugin{name: "JAX", failurePolicy: "Fail", socket: sock("jax")},
		wantPlugin{name: "XGBoost", failurePolicy: "Ignore", socket: sock("xgboost")},
		wantPlugin{name: "Flux", failurePolicy: "Fail", socket: sock("flux")},
		trainJobStatus)
	vendorSidecars := []string{"MPI", "JAX", "XGBoost", "Flux"}
	// config/wasm-plugins and the chart's wasm-plugins values: MPI from an
	// image volume, JAX from a ConfigMap.
	wasmPlugins := append(slices.Clone(builtins[:4]),
		wantPlugin{name: "MPI", failurePolicy: "Fail", module: wasmModule("mpi", "trainforge-plugin-mpi.wasm")},
		wantPlugin{name: "JAX", failurePolicy: "Fail", module: wasmModule("jax", "jax.wasm")},
		trainJobStatus)
	return []render{
		{name: "kustomize config/default", objs: objects(t, kustomizeBuild(t, "config/default")), wantPlugins: builtins},
		{
			name: "kustomize config/vendor-plugins", objs: objects(t, kustomizeBuild(t, "config/vendor-plugins")),
			wantPlugins: vendorPlugins, sidecars: vendorSidecars, rules: []rbacv1.PolicyRule{mpiRule},
		},
		{
			name: "kustomize config/wasm-plugins", objs: objects(t, kustomizeBuild(t, "config/wasm-plugins")),
			wantPlugins: wasmPlugins, rules: []rbacv1.PolicyRule{mpiRule},
		},
		{
			name: "helm ci/wasm-plugins-values.yaml", objs: objects(t, helmTemplate(t, "charts/trainforge/ci/wasm-plugins-values.yaml")),
			wantPlugins: wasmPlugins, rules: []rbacv1.PolicyRule{mpiRule},
		},
		{name: "helm ci/default-values.yaml", objs: objects(t, helmTemplate(t, "charts/trainforge/ci/default-values.yaml")), wantPlugins: builtins},
		{
			name: "helm ci/vendor-plugins-values.yaml", objs: objects(t, helmTemplate(t, "charts/trainforge/ci/vendor-plugins-values.yaml")),
			wantPlugins: vendorPlugins, sidecars: vendorSidecars, rules: []rbacv1.PolicyRule{mpiRule},
		},
		{name: "helm ci/ha-values.yaml", objs: objects(t, helmTemplate(t, "charts/trainforge/ci/ha-values.yaml")), wantPlugins: builtins},
		{name: "helm ci/monitoring-values.yaml", objs: objects(t, helmTemplate(t, "charts/trainforge/ci/monitoring-values.yaml")), wantPlugins: builtins},
		{
			name: "helm ci/volcano-values.yaml", objs: objects(t, helmTemplate(t, "charts/trainforge/ci/volcano-values.yaml")),
			wantPlugins: append(slices.Clone(builtins[:3]),
				wantPlugin{name: "MPI", failurePolicy: "Fail", socket: sock("mpi")},
				wantPlugin{name: "Volcano", failurePolicy: "Fail", socket: sock("volcano")},
				trainJobStatus),
			sidecars: []string{"MPI", "Volcano"},
			rules:    []rbacv1.PolicyRule{mpiRule, volcanoRule},
		},
		{
			name: "helm ci/process-plugins-values.yaml", objs: objects(t, helmTemplate(t, "charts/trainforge/ci/process-plugins-values.yaml")),
			wantPlugins: []wantPlugin{
				{name: "PlainML", failurePolicy: "Fail"},
				{name: "Torch", failurePolicy: "Fail", command: "/usr/local/bin/trainforge-builtin-plugin"},
				{name: "JAX", failurePolicy: "Fail", socket: sock("jax")},
				{name: "JobSet", failurePolicy: "Fail"},
				{name: "Coscheduling", failurePolicy: "Fail"},
				trainJobStatus,
			},
			sidecars: []string{"JAX"},
		},
	}
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			return o
		}
	}
	t.Fatalf("no %s %s in the render", kind, name)
	return nil
}

func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// TestConfigurationFile decodes the configuration file of every render
// with the controller's own strict decoder, defaults and validates it as
// the controller does at start-up, and checks its plugins: order, failure
// policies, and how each runs.
func TestConfigurationFile(t *testing.T) {
	for _, r := range renders(t) {
		t.Run(r.name, func(t *testing.T) {
			cm := convert[corev1.ConfigMap](t, find(t, r.objs, "ConfigMap", "trainforge-controller-config"))
			data := cm.Data["config.yaml"]
			if data == "" {
				t.Fatalf("ConfigMap %s has no config.yaml", cm.Name)
			}
			t.Run("plugins", func(t *testing.T) {
				// Read as plain YAML: what the file says, before defaults.
				var file struct {
					Plugins []struct {
						Name          string `json:"name"`
						FailurePolicy string `json:"failurePolicy"`
						External      *struct {
							Command string `json:"command"`
							Socket  string `json:"socket"`
						} `json:"external"`
						Wasm *struct {
							Module string `json:"module"`
						} `json:"wasm"`
					} `json:"plugins"`
				}
				if err := yaml.Unmarshal([]byte(data), &file); err != nil {
					t.Fatal(err)
				}
				var got []wantPlugin
				for _, p := range file.Plugins {
					w := wantPlugin{name: p.Name, failurePolicy: p.FailurePolicy}
					if w.failurePolicy == "" {
						w.failurePolicy = string(configv1alpha1.DefaultFailurePolicy)
					}
					if p.External != nil {
						w.command, w.socket = p.External.Command, p.External.Socket
					}
					if p.Wasm != nil {
						w.module = p.Wasm.Module
					}
					got = append(got, w)
				}
				if !reflect.DeepEqual(got, r.wantPlugins) {
					t.Errorf("plugins of the configuration file:\n got %+v\nwant %+v", got, r.wantPlugins)
				}
			})
			t.Run("strict decode", func(t *testing.T) {
				cfg, err := configv1alpha1.Decode([]byte(data))
				if err != nil {
					t.Fatalf("the controller would not start: %v\n%s", err, data)
				}
				configv1alpha1.SetDefaults(cfg)
				if errs := configv1alpha1.Validate(cfg, builtin.Registry().Has); len(errs) > 0 {
					t.Fatalf("the controller would not start: %v\n%s", errs.ToAggregate(), data)
				}
				var got []wantPlugin
				for _, p := range cfg.Plugins {
					w := wantPlugin{name: p.Name, failurePolicy: string(p.FailurePolicy)}
					if p.External != nil {
						w.command, w.socket = p.External.Command, p.External.Socket
					}
					if p.Wasm != nil {
						w.module = p.Wasm.Module
					}
					got = append(got, w)
				}
				if !reflect.DeepEqual(got, r.wantPlugins) {
					t.Errorf("plugins as the controller reads them:\n got %+v\nwant %+v", got, r.wantPlugins)
				}
				if !*cfg.LeaderElection.LeaderElect {
					t.Error("leader election is off")
				}
				hasWasm := slices.ContainsFunc(r.wantPlugins, func(p wantPlugin) bool { return p.module != "" })
				if want := map[bool]string{true: wasmCacheDir}[hasWasm]; cfg.PluginHost.WasmCacheDir != want {
					t.Errorf("pluginHost.wasmCacheDir = %q, want %q", cfg.PluginHost.WasmCacheDir, want)
				}
				if cfg.PluginHost.SocketDir != "/var/run/trainforge/plugins" {
					t.Errorf("pluginHost.socketDir = %q, want the emptyDir /var/run/trainforge/plugins", cfg.PluginHost.SocketDir)
				}
				if !cfg.Webhook.CertManagement.Enabled() {
					t.Error("the controller does not manage its webhook certificate")
				}
				if cfg.Webhook.CertDir != "/tmp/k8s-webhook-server/serving-certs" {
					t.Errorf("webhook.certDir = %q, where the Deployment mounts no certificate", cfg.Webhook.CertDir)
				}
			})
		})
	}
}

// TestPod checks the controller's pod: the token goes to the manager
// only, every plugin sidecar reaches the controller at the socket the
// configuration file names and sees nothing but the sockets, and every
// container passes Pod Security "restricted".
func TestPod(t *testing.T) {
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range renders(t) {
		t.Run(r.name, func(t *testing.T) {
			dep := convert[appsv1.Deployment](t, find(t, r.objs, "Deployment", "trainforge-controller"))
			spec := dep.Spec.Template.Spec
			res := psapolicy.AggregateCheckResults(evaluator.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &dep.Spec.Template.ObjectMeta, &spec))
			if !res.Allowed {
				t.Errorf("Pod Security restricted forbids the pod: %s", res.ForbiddenDetail())
			}
			if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
				t.Error("automountServiceAccountToken is not false: every container would get the controller's token")
			}
			// The volumes that hold a credential: the token, the webhook's key.
			secretVolumes := map[string]bool{}
			tokenVolume := ""
			for _, v := range spec.Volumes {
				if v.Secret != nil {
					secretVolumes[v.Name] = true
				}
				if v.Projected != nil {
					for _, s := range v.Projected.Sources {
						if s.ServiceAccountToken != nil {
							secretVolumes[v.Name] = true
							tokenVolume = v.Name
						}
					}
				}
			}
			if tokenVolume == "" {
				t.Fatal("no projected service-account token volume")
			}
			all := append(slices.Clone(spec.InitContainers), spec.Containers...)
			var sidecars []string
			for _, c := range all {
				if c.Name == "manager" {
					if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
						return m.Name == tokenVolume && m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount"
					}) {
						t.Errorf("the manager does not mount the token at /var/run/secrets/kubernetes.io/serviceaccount: %+v", c.VolumeMounts)
					}
					continue
				}
				sidecars = append(sidecars, c.Name)
				for _, m := range c.VolumeMounts {
					if secretVolumes[m.Name] {
						t.Errorf("container %s mounts %s, a credential of the controller", c.Name, m.Name)
					}
					if m.Name != "plugin-sockets" {
						t.Errorf("container %s mounts %s; a plugin sidecar gets the sockets only", c.Name, m.Name)
					}
				}
				env := map[string]string{}
				for _, e := range c.Env {
					env[e.Name] = e.Value
				}
				want := sock(strings.TrimPrefix(c.Name, "plugin-"))
				if env["TRAINFORGE_PLUGIN_SOCKET"] != want {
					t.Errorf("container %s: TRAINFORGE_PLUGIN_SOCKET = %q, want %q", c.Name, env["TRAINFORGE_PLUGIN_SOCKET"], want)
				}
				if c.Resources.Requests.Memory().IsZero() {
					t.Errorf("container %s requests no memory", c.Name)
				}
			}
			if len(r.sidecars) > 0 && (spec.SecurityContext == nil || spec.SecurityContext.FSGroup == nil) {
				t.Error("no pod fsGroup: the manager may not connect to a sidecar's socket (0660) unless it runs as the plugin's user")
			}
			var want []string
			for _, s := range r.sidecars {
				want = append(want, "plugin-"+strings.ToLower(s))
			}
			if !slices.Equal(sidecars, want) {
				t.Errorf("plugin sidecars %v, want %v", sidecars, want)
			}
			// Each sidecar's socket is the one the configuration names.
			for _, p := range r.wantPlugins {
				if p.socket != "" && !slices.Contains(sidecars, "plugin-"+strings.ToLower(p.name)) {
					t.Errorf("the configuration reaches %s at %s, but no sidecar serves it", p.name, p.socket)
				}
			}
			manager := spec.Containers[slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == "manager" })]
			for _, name := range []string{"POD_NAME", "POD_NAMESPACE"} {
				if !slices.ContainsFunc(manager.Env, func(e corev1.EnvVar) bool { return e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil }) {
					t.Errorf("the manager has no %s from the downward API", name)
				}
			}
			if manager.LivenessProbe == nil || manager.ReadinessProbe == nil || manager.Resources.Requests.Cpu().IsZero() {
				t.Error("the manager lacks a probe or resource requests")
			}
			// Each wasm module is a file of a read-only volume of the
			// manager's, a ConfigMap's key or an OCI image's file.
			volumes := map[string]corev1.Volume{}
			for _, v := range spec.Volumes {
				volumes[v.Name] = v
			}
			if slices.ContainsFunc(r.wantPlugins, func(p wantPlugin) bool { return p.module != "" }) {
				i := slices.IndexFunc(manager.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == wasmCacheDir })
				if i < 0 || manager.VolumeMounts[i].ReadOnly || volumes[manager.VolumeMounts[i].Name].EmptyDir == nil {
					t.Errorf("the manager has no writable emptyDir at %s, the wasm compilation cache", wasmCacheDir)
				}
			}
			for _, p := range r.wantPlugins {
				if p.module == "" {
					continue
				}
				i := slices.IndexFunc(manager.VolumeMounts, func(m corev1.VolumeMount) bool {
					return m.MountPath == filepath.Dir(p.module)
				})
				if i < 0 {
					t.Errorf("the configuration loads %s from %s, but the manager mounts nothing at %s", p.name, p.module, filepath.Dir(p.module))
					continue
				}
				m := manager.VolumeMounts[i]
				v := volumes[m.Name]
				switch {
				case !m.ReadOnly:
					t.Errorf("the manager mounts %s's module writable", p.name)
				case v.ConfigMap == nil && (v.Image == nil || v.Image.Reference == ""):
					t.Errorf("%s's module comes from volume %s, neither a ConfigMap nor an image: %+v", p.name, m.Name, v.VolumeSource)
				case v.ConfigMap != nil && len(v.ConfigMap.Items) > 0:
					t.Errorf("%s's ConfigMap volume lists items; the module's file name is its key", p.name)
				}
			}
		})
	}
}

// allows says whether rules grant verb on group/resource.
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && (slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
			return true
		}
	}
	return false
}

// TestClusterRole checks that the controller's ClusterRole has the
// generated rules and each enabled plugin's, and no plugin's rules when
// the plugin is off.
func TestClusterRole(t *testing.T) {
	generated := objects(t, mustRead(t, "config/rbac/role.yaml"))
	genRules := convert[rbacv1.ClusterRole](t, find(t, generated, "ClusterRole", "trainforge-controller")).Rules
	for _, r := range renders(t) {
		t.Run(r.name, func(t *testing.T) {
			role := convert[rbacv1.ClusterRole](t, find(t, r.objs, "ClusterRole", "trainforge-controller"))
			want := append(slices.Clone(genRules), r.rules...)
			for _, rule := range want {
				for _, g := range rule.APIGroups {
					for _, res := range rule.Resources {
						for _, v := range rule.Verbs {
							if !allows(role.Rules, g, res, v) {
								t.Errorf("the ClusterRole does not allow %s %s.%s", v, res, g)
							}
						}
					}
				}
			}
			if len(r.rules) == 0 && allows(role.Rules, "", "secrets", "get") {
				t.Error("the ClusterRole lets the controller read every Secret, with no plugin that needs it")
			}
			if !slices.ContainsFunc(r.objs, func(o *unstructured.Unstructured) bool {
				return o.GetKind() == "ClusterRoleBinding" && o.GetName() == "trainforge-controller"
			}) {
				t.Error("no ClusterRoleBinding trainforge-controller")
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestChartCopies checks that the chart's copies of generated files are
// those make generate wrote last (make generate refreshes them).
func TestChartCopies(t *testing.T) {
	pairs := map[string]string{
		"charts/trainforge/files/role.yaml":    "config/rbac/role.yaml",
		"charts/trainforge/files/webhook.yaml": "config/webhook/manifests.yaml",
	}
	crds, err := filepath.Glob(filepath.Join(repoRoot(t), "config/crd/bases/*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	for _, c := range crds {
		pairs["charts/trainforge/crds/"+filepath.Base(c)] = "config/crd/bases/" + filepath.Base(c)
	}
	for copy, orig := range pairs {
		if !bytes.Equal(mustRead(t, copy), mustRead(t, orig)) {
			t.Errorf("%s differs from %s: run make generate", copy, orig)
		}
	}
}

// TestRenderIsStable renders each install twice: no generated names, no
// random values.
func TestRenderIsStable(t *testing.T) {
	for _, path := range []string{"config/default", "config/runtimes"} {
		if !bytes.Equal(kustomizeBuild(t, path), kustomizeBuild(t, path)) {
			t.Errorf("kustomize build %s differs between two runs", path)
		}
	}
	if !bytes.Equal(helmTemplate(t, "charts/trainforge/ci/vendor-plugins-values.yaml"), helmTemplate(t, "charts/trainforge/ci/vendor-plugins-values.yaml")) {
		t.Error("helm template differs between two runs")
	}
}

// TestChartRejectsMistakes checks that a wrong plugin entry fails the
// render with a message that names it.
func TestChartRejectsMistakes(t *testing.T) {
	const sum = "plugins.JAX.sha256=0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
	for set, want := range map[string]string{
		"plugins.MPI.enabled=true,plugins.MPI.command=/bin/mpi":                                              "plugins.MPI sets both image.repository",
		"plugins.Torch.failurePolicy=Sometimes":                                                              "plugins.Torch.failurePolicy must be Fail or Ignore",
		"plugins.Torch.callTimeout=5s":                                                                       "plugins.Torch sets commandArgs, startTimeout or callTimeout",
		"extraConfig.plugins[0].name=X":                                                                      "extraConfig.plugins",
		"plugins.My_Plugin.enabled=true,plugins.My_Plugin.order=5":                                           "plugins.My_Plugin: the name must be",
		"plugins.JAX.enabled=true,plugins.JAX.wasm.configMap=jax,plugins.JAX.sha256=abc":                     "plugins.JAX.sha256 must be the module's hex SHA-256",
		"plugins.JAX.enabled=true,plugins.JAX.wasm.configMap=jax":                                            "plugins.JAX.sha256 must be",
		"plugins.JAX.enabled=true,plugins.JAX.wasm.file=jax.wasm," + sum:                                     "plugins.JAX.wasm takes its module from exactly one of",
		"plugins.JAX.enabled=true,plugins.JAX.wasm.configMap=jax,plugins.JAX.wasm.image.repository=r," + sum: "plugins.JAX.wasm takes its module from exactly one of",
		"plugins.JAX.enabled=true,plugins.JAX.wasm.configMap=jax,plugins.JAX.command=/bin/jax," + sum:        "plugins.JAX sets both wasm",
		"plugins.JAX.enabled=true,plugins.JAX.wasm=x," + sum:                                                 "plugins.JAX.wasm must be a map",
	} {
		_, err := helmTemplateErr(t, strings.Split(set, ","))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: got %v, want an error with %q", set, err, want)
		}
	}
}

// TestHighAvailability checks the HA example: two replicas, a
// PodDisruptionBudget that keeps one and selects the controller's pods,
// and none with a single replica (it would block every node drain).
func TestHighAvailability(t *testing.T) {
	ha := objects(t, helmTemplate(t, "charts/trainforge/ci/ha-values.yaml"))
	dep := convert[appsv1.Deployment](t, find(t, ha, "Deployment", "trainforge-controller"))
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", dep.Spec.Replicas)
	}
	pdb := convert[policyv1.PodDisruptionBudget](t, find(t, ha, "PodDisruptionBudget", "trainforge-controller"))
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget minAvailable = %v, want 1", pdb.Spec.MinAvailable)
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(dep.Spec.Template.Labels)) {
		t.Errorf("the PodDisruptionBudget's selector %v does not select the controller's pods %v", pdb.Spec.Selector, dep.Spec.Template.Labels)
	}
	if dep.Spec.Template.Spec.Affinity == nil || dep.Spec.Template.Spec.Affinity.PodAntiAffinity == nil {
		t.Error("the replicas may share a node: no pod anti-affinity")
	}
	for _, o := range objects(t, helmTemplate(t, "charts/trainforge/ci/default-values.yaml")) {
		if o.GetKind() == "PodDisruptionBudget" {
			t.Error("a PodDisruptionBudget with one replica blocks node drains")
		}
	}
}

// TestHelmLint runs helm lint with each example values file.
func TestHelmLint(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "charts/trainforge/ci/*-values.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("example values files: %v %v", files, err)
	}
	for _, f := range files {
		cmd := exec.Command(helm(t), "lint", "--strict", filepath.Join(repoRoot(t), "charts/trainforge"), "-f", f)
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("helm lint -f %s: %v\n%s", filepath.Base(f), err, out)
		}
	}
}
