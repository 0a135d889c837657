package remote

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// The tests of protocol 1.5's promise (plugin.proto, "Additions"): Status
// gets the Info the objects were built from when the host has it, and
// plugins and hosts on either side of 1.5 keep working with each other.

// infoReporter records the Info of each Status call and reports a
// condition that says whether it had one.
type infoReporter struct {
	mu  sync.Mutex
	got []*framework.Info
}

func (*infoReporter) Describe() framework.Description {
	return framework.Description{Name: "InfoReporter"}
}

func (r *infoReporter) Status(_ context.Context, info *framework.Info, _ *trainer.TrainJob, _ []*unstructured.Unstructured) (*framework.StatusReport, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, info)
	reason := "NoInfo"
	if info != nil {
		reason = "Info"
	}
	return &framework.StatusReport{Conditions: []metav1.Condition{{Type: "Seen", Status: metav1.ConditionTrue, Reason: reason}}}, nil
}

func (r *infoReporter) calls() []*framework.Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

func statusInfo() *framework.Info {
	return &framework.Info{
		Version: framework.InfoVersion,
		PodSets: []framework.PodSet{{Name: "node", Count: 3, Elastic: &framework.CountRange{Min: 2, Max: 4}}},
	}
}

// recordingStatus is a PluginService of any version that records its
// Status requests and answers with a condition.
type recordingStatus struct {
	pluginv1.UnimplementedPluginServiceServer
	mu  sync.Mutex
	req *pluginv1.StatusRequest
}

func (*recordingStatus) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	return &pluginv1.DescribeResponse{Name: "Old"}, nil
}

func (r *recordingStatus) Status(_ context.Context, req *pluginv1.StatusRequest) (*pluginv1.StatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.req = req
	return &pluginv1.StatusResponse{Status: []byte(`{"conditions":[{"type":"Old","status":"True","reason":"Old","message":"","lastTransitionTime":null}]}`)}, nil
}

// before15 returns the StatusRequest message of protocol 1.4: this
// file's, without the info field.
func before15(t *testing.T) *dynamicpb.Message {
	t.Helper()
	fd := protodesc.ToFileDescriptorProto(pluginv1.File_trainforge_plugin_v1_plugin_proto)
	for _, m := range fd.GetMessageType() {
		if m.GetName() != "StatusRequest" {
			continue
		}
		var fields []*descriptorpb.FieldDescriptorProto
		for _, f := range m.GetField() {
			if f.GetName() != "info" {
				fields = append(fields, f)
			}
		}
		if len(fields) == len(m.GetField()) {
			t.Fatal("StatusRequest has no field info")
		}
		m.Field = fields
	}
	file, err := protodesc.NewFile(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewMessage(file.Messages().ByName("StatusRequest"))
}

func TestSkewStatusInfo(t *testing.T) {
	ctx := context.Background()
	job := skewJob()

	t.Run("a plugin and a host since 1.5", func(t *testing.T) {
		p := &infoReporter{}
		c, err := describedClient(ctx, serveSkew(t, NewServer(p)))
		if err != nil {
			t.Fatal(err)
		}
		info := statusInfo()
		st, err := c.Status(ctx, info, job, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st == nil || len(st.Conditions) != 1 || st.Conditions[0].Reason != "Info" {
			t.Fatalf("status %+v, want the plugin to have seen the Info", st)
		}
		// A host that has no Info sends none, and the plugin gets nil,
		// not an empty Info.
		if _, err := c.Status(ctx, nil, job, nil); err != nil {
			t.Fatal(err)
		}
		got := p.calls()
		if len(got) != 2 {
			t.Fatalf("%d Status calls, want 2", len(got))
		}
		if diff := cmp.Diff(info, got[0]); diff != "" {
			t.Errorf("the Info the plugin got differs from the host's (-host +plugin):\n%s", diff)
		}
		if got[1] != nil {
			t.Errorf("without the host's Info, the plugin got %+v, want nil", got[1])
		}
	})

	t.Run("a host since 1.5 calls a plugin before 1.5", func(t *testing.T) {
		rec := &recordingStatus{}
		c, err := describedClient(ctx, serveSkew(t, rec))
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Status(ctx, statusInfo(), job, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st == nil || len(st.Conditions) != 1 || st.Conditions[0].Type != "Old" {
			t.Fatalf("status %+v, want the old plugin's answer", st)
		}
		// What the old plugin decodes of the request: the fields it
		// knows, as they were; info is a field it does not know.
		rec.mu.Lock()
		data, err := proto.Marshal(rec.req)
		rec.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		old := before15(t)
		if err := proto.Unmarshal(data, old); err != nil {
			t.Fatalf("a 1.4 StatusRequest does not decode a 1.5 one: %v", err)
		}
		jobField := old.Descriptor().Fields().ByName("train_job")
		if got, want := string(old.Get(jobField).Bytes()), string(rec.req.GetTrainJob()); got != want {
			t.Errorf("train_job as a 1.4 plugin decodes it = %s, want %s", got, want)
		}
		if len(old.GetUnknown()) == 0 {
			t.Error("info is not an unknown field to a 1.4 plugin")
		}
	})

	t.Run("a plugin since 1.5 called by a host before 1.5", func(t *testing.T) {
		p := &infoReporter{}
		jobJSON, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		// A 1.4 host's request: no info.
		resp, err := NewServer(p).Status(ctx, &pluginv1.StatusRequest{TrainJob: jobJSON})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.calls(); len(got) != 1 || got[0] != nil {
			t.Errorf("the plugin got Info %v, want nil", got)
		}
		if len(resp.GetStatus()) == 0 {
			t.Error("no status")
		}
	})

	for _, tc := range []struct {
		name string
		info string
	}{
		{"an Info that is not JSON", `{"version":`},
		{"an Info of another version", `{"version":"v0"}`},
	} {
		t.Run(tc.name+" is refused, not read as none", func(t *testing.T) {
			p := &infoReporter{}
			jobJSON, _ := json.Marshal(job)
			_, err := NewServer(p).Status(ctx, &pluginv1.StatusRequest{TrainJob: jobJSON, Info: []byte(tc.info)})
			if status.Code(err) != codes.InvalidArgument {
				t.Errorf("error %v, want INVALID_ARGUMENT", err)
			}
			if len(p.calls()) != 0 {
				t.Error("the plugin was called")
			}
		})
	}
}
