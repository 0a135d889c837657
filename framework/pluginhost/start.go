package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// ConfigError is a start failure that only the configuration can fix: the
// plugin describes itself under another name than its entry's, or rejects
// its args. At the controller's start-up and on a reload it refuses the
// configuration; an external plugin's later restarts log it and retry.
type ConfigError struct {
	// Plugin is the entry's name.
	Plugin string
	Err    error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// StepError is a step of a start that failed for another reason than the
// configuration: no answer within startTimeout, a broken connection, an
// instance that trapped. Step is the extension point ("Describe").
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// Handshake is the start sequence every kind of plugin runs once the
// plugin runs: Describe, the name check, Configure with the entry's args
// and the host's facts, and Watch when the plugin implements it, all
// before one deadline.
type Handshake struct {
	// Name is the entry's name; "" takes the name the plugin gives.
	Name       string
	PluginArgs json.RawMessage
	Host       framework.Host
	Limits     remote.Limits
	// StartTimeout is what the deadline came from, for messages.
	StartTimeout time.Duration
	// Ended, when set, explains a failed step by the end of what runs the
	// plugin ("the process exited during the start: exit status 3"), or
	// returns "" while it runs.
	Ended func() string
}

// Run runs the start sequence over cc (the connection of one start) until
// deadline. It returns what the plugin answered, or a *ConfigError, or a
// *StepError.
func (h Handshake) Run(ctx context.Context, deadline time.Time, cc grpc.ClientConnInterface) (Described, error) {
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	step := func(point string, err error) error {
		switch {
		case errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
			err = fmt.Errorf("no answer within startTimeout %s: %w", h.StartTimeout, err)
		case h.Ended != nil:
			if why := h.Ended(); why != "" {
				err = fmt.Errorf("%s: %w", why, err)
			}
		}
		return &StepError{Step: point, Err: err}
	}
	rc := remote.NewClient(pluginv1.NewPluginServiceClient(cc), h.Limits)
	var d Described
	var err error
	if d.Desc, d.Points, err = rc.Describe(sctx); err != nil {
		return Described{}, step("Describe", err)
	}
	name := h.Name
	if name == "" {
		name = d.Desc.Name
	}
	if d.Desc.Name != name {
		return Described{}, &ConfigError{Plugin: name, Err: fmt.Errorf("plugin %q describes itself as %q; the entry's name in the configuration file must be the name the plugin gives", name, d.Desc.Name)}
	}
	if err := ConfigureError(name, h.PluginArgs, rc.ConfigureWith(sctx, h.PluginArgs, h.Host)); err != nil {
		var cerr *ConfigError
		if errors.As(err, &cerr) {
			return Described{}, err
		}
		return Described{}, step("Configure", err)
	}
	if slices.Contains(d.Points, framework.PointWatch) {
		if d.Watch, err = rc.Watch(sctx); err != nil {
			return Described{}, step("Watch", err)
		}
	}
	return d, nil
}

// ConfigureError explains the failure err of plugin's Configure: a
// *ConfigError when the plugin rejected its args (INVALID_ARGUMENT) or
// implements no Configure but the entry gives args; nil when it implements
// none and the entry gives none, or err is nil; err otherwise. err is the
// protocol client's *remote.CallError or a gRPC status.
func ConfigureError(plugin string, args json.RawMessage, err error) error {
	if err == nil {
		return nil
	}
	var code codes.Code
	var msg string
	var ce *remote.CallError
	if errors.As(err, &ce) {
		code, msg = ce.Code, ce.Message
	} else if st, ok := status.FromError(err); ok {
		code, msg = st.Code(), st.Message()
	}
	switch {
	case code == codes.InvalidArgument:
		return &ConfigError{Plugin: plugin, Err: fmt.Errorf("plugin %q rejected its args: %s", plugin, msg)}
	case code == codes.Unimplemented && HasArgs(args):
		return &ConfigError{Plugin: plugin, Err: fmt.Errorf("plugin %q takes no args (it does not implement Configure), but the configuration gives it some", plugin)}
	case code == codes.Unimplemented:
		return nil // a plugin without args need not implement Configure
	}
	return err
}

// HasArgs reports whether an entry gives its plugin args.
func HasArgs(args json.RawMessage) bool {
	s := strings.TrimSpace(string(args))
	return s != "" && s != "null"
}
