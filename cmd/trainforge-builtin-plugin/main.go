// Command trainforge-builtin-plugin serves one of Trainforge's built-in
// plugins out of process, as an external plugin, with sdk.Serve:
//
//	trainforge-builtin-plugin <name>
//
// The controller starts it when the configuration file enables the plugin
// as external, for example:
//
//	plugins:
//	- name: Torch
//	  external:
//	    command: /plugins/trainforge-builtin-plugin
//	    args: ["Torch"]
//
// It exists to run a built-in the way third-party plugins run (to compare
// the two paths, or to isolate a plugin from the controller's process).
// Run by hand, it says so and exits with status 1; with no name, an
// unknown name or extra arguments it prints its usage, which lists the
// built-in names, and exits with status 2; --help prints the usage and
// exits with status 0. It writes only to stderr: stdout belongs to the
// plugin protocol.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk"
)

func main() {
	// main returns after a served plugin rather than exiting with 0: built
	// as WebAssembly, sdk.Serve returns at once and the module must stay.
	if code := run(os.Args[1:], os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// serve serves the plugins a factory makes from the host's facts; tests
// replace it.
var serve = sdk.ServeFactory

// run serves the built-in plugin that args name and returns the exit
// status.
func run(args []string, stderr io.Writer) int {
	registry := builtin.Registry()
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-help" || args[0] == "-h") {
		usage(stderr, registry)
		return 0
	}
	if len(args) != 1 {
		if len(args) == 0 {
			fmt.Fprintln(stderr, "trainforge-builtin-plugin: name the built-in plugin to serve")
		} else {
			fmt.Fprintf(stderr, "trainforge-builtin-plugin: want one plugin name, got %d arguments: %s\n", len(args), strings.Join(args, " "))
		}
		usage(stderr, registry)
		return 2
	}
	factory, ok := registry[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "trainforge-builtin-plugin: no built-in plugin is named %q\n", args[0])
		usage(stderr, registry)
		return 2
	}
	serve(factory)
	return 0
}

func usage(w io.Writer, registry framework.Registry) {
	fmt.Fprintf(w, `usage: trainforge-builtin-plugin <name>

Serves the built-in Trainforge plugin <name> as an external plugin. The
Trainforge controller starts it; enable it in the controller's configuration
file:

  plugins:
  - name: <name>
    external:
      command: /path/to/trainforge-builtin-plugin
      args: ["<name>"]

Built-in plugins: %s
`, strings.Join(registry.Names(), ", "))
}
