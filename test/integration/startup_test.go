package integration

import (
	"context"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/internal/operator"
)

// widgetBuilder builds a kind that no CRD of the test cluster serves.
type widgetBuilder struct{}

func (widgetBuilder) Describe() framework.Description {
	return framework.Description{Name: "Widget", Builds: []schema.GroupVersionKind{{Group: "example.com", Version: "v1", Kind: "Widget"}}}
}

func (widgetBuilder) Build(context.Context, *framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
	return nil, nil
}

// secretBuilder builds Secrets, which the generated RBAC role does not
// let the controller manage.
type secretBuilder struct{}

func (secretBuilder) Describe() framework.Description {
	return framework.Description{Name: "SecretMaker", Builds: []schema.GroupVersionKind{{Version: "v1", Kind: "Secret"}}}
}

func (secretBuilder) Build(context.Context, *framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
	return nil, nil
}

var _ = Describe("start-up", func() {
	It("fails, naming the plugin and the verbs, when the controller may not manage a kind a plugin builds", func() {
		cfg := &configv1alpha1.Configuration{Plugins: []configv1alpha1.PluginConfig{{Name: "PlainML"}, {Name: "SecretMaker"}}}
		configv1alpha1.SetDefaults(cfg)
		cfg.Metrics.BindAddress = "0"
		cfg.Health.HealthProbeBindAddress = "0"
		registry := framework.Registry{"SecretMaker": func(framework.Handle) framework.Plugin { return secretBuilder{} }}
		registry["PlainML"] = builtin.Registry()["PlainML"]
		fw, err := operator.NewFramework(ctx, cfg, registry, logr.Discard())
		Expect(err).NotTo(HaveOccurred())

		// As the controller's service account, bound to the generated role.
		_, err = operator.NewManager(ctx, controllerConfig, operator.Options{Config: cfg, Framework: fw})
		Expect(err).To(MatchError(And(
			ContainSubstring("plugin SecretMaker builds /v1, Kind=Secret, but the controller may not get, list, watch, create, patch secrets in all namespaces"),
			ContainSubstring("grant its service account these verbs"),
		)))
	})

	It("fails, naming the plugin, when a plugin builds a kind the cluster does not serve", func() {
		cfg := &configv1alpha1.Configuration{Plugins: []configv1alpha1.PluginConfig{{Name: "PlainML"}, {Name: "Widget"}}}
		configv1alpha1.SetDefaults(cfg)
		cfg.Metrics.BindAddress = "0"
		cfg.Health.HealthProbeBindAddress = "0"
		registry := framework.Registry{"Widget": func(framework.Handle) framework.Plugin { return widgetBuilder{} }}
		registry["PlainML"] = builtin.Registry()["PlainML"]
		fw, err := operator.NewFramework(ctx, cfg, registry, logr.Discard())
		Expect(err).NotTo(HaveOccurred())

		_, err = operator.NewManager(ctx, restConfig, operator.Options{Config: cfg, Framework: fw})
		Expect(err).To(MatchError(And(
			ContainSubstring("plugin Widget builds example.com/v1, Kind=Widget, which the cluster does not serve"),
			ContainSubstring("remove Widget from the plugins of the configuration file"),
		)))
	})
})
