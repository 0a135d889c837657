package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/test/testenv"
)

// certManagementConfig runs the controller with webhook.certManagement: it
// makes its own serving certificate for localhost, where the API server
// reaches it, and writes the CA into the webhook configuration.
const certManagementConfig = `apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
metrics:
  bindAddress: {{ .MetricsAddr }}
health:
  healthProbeBindAddress: {{ .ProbeAddr }}
webhook:
  port: {{ .WebhookPort }}
  certDir: {{ .CertDir }}
  certManagement:
    namespace: trainforge-system
    extraDNSNames: [localhost]
`

// startWithInstalledWebhook starts an API server of its own, stopped with
// the spec tree, with the controller's namespace and the validating webhook
// configuration as an install has it: reaching the controller at a URL on
// localhost, with no CA until a controller with webhook.certManagement
// writes it. It returns where the controller must serve its webhooks.
func startWithInstalledWebhook(dir string) (ownAPIServer, envtest.WebhookInstallOptions, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	GinkgoHelper()
	server := startAPIServer(testenv.Options{}, dir)
	Expect(server.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "trainforge-system"}})).To(Succeed())
	port := freePort()
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "webhook", "manifests.yaml"))
	Expect(err).NotTo(HaveOccurred())
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	Expect(yaml.Unmarshal(bytes.TrimPrefix(data, []byte("---\n")), vwc)).To(Succeed())
	vwc.Name = "trainforge-validating-webhook-configuration"
	for i := range vwc.Webhooks {
		w := &vwc.Webhooks[i]
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{
			URL: ptr.To("https://localhost:" + strconv.Itoa(port) + *w.ClientConfig.Service.Path),
		}
	}
	Expect(server.client.Create(ctx, vwc)).To(Succeed())
	return server, envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1", LocalServingPort: port, LocalServingCertDir: filepath.Join(dir, "serving-certs")}, vwc
}

var _ = Describe("webhook certificates managed by the controller itself", Ordered, func() {
	It("are made, kept in a Secret, written into the webhook configuration's caBundle, and serve admission", func() {
		bin, dir := binDir(), tempDir("trainforge-certs-")
		server, webhook, vwc := startWithInstalledWebhook(dir)
		c, certDir := server.client, webhook.LocalServingCertDir
		startController(bin, dir, server.kubeconfigPath, webhook, certManagementConfig)

		By("the Secret holds a CA and a serving certificate")
		Eventually(func(g Gomega) map[string][]byte {
			s := &corev1.Secret{}
			g.Expect(c.Get(ctx, types.NamespacedName{Namespace: "trainforge-system", Name: "trainforge-webhook-server-cert"}, s)).To(Succeed())
			return s.Data
		}).Should(And(HaveKey("ca.crt"), HaveKey("tls.crt"), HaveKey("tls.key")))
		Eventually(filepath.Join(certDir, "tls.crt")).Should(BeAnExistingFile())

		By("the webhook configuration carries the CA")
		Eventually(func(g Gomega) [][]byte {
			got := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			g.Expect(c.Get(ctx, types.NamespacedName{Name: vwc.Name}, got)).To(Succeed())
			var bundles [][]byte
			for _, w := range got.Webhooks {
				bundles = append(bundles, w.ClientConfig.CABundle)
			}
			return bundles
		}).Should(HaveEach(Not(BeEmpty())))

		By("admission answers through the managed certificate")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "certs-"}}
		Expect(c.Create(ctx, ns)).To(Succeed())
		bad := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "bad"}}
		bad.Spec.RuntimeRef = trainer.RuntimeRef{Name: "x", Kind: ptr.To("JAXRuntime")}
		Eventually(func() error { return c.Create(ctx, bad) }).Should(MatchError(ContainSubstring(
			`admission webhook "vtrainjob.trainer.kubeflow.org" denied the request`)))
	})
})
