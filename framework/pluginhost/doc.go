// Package pluginhost is what every host of plugins that run outside the
// framework's own code shares, whatever runs the plugin: a child process
// or a socket (package framework/external) or a WebAssembly module in the
// controller's process (package framework/wasm).
//
// A kind of plugin differs only in how a plugin runs and how a call reaches
// it: external spawns, supervises and restarts a process; wasm compiles a
// module and pools its instances. Everything else is one piece of code
// here, so that the two kinds cannot drift apart:
//
//   - Options: the options of every kind (name, checksum, args, host facts,
//     timeouts, backoff, answer bounds, log rate, logger), made from a
//     defaulted configuration entry by OptionsFor (with HostFor and
//     LimitsFor) and checked by Options.Check: the hosts have no defaults
//     of their own;
//   - Handshake: the start sequence (Describe, the name check, Configure,
//     Watch), whose failures that only the configuration can fix are a
//     *ConfigError naming the plugin (ConfigureError maps a Configure
//     answer);
//   - Described: what a start answered, and the framework.Implementation
//     the framework calls through the plugin protocol's client;
//   - Log and Lines: one forwarder of a plugin's log lines (a process's
//     stderr, a module's log function and stderr) to the controller's
//     logger, cut into bounded lines, the SDK's JSON lines keeping their
//     level and keys, rate-limited per plugin;
//   - Calls: the calls under way, and CloseWhenIdle for a plugin that a
//     configuration reload replaced;
//   - RecentInputs and KeyOf: calls remembered for a while by their input
//     (a TrainJob's UID and generation and the Info sent), for what the
//     end of one call says of the next of the same input: a wasm module's
//     call that ended its instance, an external plugin's missed deadline.
//
// A plugin that takes no call at the time (a process that is not running,
// a module stopped for a backoff or out of free instances) fails the call
// with a *framework.UnavailableError under either kind, which the
// framework never skips under failurePolicy Ignore: the TrainJob is
// retried.
package pluginhost
