// Package sdk serves a Trainforge plugin in its own process: Serve, which
// turns a program into a plugin the Trainforge controller (the host) can
// start, ServeFactory for a plugin made from the host's facts
// (framework.Handle), and Logger, for logs the host forwards into its own.
// Package sdktest is the matching test kit. The plugin itself is written
// with package framework alone, helpers included (framework.Info's
// methods, framework.ToObject, framework.CreateOnce): one vocabulary, the
// built-in plugins' own.
//
// A plugin is a Go type written against package framework, exactly like the
// plugins built into Trainforge: it implements framework.Plugin (Describe)
// and the extension-point interfaces it needs (framework.Configurable,
// framework.Validator, framework.MLPolicyEnforcer,
// framework.PodGroupPolicyEnforcer, framework.Builder, framework.Watcher,
// framework.StatusReporter). The same value can be served out of process
// with Serve or registered in-process; the host cannot tell the difference.
//
// # A minimal plugin
//
// This plugin sets HELLO=world in the trainer container of every TrainJob
// whose runtime sets the mlPolicy key "hello":
//
//	// Command trainforge-plugin-hello is the Hello plugin of Trainforge.
//	package main
//
//	import (
//		"context"
//
//		corev1 "k8s.io/api/core/v1"
//
//		trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
//		"github.com/trainforge/trainforge/framework"
//		"github.com/trainforge/trainforge/sdk"
//	)
//
//	type hello struct{}
//
//	// Describe says who the plugin is: its name (as the configuration file
//	// names it) and the mlPolicy key it owns.
//	func (hello) Describe() framework.Description {
//		return framework.Description{Name: "Hello", Version: "v0.1.0", MLPolicyKeys: []string{"hello"}}
//	}
//
//	// EnforceMLPolicy changes Info, a plain Go struct; the SDK sends the
//	// host what changed, which the host applies to its own Info.
//	func (hello) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
//		_, c, err := info.Trainer()
//		if err != nil {
//			return err
//		}
//		c.UpsertEnv(corev1.EnvVar{Name: "HELLO", Value: "world"})
//		return nil
//	}
//
//	func main() {
//		sdk.Serve(hello{})
//	}
//
// Build it, put the binary where the controller can run it, and enable it in
// the controller's configuration file, after the plugins it depends on:
//
//	apiVersion: config.trainforge.dev/v1alpha1
//	kind: Configuration
//	plugins:
//	- name: PlainML
//	- name: Torch
//	- name: Hello
//	  failurePolicy: Fail        # or Ignore: skip the plugin when it fails
//	  external:
//	    command: /plugins/trainforge-plugin-hello
//	    sha256: 9f2c...          # optional; checked before every start
//	- name: JobSet
//
// # What Serve does
//
// Serve runs the plugin as a hashicorp/go-plugin gRPC plugin speaking the
// Trainforge plugin protocol (proto/trainforge/plugin/v1): it checks the
// handshake cookie the host sets, negotiates the protocol version, sets up
// mutual TLS with the host (AutoMTLS), prints the one handshake line the
// host waits for on stdout, and serves the PluginService until the host
// stops it. Each call decodes the JSON the host sends, calls the plugin's
// method and encodes the answer, so a plugin only changes a Go struct. An
// Enforce answer is what changed from the Info the plugin decoded to the
// Info it left, both encoded with the plugin's own types: Info changes for
// a host of protocol 1.2 or later, a JSON Patch for an older one. It never
// mentions a field that the plugin's build of framework.Info (or of
// k8s.io/api) does not have, so the host, which applies it to the Info it
// sent, keeps such fields: a plugin built against an older SDK does not
// erase what a newer controller sets (docs/writing-a-plugin.md, section 6,
// says what is promised and which tests hold it). When the plugin's
// encoding of the Info it decoded is the host's byte for byte, it knows
// every field the host sent, and the answer is the whole changed Info,
// which is cheaper for both. Describe lists the
// extension points the plugin's type implements; the others answer
// UNIMPLEMENTED and the host never calls them.
//
// Run by hand (without the handshake cookie), a plugin binary says it is a
// Trainforge plugin and how to enable it, and exits with status 1. A served
// plugin exits when its parent process, the host, goes away.
//
// # Serving on a socket
//
// In a pod, run the plugin in a container of its own rather than as a
// child of the controller (docs/security.md says why): set
// TRAINFORGE_PLUGIN_SOCKET (SocketEnv) to an absolute path in a directory
// the plugin's container shares with the controller's (an emptyDir), and
// give the controller the same path as the entry's `external.socket`:
//
//	plugins:
//	- name: Hello
//	  external:
//	    socket: /var/run/trainforge/plugins/hello.sock
//
// Serve then serves the same PluginService, and gRPC health, on that Unix
// socket (ServeSocket), made with mode 0660 (SocketMode): no handshake
// line, no cookie, no TLS, and no watch of the parent process. A socket
// left behind by a killed plugin is removed first; the socket is removed
// when the plugin stops, on SIGTERM or SIGINT, after the calls under way
// finish. The controller connects to it, describes and configures the
// plugin as it does a process, and connects again, with its restart
// backoff, whenever the connection breaks.
//
// # Rules a plugin must follow
//
// Only stderr, never stdout. Stdout carries the handshake line: anything
// printed there before Serve breaks the handshake, and after Serve go-plugin
// redirects os.Stdout and os.Stderr to a stream that the host may discard.
// Log with Logger: its lines go to the process's standard error, which the
// host forwards into the controller's log under the plugin's name, with
// their level and key/value pairs.
//
// Describe must not depend on Configure. The host calls Describe after every
// start of the process, before Configure, and decides from its answer which
// jobs the plugin takes part in and which methods it calls. Return the same
// constant description every time.
//
// Owned keys. A plugin that owns no policy key (neither MLPolicyKeys nor
// PodGroupPolicyKeys) takes part in every TrainJob. One that owns keys takes
// part only in the TrainJobs whose runtime sets one of them:
// framework.AnyPolicyKey ("*") owns every job and framework.NoPolicyKey ("")
// owns the jobs whose policy sets no framework key. Every key a runtime sets
// must be owned by some enabled plugin, or the job fails with an error that
// says so. Runtimes may set keys the Go API does not know (vendor keys, such
// as "hello" above); read them from Info.RuntimePolicy.
//
// Change only Info. Enforce points receive the TrainJob to read; only their
// changes to Info reach the host. Merge into maps and lists (UpsertEnv,
// UpsertPort, UpsertVolume, UpsertVolumeMount, framework.MergeMap) rather
// than replacing them: other plugins wrote there before you. The host
// refuses an answer that changes anything but Info's own fields.
//
// Declared built kinds. Build may return objects only of the kinds listed
// in Description.Builds; the host refuses any other. The host watches those
// kinds through their owner reference, and Status receives the TrainJob's
// objects of those kinds. A plugin that implements Status must list Builds.
// Write objects as Go types and return them through ToObject, which adds
// Info's labels and annotations (every object of the job carries them) and
// leaves out what the plugin must not apply (an empty status).
//
// Namespace. Leave a built object's namespace empty or set it to the
// TrainJob's; the host refuses any other.
//
// The host sets owner references and labels. The host makes the TrainJob
// the controller owner of every built object and sets the labels
// trainer.kubeflow.org/trainjob-name and app.kubernetes.io/managed-by
// itself, then applies the object with server-side apply. Do not set them.
//
// Deterministic and idempotent. The host calls Enforce and Build on every
// reconcile. The same input must give the same output (no map-order
// dependence, no clocks, no random names), and enforcing Info again must
// change nothing. Package sdktest checks both.
//
// Safe for concurrent use. The host may call several methods at once, for
// different TrainJobs. Configure is called once per process start, before
// any other call but Describe; treat the configuration as read-only after.
// Each call carries the host's deadline in its context.
//
// Errors are shown to users. The message of an error a method returns
// appears in a TrainJob condition and an Event, prefixed with the plugin's
// name and the extension point, so say what is wrong and how to fix it. An
// error that is (or wraps) a *field.Error or a framework.InvalidJobError is
// reported as a problem with the input (INVALID_ARGUMENT), which the host
// does not retry: the TrainJob cannot run until it changes. Any other error
// is retried with backoff. Validate reports problems with a TrainJob as
// field errors naming the field at fault; its error return is for a check
// that could not be made.
package sdk
