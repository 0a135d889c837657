package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/framework/remote"
)

// mainEnv makes the test binary run main instead of the tests, so that the
// tests can start it as a plugin.
const mainEnv = "TRAINFORGE_BUILTIN_PLUGIN_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func TestRun(t *testing.T) {
	names := builtin.Registry().Names()
	cases := []struct {
		name      string
		args      []string
		wantCode  int
		wantServe string
		want      []string
	}{
		{name: "a built-in name", args: []string{"Torch"}, wantServe: "Torch"},
		{name: "another built-in name", args: []string{"Coscheduling"}, wantServe: "Coscheduling"},
		{name: "--help", args: []string{"--help"}, want: []string{"usage: trainforge-builtin-plugin <name>"}},
		{name: "-h", args: []string{"-h"}, want: []string{"usage: trainforge-builtin-plugin <name>"}},
		{name: "no name", wantCode: 2, want: []string{"name the built-in plugin to serve", "usage:"}},
		{name: "an unknown name", args: []string{"Horovod"}, wantCode: 2, want: []string{`no built-in plugin is named "Horovod"`, "usage:"}},
		{name: "a name in the wrong case", args: []string{"torch"}, wantCode: 2, want: []string{`no built-in plugin is named "torch"`}},
		{name: "two names", args: []string{"Torch", "JobSet"}, wantCode: 2, want: []string{"want one plugin name, got 2 arguments: Torch JobSet", "usage:"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var served []string
			orig := serve
			serve = func(f framework.Factory) { served = append(served, f(framework.Host{}).Describe().Name) }
			t.Cleanup(func() { serve = orig })

			var stderr bytes.Buffer
			if code := run(tc.args, &stderr); code != tc.wantCode {
				t.Errorf("run(%q) = %d, want %d", tc.args, code, tc.wantCode)
			}
			var wantServed []string
			if tc.wantServe != "" {
				wantServed = []string{tc.wantServe}
			}
			if !slices.Equal(served, wantServed) {
				t.Errorf("served %v, want %v", served, wantServed)
			}
			out := stderr.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stderr does not say %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "usage:") && !strings.Contains(out, "Built-in plugins: "+strings.Join(names, ", ")) {
				t.Errorf("the usage does not list the built-in plugins %v:\n%s", names, out)
			}
			if tc.wantServe != "" && out != "" {
				t.Errorf("serving wrote %q to stderr, want nothing", out)
			}
		})
	}
}

// start runs the binary (this test binary, running main) as the plugin
// name, the way the controller starts an external plugin.
func start(t *testing.T, name string) *remote.Client {
	t.Helper()
	cmd := exec.Command(os.Args[0], name)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  remote.Handshake,
		VersionedPlugins: remote.PluginSet(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           hclog.NewNullLogger(),
	})
	t.Cleanup(client.Kill)
	proto, err := client.Client()
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	raw, err := proto.Dispense(remote.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := raw.(*remote.Client)
	if !ok {
		t.Fatalf("Dispense returned %T, want a *remote.Client", raw)
	}
	return c
}

// TestServesEachBuiltin starts the binary for every built-in: it describes
// itself as the built-in does in-process, with the points its type
// implements.
func TestServesEachBuiltin(t *testing.T) {
	for name, factory := range builtin.Registry() {
		t.Run(name, func(t *testing.T) {
			p := factory(framework.Host{})
			got, points, err := start(t, name).Describe(context.Background())
			if err != nil {
				t.Fatalf("Describe: %v", err)
			}
			if diff := cmp.Diff(p.Describe(), got); diff != "" {
				t.Errorf("Describe out of process (-in-process +out):\n%s", diff)
			}
			if diff := cmp.Diff(framework.ImplementationOf(p).Points(), points); diff != "" {
				t.Errorf("points out of process (-in-process +out):\n%s", diff)
			}
		})
	}
}

// TestTorchOutOfProcessMatchesInProcess enforces the seed's Torch example
// with Torch in-process and with Torch served by the binary: the Info must
// be the same.
func TestTorchOutOfProcessMatchesInProcess(t *testing.T) {
	spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
	ctx := context.Background()

	local := frameworktest.NewInfo(t, job, spec)
	if err := builtin.Registry()["Torch"](framework.Host{}).(framework.MLPolicyEnforcer).EnforceMLPolicy(ctx, local, job); err != nil {
		t.Fatal(err)
	}
	served := frameworktest.NewInfo(t, job, spec)
	if err := start(t, "Torch").EnforceMLPolicy(ctx, served, job); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonOf(t, local), jsonOf(t, served)); diff != "" {
		t.Errorf("Info (-in-process +out of process):\n%s", diff)
	}
}

func jsonOf(t *testing.T, info *framework.Info) string {
	t.Helper()
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestRunByHand runs the binary without a host: it says it is a plugin and
// how to enable it, and exits with status 1.
func TestRunByHand(t *testing.T) {
	cmd := exec.Command(os.Args[0], "Torch")
	cmd.Env = []string{mainEnv + "=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit status %d (%v), want 1", code, err)
	}
	if stdout.Len() > 0 {
		t.Errorf("wrote %q to stdout, want nothing", stdout.String())
	}
	for _, w := range []string{"This is a Trainforge plugin, Torch", "configuration file", `args: ["Torch"]`} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr does not say %q:\n%s", w, stderr.String())
		}
	}
}

// TestTrainJobStatusOutOfProcessGetsTheHostsFacts: TrainJobStatus served
// by the binary is made from the facts the host sends with Configure
// (sdk.ServeFactory), so it points pods to the same status endpoint as
// the in-process plugin made from the same Handle.
func TestTrainJobStatusOutOfProcessGetsTheHostsFacts(t *testing.T) {
	spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
	ctx := context.Background()
	host := framework.Host{Status: framework.StatusEndpoint{URL: "https://progress.ml-system.svc:8443", CAConfigMapName: "progress-ca", TokenExpirationSeconds: 7200}}

	p := builtin.Registry()["TrainJobStatus"](host)
	if err := p.(framework.Configurable).Configure(ctx, nil); err != nil {
		t.Fatal(err)
	}
	local := frameworktest.NewInfo(t, job, spec)
	if err := p.(framework.MLPolicyEnforcer).EnforceMLPolicy(ctx, local, job); err != nil {
		t.Fatal(err)
	}
	c := start(t, "TrainJobStatus")
	if err := c.ConfigureWith(ctx, nil, host); err != nil {
		t.Fatal(err)
	}
	served := frameworktest.NewInfo(t, job, spec)
	if err := c.EnforceMLPolicy(ctx, served, job); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonOf(t, local), jsonOf(t, served)); diff != "" {
		t.Errorf("Info (-in-process +out of process):\n%s", diff)
	}
	if !strings.Contains(jsonOf(t, served), "https://progress.ml-system.svc:8443/apis/") {
		t.Errorf("the served plugin does not point to the host's endpoint:\n%s", jsonOf(t, served))
	}
}
