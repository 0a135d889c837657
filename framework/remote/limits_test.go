package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// answering is a PluginService that answers Build and Enforce with what
// it holds, without going through a server.
type answering struct {
	pluginv1.PluginServiceClient
	objects [][]byte
	patch   []byte
}

func (a *answering) Describe(context.Context, *pluginv1.DescribeRequest, ...grpc.CallOption) (*pluginv1.DescribeResponse, error) {
	return &pluginv1.DescribeResponse{Name: "Hostile"}, nil
}

func (a *answering) Build(context.Context, *pluginv1.BuildRequest, ...grpc.CallOption) (*pluginv1.BuildResponse, error) {
	return &pluginv1.BuildResponse{Objects: a.objects}, nil
}

func (a *answering) EnforceMLPolicy(context.Context, *pluginv1.EnforceMLPolicyRequest, ...grpc.CallOption) (*pluginv1.EnforceMLPolicyResponse, error) {
	return &pluginv1.EnforceMLPolicyResponse{Patch: a.patch}, nil
}

func configMaps(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"},"data":{"x":%q}}`, i, strings.Repeat("x", size)))
	}
	return out
}

func labelOps(n int) []byte {
	ops := []string{`{"op":"add","path":"/labels","value":{}}`}
	for i := range n - 1 {
		ops = append(ops, fmt.Sprintf(`{"op":"add","path":"/labels/l%d","value":"v"}`, i))
	}
	return []byte("[" + strings.Join(ops, ",") + "]")
}

func TestLimits(t *testing.T) {
	limits := remote.Limits{MaxObjects: 3, MaxObjectBytes: 200, MaxPatchOperations: 20, MaxCopyBytes: 10000}
	copies := `[{"op":"add","path":"/annotations","value":{"a":"` + strings.Repeat("x", 1000) + `"}}` +
		strings.Repeat(`,{"op":"copy","from":"/annotations/a","path":"/annotations/b"}`, 4) + `]`
	cases := []struct {
		name    string
		answer  answering
		enforce bool
		want    string // "" for success
	}{
		{name: "objects at the bound", answer: answering{objects: configMaps(3, 10)}},
		{name: "objects past the bound", answer: answering{objects: configMaps(4, 10)},
			want: "the answer has 4 objects, more than pluginHost.limits.maxObjects 3"},
		{name: "an object past the size bound", answer: answering{objects: append(configMaps(1, 10), configMaps(1, 300)...)},
			want: "object 1 has 381 bytes, more than pluginHost.limits.maxObjectBytes 200"},
		{name: "operations at the bound", answer: answering{patch: labelOps(20)}, enforce: true},
		{name: "operations past the bound", answer: answering{patch: labelOps(21)}, enforce: true,
			want: "the patch has 21 operations, more than pluginHost.limits.maxPatchOperations 20"},
		{name: "copies within the bound", answer: answering{patch: []byte(copies)}, enforce: true},
	}
	// A copy of 1000 bytes, 10 times over, is past MaxCopyBytes 10000.
	big := `[{"op":"add","path":"/annotations","value":{"a":"` + strings.Repeat("x", 1000) + `"}}` +
		strings.Repeat(`,{"op":"copy","from":"/annotations/a","path":"/annotations/b"}`, 11) + `]`
	cases = append(cases, struct {
		name    string
		answer  answering
		enforce bool
		want    string
	}{name: "copies past MaxCopyBytes", answer: answering{patch: []byte(big)}, enforce: true,
		want: "the patch's copy operations add more bytes than pluginHost.limits.maxMessageBytes 10000"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := remote.NewClient(&tc.answer, limits)
			var err error
			info := &framework.Info{Version: framework.InfoVersion}
			before, _ := json.Marshal(info)
			if tc.enforce {
				err = c.EnforceMLPolicy(context.Background(), info, testJob())
			} else {
				_, err = c.Build(context.Background(), info, testJob())
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want success, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if tc.want != "" && tc.enforce {
				if got, _ := json.Marshal(info); string(got) != string(before) {
					t.Errorf("a refused patch changed Info: %s", got)
				}
			}
		})
	}
}
