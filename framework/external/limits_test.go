package external

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// hostile is a plugin, served in the test's process on a socket, that
// answers as much as it is told to.
type hostile struct {
	pluginv1.UnimplementedPluginServiceServer

	mu          sync.Mutex
	objects     int    // Build returns this many ConfigMaps
	objectBytes int    // of this many bytes of data each
	patch       []byte // EnforceMLPolicy answers this patch
}

func (h *hostile) set(fn func(*hostile)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h)
}

func (h *hostile) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	return &pluginv1.DescribeResponse{
		Name:         "Hostile",
		MlPolicyKeys: []string{"hostile"},
		Points:       []pluginv1.ExtensionPoint{pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY, pluginv1.ExtensionPoint_EXTENSION_POINT_BUILD},
		Builds:       []*pluginv1.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}},
	}, nil
}

func (h *hostile) Configure(context.Context, *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	return &pluginv1.ConfigureResponse{}, nil
}

func (h *hostile) Build(context.Context, *pluginv1.BuildRequest) (*pluginv1.BuildResponse, error) {
	h.mu.Lock()
	n, size := h.objects, h.objectBytes
	h.mu.Unlock()
	resp := &pluginv1.BuildResponse{}
	for i := range n {
		data, _ := json.Marshal(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i)},
			"data":     map[string]any{"x": strings.Repeat("x", size)},
		})
		resp.Objects = append(resp.Objects, data)
	}
	return resp, nil
}

func (h *hostile) EnforceMLPolicy(context.Context, *pluginv1.EnforceMLPolicyRequest) (*pluginv1.EnforceMLPolicyResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &pluginv1.EnforceMLPolicyResponse{Patch: h.patch}, nil
}

// serveHostile serves h on a socket and returns its path.
func serveHostile(t *testing.T, h *hostile) string {
	t.Helper()
	path := filepath.Join(shortDir(t), "hostile.sock")
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pluginv1.RegisterPluginServiceServer(srv, h)
	hs := health.NewServer()
	hs.SetServingStatus(plugin.GRPCServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return path
}

// addOps is a patch of n operations that each add a label.
func addOps(n int) []byte {
	var b strings.Builder
	b.WriteString(`[{"op":"add","path":"/labels","value":{}}`)
	for i := range n - 1 {
		fmt.Fprintf(&b, `,{"op":"add","path":"/labels/l%d","value":"v"}`, i)
	}
	b.WriteString("]")
	return []byte(b.String())
}

// TestBounds shows that an answer past a bound fails its call with an
// error that names the bound and its value, leaves Info as it was, and
// neither crashes nor stalls the host: the next call is served.
func TestBounds(t *testing.T) {
	h := &hostile{objects: 1}
	path := serveHostile(t, h)
	opts, _ := socketOptions("Hostile", path)
	opts.Limits = remote.Limits{MaxObjects: 1000, MaxObjectBytes: 1536 << 10, MaxPatchOperations: 10000}
	p := start(t, opts)
	NewWithT(t).Expect(p.Ready()).To(Succeed())

	build := func() error {
		_, err := p.Client().Build(context.Background(), testInfo(), testJob())
		return err
	}
	enforce := func() error {
		info := testInfo()
		before, _ := json.Marshal(info)
		err := p.Client().EnforceMLPolicy(context.Background(), info, testJob())
		if after, _ := json.Marshal(info); err != nil && string(after) != string(before) {
			t.Errorf("a refused answer changed Info: %s", after)
		}
		return err
	}
	cases := []struct {
		name string
		set  func(*hostile)
		call func() error
		want string
	}{
		{"too many objects", func(h *hostile) { h.objects, h.objectBytes = 1500, 0 }, build,
			"the answer has 1500 objects, more than pluginHost.limits.maxObjects 1000"},
		{"an object too large", func(h *hostile) { h.objects, h.objectBytes = 1, 1600000 }, build,
			`^object 0 has 16000\d\d bytes, more than pluginHost.limits.maxObjectBytes 1572864$`},
		{"a 50 MB answer", func(h *hostile) { h.objects, h.objectBytes = 1, 50<<20 }, build,
			`^the answer has 524288\d\d bytes, more than pluginHost.limits.maxMessageBytes 4194304$`},
		{"too many patch operations", func(h *hostile) { h.patch = addOps(10001) }, enforce,
			"the patch has 10001 operations, more than pluginHost.limits.maxPatchOperations 10000"},
		{"a 100,000-operation patch", func(h *hostile) { h.patch = addOps(100000) }, enforce,
			`^the answer has 48888\d\d bytes, more than pluginHost.limits.maxMessageBytes 4194304$`},
		{"copies of copies", func(h *hostile) {
			// Each copy doubles the labels' list: 40 of them would make
			// terabytes.
			var b strings.Builder
			b.WriteString(`[{"op":"add","path":"/annotations","value":{"a":"` + strings.Repeat("x", 1000) + `"}},{"op":"add","path":"/podSets/0/containers/0/args","value":[{"a":"` + strings.Repeat("x", 1000) + `"}]}`)
			for range 40 {
				b.WriteString(`,{"op":"copy","from":"/podSets/0/containers/0/args","path":"/podSets/0/containers/0/args/0"}`)
			}
			b.WriteString("]")
			h.patch = []byte(b.String())
		}, enforce,
			"the patch's copy operations add more bytes than pluginHost.limits.maxMessageBytes 4194304"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			h.set(tc.set)
			if strings.HasPrefix(tc.want, "^") {
				g.Expect(tc.call()).To(MatchError(MatchRegexp(tc.want)))
			} else {
				g.Expect(tc.call()).To(MatchError(tc.want))
			}
			g.Expect(p.Ready()).To(Succeed(), "the plugin stays connected")
			h.set(func(h *hostile) { h.objects, h.objectBytes, h.patch = 1, 0, nil })
			g.Expect(build()).To(Succeed(), "the next call is served")
		})
	}
}

// TestMaxMessageBytesIsConfigurable shows that a larger maxMessageBytes
// lets a large answer through, to the next bound.
func TestMaxMessageBytesIsConfigurable(t *testing.T) {
	g := NewWithT(t)
	h := &hostile{patch: addOps(100000)}
	opts, _ := socketOptions("Hostile", serveHostile(t, h))
	opts.MaxMessageBytes = 16 << 20
	opts.Limits = remote.Limits{MaxPatchOperations: 10000}
	p := start(t, opts)
	g.Expect(p.Client().EnforceMLPolicy(context.Background(), testInfo(), testJob())).To(
		MatchError("the patch has 100000 operations, more than pluginHost.limits.maxPatchOperations 10000"))
}

// TestSocketNotAPlugin shows the error of a socket whose server does not
// speak the Trainforge protocol of this host's version.
func TestSocketNotAPlugin(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(shortDir(t), "other.sock")
	lis, err := net.Listen("unix", path)
	g.Expect(err).NotTo(HaveOccurred())
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	opts, _ := socketOptions("Other", path)
	p := start(t, opts)
	g.Expect(p.Ready()).To(MatchError(ContainSubstring("Describe: the plugin on socket " + path +
		" does not serve trainforge.plugin.v1.PluginService, the plugin protocol version 1 this host speaks (a plugin of another protocol version, or not a Trainforge plugin)")))
}

// TestBoundsOfAChildProcess shows the bounds on a plugin the host runs as
// a child process through go-plugin, which itself would let answers of up
// to 2 GiB through.
func TestBoundsOfAChildProcess(t *testing.T) {
	g := NewWithT(t)
	_, log := newLogs()
	o := shared("EveryPoint", log)
	o.Args, o.StartTimeout, o.CallTimeout = []string{"--object-bytes", "52428800"}, 20*time.Second, 20*time.Second
	p := start(t, Options{Options: o, Command: everypointBin})
	_, err := p.Client().Build(context.Background(), testInfo(), testJob())
	g.Expect(err).To(MatchError(MatchRegexp(`^the answer has 52428\d\d\d bytes, more than pluginHost.limits.maxMessageBytes 4194304$`)))
	g.Expect(p.Ready()).To(Succeed())

	_, log = newLogs()
	o = shared("EveryPoint", log)
	o.Args, o.StartTimeout, o.CallTimeout = []string{"--build-objects", "1001"}, 20*time.Second, 20*time.Second
	o.Limits = remote.Limits{MaxObjects: 1000}
	p = start(t, Options{Options: o, Command: everypointBin})
	_, err = p.Client().Build(context.Background(), testInfo(), testJob())
	g.Expect(err).To(MatchError("the answer has 1001 objects, more than pluginHost.limits.maxObjects 1000"))
}
