package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/internal/operator"
)

const controllerNamespace = "trainforge-system"

// asControllerServiceAccount binds the role that `make generate` writes to
// config/rbac to a service account and returns a config that impersonates
// it. The test-only ConfigMapWatcher plugin gets read access to ConfigMaps
// on top, as an admin would grant a vendor plugin's watches.
func asControllerServiceAccount(ctx context.Context) *rest.Config {
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "rbac", "role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	// The file holds the ClusterRole, then the Role of the controller's own
	// namespace (the webhook certificate's Secret).
	docs := strings.Split(string(data), "\n---\n")
	Expect(docs).To(HaveLen(2), "config/rbac/role.yaml: want a ClusterRole and a Role")
	role := &rbacv1.ClusterRole{}
	Expect(yaml.UnmarshalStrict([]byte(docs[0]), role)).To(Succeed())
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	nsRole := &rbacv1.Role{}
	Expect(yaml.UnmarshalStrict([]byte(docs[1]), nsRole)).To(Succeed())
	Expect(nsRole.Namespace).To(Equal(controllerNamespace))

	watcherRole := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "configmap-watcher"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
	}
	Expect(k8sClient.Create(ctx, watcherRole)).To(Succeed())

	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controllerNamespace}})).To(Succeed())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "trainforge-controller"}}
	Expect(k8sClient.Create(ctx, sa)).To(Succeed())
	Expect(k8sClient.Create(ctx, nsRole)).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: nsRole.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: nsRole.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
	})).To(Succeed())
	for _, r := range []string{role.Name, watcherRole.Name} {
		Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: r},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
		})).To(Succeed())
	}

	cfg := rest.CopyConfig(restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name}
	return cfg
}

// generatedClusterRole is the ClusterRole of config/rbac/role.yaml.
func generatedClusterRole() *rbacv1.ClusterRole {
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "rbac", "role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.UnmarshalStrict([]byte(strings.Split(string(data), "\n---\n")[0]), role)).To(Succeed())
	return role
}

var _ = Describe("the generated RBAC role", func() {
	It("is needed whole: without create and patch on JobSets the controller refuses to start, naming the plugin and the verbs", func() {
		role := generatedClusterRole()
		role.Name = "trainforge-controller-without-jobset-writes"
		found := false
		for i, r := range role.Rules {
			if slices.Contains(r.Resources, "jobsets") {
				role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return v == "create" || v == "patch" })
				found = true
			}
		}
		Expect(found).To(BeTrue(), "config/rbac/role.yaml has no rule for jobsets")
		createCleaned(role)
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "trainforge-trimmed"}}
		createCleaned(sa)
		createCleaned(&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
		})
		trimmed := rest.CopyConfig(restConfig)
		trimmed.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name}

		cfg, err := configv1alpha1.Load("", nil)
		Expect(err).NotTo(HaveOccurred())
		cfg.Metrics.BindAddress = "0"
		cfg.Health.HealthProbeBindAddress = "0"
		fw, err := operator.NewFramework(ctx, cfg, builtin.Registry(), logr.Discard())
		Expect(err).NotTo(HaveOccurred())
		// RBAC takes a moment to see a new binding; the error must be about
		// jobsets alone once it does.
		Eventually(func() error {
			_, err := operator.NewManager(ctx, trimmed, operator.Options{Config: cfg, Framework: fw})
			return err
		}).Should(MatchError(And(
			ContainSubstring("plugin JobSet builds jobset.x-k8s.io/v1alpha2, Kind=JobSet, but the controller may not create, patch jobsets.jobset.x-k8s.io in all namespaces"),
			ContainSubstring("grant its service account these verbs"),
		)))
	})
})
