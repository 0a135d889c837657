package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
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
