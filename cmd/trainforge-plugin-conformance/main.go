// Command trainforge-plugin-conformance checks that a Trainforge plugin
// binary, written in any language, behaves as the controller needs:
//
//	trainforge-plugin-conformance [flags] -- COMMAND [ARGS...]
//	trainforge-plugin-conformance [flags] -- MODULE.wasm [ARGS...]
//
// It starts COMMAND through the controller's own plugin host (the go-plugin
// handshake, mutual TLS, gRPC), or a WebAssembly module (a file whose name
// ends in .wasm) through the controller's wasm host with a wasm entry's
// defaults, then checks the properties every plugin must
// have (those of package sdk/sdktest: an honest Describe, accepted args,
// Enforce answers that apply and are deterministic and idempotent, built
// objects the host accepts, Validate answers that name a field, Status
// answers the API server accepts) on each case, and prints one line per
// property and case: PASS, FAIL with the reason, or SKIP with why. It exits
// with status 1 when a property fails or the plugin does not start, 2 on a
// usage error, 0 otherwise.
//
// A case is a YAML file holding a runtime (TrainingRuntime or
// ClusterTrainingRuntime) and a TrainJob, separated by "---"; it is named
// after the file. Without --case, the cases come from what the plugin says
// it owns (sdktest.DefaultCases): for each policy key, a runtime that sets
// it to {} with one trainer replicatedJob "node", used by a TrainJob that
// overrides nothing and one of 4 nodes with 2 GPUs each.
//
// Examples:
//
//	trainforge-plugin-conformance -- ./bin/trainforge-plugin-jax
//	trainforge-plugin-conformance -- ./bin/trainforge-plugin-jax.wasm
//	trainforge-plugin-conformance --case testdata/deepspeed.yaml -- ./bin/trainforge-plugin-mpi
//	trainforge-plugin-conformance --args '{"port": 1234}' -- /usr/bin/python3 ./plugin.py
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/external"
	"github.com/trainforge/trainforge/framework/remote"
	"github.com/trainforge/trainforge/framework/wasm"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// caseFiles is the repeatable --case flag.
type caseFiles []string

func (c *caseFiles) String() string     { return strings.Join(*c, ",") }
func (c *caseFiles) Set(v string) error { *c = append(*c, v); return nil }

type options struct {
	cases        caseFiles
	args         string
	startTimeout time.Duration
	timeout      time.Duration
	verbose      bool
	wasmCacheDir string
	command      []string
}

const usageText = `usage: trainforge-plugin-conformance [flags] -- COMMAND [ARGS...]

Starts the plugin COMMAND as the Trainforge controller does and checks the
properties every plugin must have, printing one line per property and case.

Flags:
`

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("trainforge-plugin-conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	fs.Var(&o.cases, "case", "a YAML file holding a runtime and a TrainJob; repeat for more cases (default: cases made from what the plugin owns)")
	fs.StringVar(&o.args, "args", "", "the plugin's args as JSON, as the configuration file's args of its entry")
	fs.DurationVar(&o.startTimeout, "start-timeout", configv1alpha1.DefaultStartTimeout, "how long the plugin may take to start, describe itself and take its args")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long all the checks may take")
	fs.BoolVar(&o.verbose, "v", false, "also print the plugin's log (its stderr)")
	fs.StringVar(&o.wasmCacheDir, "wasm-cache-dir", "", "for a .wasm module: keep its compiled machine code in this directory, as pluginHost.wasmCacheDir does, so that the next check of the same module starts in about a second instead of compiling it again (default: compile in memory)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.command = fs.Args()
	if len(o.command) == 0 {
		fs.Usage()
		return nil, errors.New("no plugin command: give it after --, for example: -- ./bin/trainforge-plugin-jax")
	}
	if o.wasmCacheDir != "" {
		dir, err := filepath.Abs(o.wasmCacheDir)
		if err != nil {
			return nil, fmt.Errorf("--wasm-cache-dir %s: %w", o.wasmCacheDir, err)
		}
		o.wasmCacheDir = dir
	}
	if o.args != "" && !json.Valid([]byte(o.args)) {
		return nil, fmt.Errorf("--args %s is not JSON; give the args as a JSON object, for example --args '{\"port\": 1234}'", o.args)
	}
	return o, nil
}

// run checks one plugin and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "trainforge-plugin-conformance:", err)
		return 2
	}
	var cases []sdktest.Case
	for _, file := range o.cases {
		name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		c, err := sdktest.LoadCase(name, file, file)
		if err != nil {
			fmt.Fprintf(stderr, "trainforge-plugin-conformance: --case %s: %v\n", file, err)
			return 2
		}
		c.Args = pluginArgs(o.args)
		cases = append(cases, c)
	}

	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	var rpc pluginv1.PluginServiceClient
	if strings.HasSuffix(o.command[0], ".wasm") {
		opts, err := wasmOptions(o, pluginLogger(stderr, o.verbose))
		if err != nil {
			fmt.Fprintln(stdout, "FAIL start:", err)
			return 1
		}
		p, err := wasm.Start(ctx, opts)
		if err != nil {
			fmt.Fprintln(stdout, "FAIL start:", err)
			return 1
		}
		defer p.Close()
		rpc = p.RPC()
	} else {
		p, err := external.Start(ctx, hostOptions(o, pluginLogger(stderr, o.verbose)))
		if err != nil {
			fmt.Fprintln(stdout, "FAIL start:", err)
			return 1
		}
		defer p.Close()
		if rpc, err = p.RPC(); err != nil {
			why := p.Down()
			if why == "" {
				why = err.Error()
			}
			fmt.Fprintln(stdout, "FAIL start: the plugin did not start:", why)
			return 1
		}
	}
	d, points, err := remote.NewClient(rpc, remote.Limits{}).Describe(ctx)
	if err != nil {
		fmt.Fprintln(stdout, "FAIL describe:", err)
		return 1
	}
	fmt.Fprintf(stdout, "plugin %s %s: points %v, mlPolicy keys %q, podGroupPolicy keys %q, builds %v\n",
		d.Name, d.Version, points, d.MLPolicyKeys, d.PodGroupPolicyKeys, kinds(d))
	if len(cases) == 0 {
		cases = sdktest.DefaultCases(d)
		for i := range cases {
			cases[i].Args = pluginArgs(o.args)
		}
		fmt.Fprintf(stdout, "cases: %s (made from what the plugin owns; give your own with --case)\n", caseNames(cases))
	} else {
		fmt.Fprintf(stdout, "cases: %s\n", caseNames(cases))
	}

	passed, failed, skipped := 0, 0, 0
	for _, r := range sdktest.Run(ctx, rpc, cases...) {
		fmt.Fprintln(stdout, r)
		switch {
		case r.Skipped != "":
			skipped++
		case r.Passed():
			passed++
		default:
			failed++
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 {
		return 1
	}
	return 0
}

// hostOptions runs the plugin as the controller would run a configuration
// entry naming it: the entry's defaults are the configuration's. The name
// is left empty, so that the plugin's own is taken.
func hostOptions(o *options, log logr.Logger) external.Options {
	entry := configv1alpha1.PluginConfig{External: &configv1alpha1.ExternalPlugin{
		Command:      o.command[0],
		Args:         o.command[1:],
		StartTimeout: &metav1.Duration{Duration: o.startTimeout},
	}}
	if o.args != "" {
		entry.Args = &apiextensionsv1.JSON{Raw: pluginArgs(o.args)}
	}
	cfg := configv1alpha1.Defaulted(&configv1alpha1.Configuration{Plugins: []configv1alpha1.PluginConfig{entry}})
	return external.OptionsFor(cfg, 0, log)
}

// wasmOptions runs the module as the controller would run a wasm entry
// naming it, with the entry's defaults. The tool checks the file it is
// given, so the entry's sha256 is the file's own.
func wasmOptions(o *options, log logr.Logger) (wasm.Options, error) {
	data, err := os.ReadFile(o.command[0])
	if err != nil {
		return wasm.Options{}, err
	}
	sum := sha256.Sum256(data)
	module, err := filepath.Abs(o.command[0])
	if err != nil {
		return wasm.Options{}, err
	}
	entry := configv1alpha1.PluginConfig{Wasm: &configv1alpha1.WasmPlugin{
		Module:       module,
		SHA256:       hex.EncodeToString(sum[:]),
		Args:         o.command[1:],
		StartTimeout: &metav1.Duration{Duration: o.startTimeout},
	}}
	if o.args != "" {
		entry.Args = &apiextensionsv1.JSON{Raw: pluginArgs(o.args)}
	}
	cfg := configv1alpha1.Defaulted(&configv1alpha1.Configuration{
		PluginHost: configv1alpha1.PluginHostConfig{WasmCacheDir: o.wasmCacheDir},
		Plugins:    []configv1alpha1.PluginConfig{entry},
	})
	return wasm.OptionsFor(cfg, 0, log), nil
}

func pluginArgs(args string) json.RawMessage {
	if args == "" {
		return nil
	}
	return json.RawMessage(args)
}

func kinds(d framework.Description) []string {
	out := make([]string, 0, len(d.Builds))
	for _, k := range d.Builds {
		out = append(out, k.GroupVersion().String()+"/"+k.Kind)
	}
	return out
}

func caseNames(cases []sdktest.Case) string {
	names := make([]string, 0, len(cases))
	for _, c := range cases {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// pluginLogger prints the host's messages about the plugin and the
// plugin's own log (its stderr) with verbose; otherwise nothing: a plugin
// that does not start says why in the FAIL line.
func pluginLogger(w io.Writer, verbose bool) logr.Logger {
	if !verbose {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) {
		if prefix != "" {
			args = prefix + ": " + args
		}
		fmt.Fprintln(w, args)
	}, funcr.Options{Verbosity: 1})
}
