package deepspeed_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework/external"
	"github.com/trainforge/trainforge/framework/remote/remotetest"
)

// TestBadAnswersFromPython sends every bad answer of the host's table
// (framework/remote/remotetest/bad-answers.json), in every format, from a
// Python plugin (tests/bad_answers_plugin.py: plugin.py's service
// answering with the table) through the plugin host configured with the
// table's limits, and checks that the host says what the Go table test
// (framework/remote TestBadAnswersInEveryFormat) has it say: a Python
// plugin's answers go through the same checks.
func TestBadAnswersFromPython(t *testing.T) {
	start(t) // skips without Debian's modules
	table, err := remotetest.Load()
	if err != nil {
		t.Fatal(err)
	}
	path, err := filepath.Abs(filepath.Join("..", "..", "..", remotetest.TableFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg := configv1alpha1.Defaulted(&configv1alpha1.Configuration{
		PluginHost: configv1alpha1.PluginHostConfig{Limits: configv1alpha1.PluginLimits{
			MaxMessageBytes: ptr.To(int32(table.Limits.MaxMessageBytes)),
			MaxObjectBytes:  ptr.To(int32(table.Limits.MaxObjectBytes)),
			MaxDepth:        ptr.To(int32(table.Limits.MaxDepth)),
		}},
		Plugins: []configv1alpha1.PluginConfig{{Name: "DeepSpeed", External: &configv1alpha1.ExternalPlugin{
			Command: python, Args: []string{"tests/bad_answers_plugin.py"},
			Env: []configv1alpha1.EnvVar{{Name: "BAD_ANSWERS", Value: path}},
		}}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	p, err := external.Start(ctx, external.OptionsFor(cfg, 0, logr.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); cancel() })
	if err := p.Ready(); err != nil {
		t.Fatalf("the plugin did not start: %v", err)
	}
	for i, row := range table.Rows {
		for _, format := range remotetest.Formats {
			a := row.Answers[format]
			t.Run(fmt.Sprintf("%d %s/%s", i, row.Name, format), func(t *testing.T) {
				info, err := table.NewInfo()
				if err != nil {
					t.Fatal(err)
				}
				got := remotetest.Call(ctx, p.Client(), format, info, remotetest.Job(i, format))
				if want := a.HostMessage(); got != want {
					t.Errorf("answer %s\n got: %q\nwant: %q", a.Shown(), got, want)
				}
			})
		}
	}
}
