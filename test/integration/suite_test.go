// Package integration runs the real manager (controller and webhooks)
// against a real kube-apiserver and etcd started by envtest.
package integration

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/internal/operator"
	"github.com/trainforge/trainforge/test/testenv"
)

var (
	k8sClient  client.Client
	restConfig *rest.Config
	// controllerConfig acts as the controller's service account, bound to
	// the generated RBAC role.
	controllerConfig *rest.Config
	testEnv          *testenv.Env
	cancel           context.CancelFunc
	repoRoot         string
	// statusAddr is where the status endpoint listens.
	statusAddr string
)

func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	// An Eventually returns as soon as its state is reached, so its bound
	// costs nothing when the spec passes; it is a minute so that a busy
	// machine (make test-under-load: two cores spinning beside the suite)
	// makes a spec slower, never failed.
	SetDefaultEventuallyTimeout(time.Minute)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	SetDefaultConsistentlyDuration(2 * time.Second)
	RunSpecs(t, "Integration Suite")
}

// suiteBinaries are the binaries the process specs run, built once per
// suite run (or taken from TRAINFORGE_TEST_BIN, which make
// test-integration sets) and shared by every container.
var suiteBinaries = testenv.NewBinaries(
	"cmd/trainforge-controller",
	"cmd/trainforge-builtin-plugin",
	"cmd/trainforge-plugin-jax",
	"cmd/trainforge-plugin-xgboost",
	"cmd/trainforge-plugin-mpi",
	"cmd/trainforge-plugin-volcano",
	"cmd/trainforge-plugin-flux",
	"test/plugins/faulty",
)

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))

	var err error
	repoRoot, err = testenv.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	testEnv, err = testenv.Start(testenv.Options{Webhooks: true})
	Expect(err).NotTo(HaveOccurred())
	restConfig = testEnv.Config

	scheme, err := operator.NewScheme(builtin.AddToScheme)
	Expect(err).NotTo(HaveOccurred())
	k8sClient, err = client.New(restConfig, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	cfg, err := configv1alpha1.Load("", nil)
	Expect(err).NotTo(HaveOccurred())
	cfg.Metrics.BindAddress = "0"
	cfg.Health.HealthProbeBindAddress = "0"
	wh := testEnv.WebhookInstallOptions
	cfg.Webhook.Port = ptr.To(wh.LocalServingPort)
	cfg.Webhook.CertDir = wh.LocalServingCertDir
	// The status endpoint serves with the webhook's certificate; its CA
	// is where a cert-manager Secret mounted there would put it.
	Expect(os.WriteFile(filepath.Join(wh.LocalServingCertDir, "ca.crt"), wh.LocalServingCAData, 0o600)).To(Succeed())
	statusAddr = freeAddr()
	_, statusPort, err := net.SplitHostPort(statusAddr)
	Expect(err).NotTo(HaveOccurred())
	port, err := strconv.Atoi(statusPort)
	Expect(err).NotTo(HaveOccurred())
	cfg.StatusServer.Port = ptr.To(int32(port))

	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	// The manager runs as a service account with only the generated RBAC
	// role, so a missing permission fails these tests.
	controllerConfig = asControllerServiceAccount(ctx)
	controllerConfig.Wrap(controllerWrites.wrap)
	// The built-ins, plus a plugin that only declares a watch, to show that
	// the controller follows what plugins declare.
	registry := builtin.Registry()
	Expect(registry.Register(configMapWatcherName, func(framework.Handle) framework.Plugin { return configMapWatcher{} })).To(Succeed())
	cfg.Plugins = append(cfg.Plugins, configv1alpha1.PluginConfig{Name: configMapWatcherName})
	fw, err := operator.NewFramework(ctx, cfg, registry, logf.Log)
	Expect(err).NotTo(HaveOccurred())
	mgr, err := operator.NewManager(ctx, controllerConfig, operator.Options{
		Config:         cfg,
		Framework:      fw,
		PluginKinds:    builtin.AddToScheme,
		EnableWebhooks: true,
		WebhookHost:    wh.LocalServingHost,
	})
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	// The webhooks must answer before the first spec creates anything.
	Eventually(func() error { return mgr.GetWebhookServer().StartedChecker()(nil) }).Should(Succeed())
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
	suiteBinaries.Cleanup()
})
