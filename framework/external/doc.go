// Package external runs Trainforge plugins that live in their own binary:
// the external-plugin host. The controller starts one Plugin per
// configuration-file entry with an `external` section (Start, with the
// options OptionsFor makes of the entry). The Plugin is the gRPC connection
// (grpc.ClientConnInterface) of the plugin protocol's client (package
// remote): each call goes to the process running at the time, within the
// call deadline, and a failure is explained. The framework calls the points
// the plugin described through that client (Implementation), like any
// other plugin, under its failure policy.
//
// A plugin runs in one of two ways. With Options.Command the host starts
// it as a child process with hashicorp/go-plugin (process.go). With
// Options.Socket it runs on its own, in a container of its own, and serves
// on a Unix socket (sdk.Serve with TRAINFORGE_PLUGIN_SOCKET); the host
// connects to it (socket.go). Everything below holds for both, except
// what concerns the process: a socket plugin has no binary to check, no
// process to start, kill or reap, and its stderr is its container's log.
// A start of a socket plugin is a connection: the socket must exist and
// something must listen on it, and then it is described and configured
// as a process is. A broken connection counts as an exit: the host
// connects again with the same backoff, and counts it as a restart.
//
// Environment. A child process gets go-plugin's handshake variables
// (TRAINFORGE_PLUGIN, PLUGIN_PROTOCOL_VERSIONS, PLUGIN_MIN_PORT,
// PLUGIN_MAX_PORT, PLUGIN_CLIENT_CERT, PLUGIN_UNIX_SOCKET_DIR and, when
// set, PLUGIN_UNIX_SOCKET_GROUP and PLUGIN_MULTIPLEX_GRPC), and
// Options.Env (the controller gives PATH, GOMAXPROCS and the entry's
// external.env), which may not set the handshake variables. Nothing else of the controller's environment: not
// KUBECONFIG, KUBERNETES_SERVICE_*, HOME or cloud credentials. The host
// never passes its kubeconfig or token in arguments either.
//
// Bounds. An answer larger than Options.MaxMessageBytes (4 MiB unless the
// configuration says otherwise)
// is refused by gRPC before it is read whole, a Build answer of more
// objects, or larger ones, than Options.Limits allows, and an Enforce
// patch of more operations, or whose copies would grow Info past
// MaxMessageBytes, are refused before they are used; each fails the call
// with an error that names the bound and its value ("the answer has 1500
// objects, more than pluginHost.limits.maxObjects 1000"). The connection
// stays up and the next call is served.
//
// # What the host guarantees
//
// Starting. Each start of the process runs these steps, all within
// startTimeout:
//
//  1. The binary is found (a bare name through PATH). When the entry gives
//     a sha256, the file is hashed before every start; a mismatch refuses
//     the start with both sums:
//     "sha256 of /plugins/mpi is 1f0c…, the configuration expects 9f2c…; not starting it".
//     (The binary should not be writable by anyone the controller does not
//     trust: it is hashed, then executed.)
//  2. It is executed with hashicorp/go-plugin: gRPC only, the Trainforge
//     handshake cookie, protocol-version negotiation (the host speaks
//     version 1), AutoMTLS (a fresh client certificate per start: only
//     this host can talk to this process). Its Unix socket is made in a
//     fresh directory under pluginHost.socketDir (the system temp dir when
//     unset), removed when the process ends.
//  3. Describe: the plugin must give the entry's name.
//  4. Configure with the entry's args. A plugin that implements no
//     Configure is accepted when the entry has no args.
//  5. Watch, when the plugin lists it in Describe; the answer is kept.
//
// At the controller's start-up, a plugin that gives another name or
// rejects its args (INVALID_ARGUMENT) makes Start fail, with an error that
// names the plugin and quotes it; the controller does not start. Anything
// else that stops a plugin from starting (binary missing, checksum
// mismatch, not a plugin, another protocol version, no handshake within
// startTimeout, a crash) does not stop the controller: the plugin is not
// ready, and the host keeps trying.
//
// Supervision. One goroutine per plugin watches its process (or its
// connection). When it exits, or a start fails, the host starts it again after a backoff that
// starts at pluginHost.restartBackoff.initial and doubles up to max; the
// wait goes back to initial once a process has run for max. Each restart
// counts in trainforge_plugin_restarts_total{plugin} and is logged with
// its reason (how the process exited, or why the start failed). A
// restarted process is new: it is described, configured and asked for its
// watches again. From the second start on, a wrong name or rejected args
// are logged and retried like any other failure (someone may be replacing
// the binary).
//
// Calls. Each extension-point call has the deadline callTimeout; past it
// the call fails with "no answer within callTimeout 2s". The process
// serves every TrainJob's calls, so a call may miss its deadline behind
// others: the first miss of an input (a TrainJob's UID and generation and
// the Info sent) is a *framework.UnavailableError, which retries the
// TrainJob under either failure policy, and only a second miss of the same
// input within a minute, with no answer between, is the plugin's failure
// that failurePolicy judges. A call made while
// no process runs fails at once with why and when the next start is:
//
//	the plugin is not running: process 4711 exited after 3.2s: signal: killed; next start in 1.6s (at 10:42:07)
//
// It took place nowhere, so it is a *framework.UnavailableError, as the
// call of a wasm plugin that is stopped: the framework does not skip it
// under failurePolicy Ignore, and the TrainJob is retried. Likewise a
// runtime whose policy key may belong to a plugin that never started
// waits for it under either policy.
//
// A call that loses its process fails with "the plugin's process 4711
// exited during the call (exit status 3); the host restarts it with
// backoff", and Ready says so at once. A call that finds the connection
// broken while the process still runs makes the host check the process's
// gRPC health and kill it (to be restarted) when it does not answer. The
// failure policy of the entry (Fail or Ignore) then decides what the
// reconcile does; Enforce answers change Info only when the call succeeds
// and its patch touches only Info.
//
// Readiness. Ready is nil only while a process that was started,
// described and configured runs. The controller's /readyz includes it for
// plugins whose failure policy is Fail. Describe returns the description
// of the latest successful start (only the name before the first one:
// Known is false until then).
//
// No orphans. On Linux the processes are started with the parent-death
// signal SIGKILL, from one goroutine locked to its OS thread that never
// exits (the signal follows the thread that forked, not the process), so
// a plugin dies with the controller however the controller dies,
// SIGKILL and OOM kill included. Close, or the end of the context given
// to Start, asks the process to exit and kills it after two seconds. A
// plugin that starts processes of its own must make them die with it; a
// wrapper script must exec the plugin. (Were a child of the plugin to keep
// its stdout or stderr open, the host would still notice the plugin's exit
// and stop reading them.) Outside Linux there is no parent-death signal:
// a plugin outlives a controller killed without Close.
//
// Logs. Every line the plugin writes to stderr goes to the controller's
// log under plugin=<name> and pid=<pid>. A line in hclog's JSON format
// (what the SDK's logger writes) keeps its message, its level (error,
// info, warn with severity=warn, debug and trace at V(1)) and its
// key/value pairs; any other line is logged at info as it is. Lines past
// 16 KiB are cut, with the number of bytes dropped, and at most
// pluginhost.LogLinesPerSecond lines a second (twice that in a burst)
// reach the log, the rest counted: the forwarder of every kind of plugin
// (pluginhost.Log), a wasm module's log included. A plugin must never
// write to stdout, which carries go-plugin's handshake.
//
// What every kind of hosted plugin shares (the options and their check,
// the start sequence after the process or connection is up, the log
// forwarder, CloseWhenIdle) is package framework/pluginhost's; this
// package is what only a process or a socket needs.
package external
