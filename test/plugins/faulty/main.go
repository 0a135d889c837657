// Command faulty is a Trainforge plugin that misbehaves on request, to test
// the external-plugin host with real processes. It is written against the
// generated gRPC stubs and go-plugin directly, not the SDK, so that it can
// break the protocol in ways the SDK never would.
//
// It implements Configure, EnforceMLPolicy and Build:
//
//	--name NAME               the plugin's name (default Faulty)
//	--describe-name NAME      answer this name in Describe instead
//	--ml-key KEY              the mlPolicy key it owns (default faulty)
//	--declare-kind GVK        the kind Describe says it builds (default v1/ConfigMap)
//	--build-kind GVK          the kind Build returns (default the declared one)
//	--build-namespace NS      the namespace of the built object (default none)
//	--patch JSON              EnforceMLPolicy answers this raw patch
//	--block-file PATH         EnforceMLPolicy, when PATH exists, writes its pid
//	                          to PATH.pid and waits until PATH is removed
//	--hang-calls N            the first N EnforceMLPolicy calls wait until their
//	                          deadline, as a plugin busy with other calls
//	--crash-in-enforce        EnforceMLPolicy exits the process with status 3
//	--watch-label LABEL       also implement Watch: watch Pods mapped by LABEL
//	--protocol-version N      serve only under plugin protocol version N (default 1)
//	--not-a-plugin            print a line to stdout and sleep, like a program
//	                          that is not a plugin
//
// Configure takes {"greeting": "..."}; any other key is rejected. The
// greeting goes into the FAULTY variable that EnforceMLPolicy adds to every
// container and into the data of the ConfigMap that Build returns. It logs
// to stderr only, plain lines and hclog JSON lines.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// stderr is the process's standard error, taken before plugin.Serve points
// os.Stderr at a pipe of its own that the host does not read.
var stderr io.Writer = os.Stderr

func main() {
	s := &server{}
	var declare, build string
	flag.StringVar(&s.name, "name", "Faulty", "the plugin's name")
	flag.StringVar(&s.describeName, "describe-name", "", "answer this name in Describe instead of --name")
	flag.StringVar(&s.mlKey, "ml-key", "faulty", "the mlPolicy key the plugin owns")
	flag.StringVar(&declare, "declare-kind", "v1/ConfigMap", "the kind Describe declares, group/version/Kind or version/Kind")
	flag.StringVar(&build, "build-kind", "", "the kind Build returns (default: the declared kind)")
	flag.StringVar(&s.buildNamespace, "build-namespace", "", "the namespace of the built object")
	flag.StringVar(&s.patch, "patch", "", "EnforceMLPolicy answers this raw JSON patch")
	flag.StringVar(&s.blockFile, "block-file", "", "EnforceMLPolicy blocks while this file exists")
	hang := flag.Int64("hang-calls", 0, "the first N EnforceMLPolicy calls wait until their deadline")
	flag.BoolVar(&s.crashInEnforce, "crash-in-enforce", false, "EnforceMLPolicy exits with status 3")
	flag.IntVar(&s.logLines, "log-lines", 0, "EnforceMLPolicy writes this many lines to stderr first, as a plugin that logs in a loop")
	flag.StringVar(&s.watchLabel, "watch-label", "", "implement Watch: Pods mapped to their TrainJob by this label")
	protocolVersion := flag.Int("protocol-version", remote.ProtocolVersion, "the plugin protocol version to serve")
	notAPlugin := flag.Bool("not-a-plugin", false, "print a line to stdout and sleep instead of serving")
	startAfter := flag.String("start-after-file", "", "exit at once, before the handshake, until this file exists")
	flag.Parse()
	s.hangCalls.Store(*hang)

	if *startAfter != "" {
		if _, err := os.Stat(*startAfter); err != nil {
			fmt.Fprintln(stderr, "not starting yet:", err)
			os.Exit(1)
		}
	}

	if *notAPlugin {
		fmt.Println("hello, I am not a plugin")
		time.Sleep(time.Minute)
		return
	}
	var err error
	if s.declare, err = parseKind(declare); err != nil {
		fmt.Fprintln(stderr, "--declare-kind:", err)
		os.Exit(2)
	}
	s.build = s.declare
	if build != "" {
		if s.build, err = parseKind(build); err != nil {
			fmt.Fprintln(stderr, "--build-kind:", err)
			os.Exit(2)
		}
	}

	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: remote.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			*protocolVersion: {remote.PluginName: &grpcPlugin{srv: s}},
		},
		GRPCServer: plugin.DefaultGRPCServer,
		Logger:     hclog.New(&hclog.LoggerOptions{Name: "faulty", Level: hclog.Info, Output: stderr, JSONFormat: true}),
	})
}

func parseKind(s string) (schema.GroupVersionKind, error) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return schema.GroupVersionKind{Version: parts[0], Kind: parts[1]}, nil
	case len(parts) == 3 && parts[1] != "" && parts[2] != "":
		return schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]}, nil
	}
	return schema.GroupVersionKind{}, fmt.Errorf("%q is neither group/version/Kind nor version/Kind", s)
}

// grpcPlugin is the go-plugin plugin serving the server.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv *server
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterPluginServiceServer(s, p.srv)
	return nil
}

func (p *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, fmt.Errorf("faulty is a plugin, not a host")
}

type server struct {
	pluginv1.UnimplementedPluginServiceServer

	name, describeName, mlKey string
	declare, build            schema.GroupVersionKind
	buildNamespace            string
	patch                     string
	blockFile                 string
	hangCalls                 atomic.Int64 // calls still to hang
	crashInEnforce            bool
	logLines                  int
	watchLabel                string

	mu       sync.Mutex
	greeting string
}

func (s *server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	name := s.name
	if s.describeName != "" {
		name = s.describeName
	}
	resp := &pluginv1.DescribeResponse{
		Name:         name,
		Version:      "faulty-test",
		MlPolicyKeys: []string{s.mlKey},
		Points: []pluginv1.ExtensionPoint{
			pluginv1.ExtensionPoint_EXTENSION_POINT_CONFIGURE,
			pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY,
			pluginv1.ExtensionPoint_EXTENSION_POINT_BUILD,
		},
		Builds: []*pluginv1.GroupVersionKind{{Group: s.declare.Group, Version: s.declare.Version, Kind: s.declare.Kind}},
	}
	if s.watchLabel != "" {
		resp.Points = append(resp.Points, pluginv1.ExtensionPoint_EXTENSION_POINT_WATCH)
	}
	return resp, nil
}

func (s *server) Watch(ctx context.Context, req *pluginv1.WatchRequest) (*pluginv1.WatchResponse, error) {
	if s.watchLabel == "" {
		return s.UnimplementedPluginServiceServer.Watch(ctx, req)
	}
	fmt.Fprintln(stderr, "asked for watches")
	return &pluginv1.WatchResponse{Sources: []*pluginv1.WatchSource{{
		Kind:    &pluginv1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Mapping: pluginv1.Mapping_MAPPING_LABEL,
		Label:   s.watchLabel,
	}}}, nil
}

func (s *server) Configure(_ context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	greeting := ""
	if raw := strings.TrimSpace(string(req.GetArgs())); raw != "" && raw != "null" {
		var args map[string]json.RawMessage
		if err := json.Unmarshal(req.GetArgs(), &args); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "args must be a JSON object: %v", err)
		}
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k != "greeting" {
				return nil, status.Errorf(codes.InvalidArgument, "unknown arg %q", k)
			}
			if err := json.Unmarshal(args[k], &greeting); err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "greeting must be a string: %v", err)
			}
		}
	}
	s.mu.Lock()
	s.greeting = greeting
	s.mu.Unlock()
	fmt.Fprintf(stderr, "configured with greeting %s\n", greeting)
	line, _ := json.Marshal(map[string]string{"@level": "info", "@message": "configured", "greeting": greeting})
	fmt.Fprintf(stderr, "%s\n", line)
	return &pluginv1.ConfigureResponse{}, nil
}

func (s *server) envValue() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.greeting == "" {
		return "1"
	}
	return s.greeting
}

func (s *server) EnforceMLPolicy(ctx context.Context, req *pluginv1.EnforceMLPolicyRequest) (*pluginv1.EnforceMLPolicyResponse, error) {
	s.block(ctx)
	if s.hangCalls.Add(-1) >= 0 {
		fmt.Fprintln(stderr, "hanging in EnforceMLPolicy until the call's deadline, as asked")
		<-ctx.Done()
	}
	if err := ctx.Err(); err != nil {
		// The call's deadline passed while it blocked: an answer now
		// could reach the host a moment before its own deadline fires.
		return nil, status.FromContextError(err).Err()
	}
	for i := range s.logLines {
		fmt.Fprintf(stderr, "log line %d\n", i)
	}
	if s.crashInEnforce {
		fmt.Fprintln(stderr, "crashing in EnforceMLPolicy, as asked")
		os.Exit(3)
	}
	if s.patch != "" {
		return &pluginv1.EnforceMLPolicyResponse{Patch: []byte(s.patch)}, nil
	}
	info := &framework.Info{}
	if err := json.Unmarshal(req.GetInfo(), info); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "info: %v", err)
	}
	before, err := json.Marshal(info)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "info: %v", err)
	}
	value := s.envValue()
	for i := range info.PodSets {
		for j := range info.PodSets[i].Containers {
			c := &info.PodSets[i].Containers[j]
			c.Env = append(c.Env, corev1.EnvVar{Name: "FAULTY", Value: value})
		}
	}
	after, err := json.Marshal(info)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "info: %v", err)
	}
	patch, err := remote.CreatePatch(before, after)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "patch: %v", err)
	}
	return &pluginv1.EnforceMLPolicyResponse{Patch: patch}, nil
}

// block waits, when the block file exists, until it is removed or the
// call ends, after writing the pid next to it.
func (s *server) block(ctx context.Context) {
	if s.blockFile == "" {
		return
	}
	if _, err := os.Stat(s.blockFile); err != nil {
		return
	}
	if err := os.WriteFile(s.blockFile+".pid", []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		fmt.Fprintln(stderr, "writing the pid file:", err)
	}
	fmt.Fprintln(stderr, "blocking in EnforceMLPolicy until", s.blockFile, "is removed")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(s.blockFile); os.IsNotExist(err) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *server) Build(_ context.Context, req *pluginv1.BuildRequest) (*pluginv1.BuildResponse, error) {
	job := &trainer.TrainJob{}
	if err := json.Unmarshal(req.GetTrainJob(), job); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "train_job: %v", err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(s.build)
	obj.SetName(job.Name + "-faulty")
	if s.buildNamespace != "" {
		obj.SetNamespace(s.buildNamespace)
	}
	if s.build.Group == "" && s.build.Kind == "ConfigMap" {
		s.mu.Lock()
		greeting := s.greeting
		s.mu.Unlock()
		if err := unstructured.SetNestedStringMap(obj.Object, map[string]string{"greeting": greeting}, "data"); err != nil {
			return nil, status.Errorf(codes.Internal, "data: %v", err)
		}
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding: %v", err)
	}
	return &pluginv1.BuildResponse{Objects: [][]byte{data}}, nil
}
