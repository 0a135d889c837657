package remote

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// The tests of protocol 1.3's compatibility promise (plugin.proto,
// "Additions"): host facts, runtime checks and create-once cross the wire
// as fields, and the annotations that said them before keep working both
// ways.

var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// wirePlugin is a plugin of this protocol's Go side: it records what
// Validate got, and builds a Secret created once and a ConfigMap.
type wirePlugin struct {
	mu  sync.Mutex
	got framework.ValidateRequest
}

func (*wirePlugin) Describe() framework.Description {
	return framework.Description{Name: "Wire", Builds: []schema.GroupVersionKind{secretGVK, {Version: "v1", Kind: "ConfigMap"}}}
}

func (p *wirePlugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = req
	return nil, nil, nil
}

func (*wirePlugin) Build(context.Context, *framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
	secret := &unstructured.Unstructured{}
	secret.SetGroupVersionKind(secretGVK)
	secret.SetName("key")
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("hosts")
	return []framework.Object{framework.CreateOnce(secret), {Unstructured: cm}}, nil
}

// recording is a PluginService of any version that records its requests
// and answers Build with build.
type recording struct {
	pluginv1.UnimplementedPluginServiceServer
	mu        sync.Mutex
	validate  *pluginv1.ValidateRequest
	configure *pluginv1.ConfigureRequest
	build     *pluginv1.BuildResponse
}

func (r *recording) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	return &pluginv1.DescribeResponse{Name: "Old"}, nil
}

func (r *recording) Configure(_ context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.configure = req
	return &pluginv1.ConfigureResponse{}, nil
}

func (r *recording) Validate(_ context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.validate = req
	return &pluginv1.ValidateResponse{}, nil
}

func (r *recording) Build(context.Context, *pluginv1.BuildRequest) (*pluginv1.BuildResponse, error) {
	return r.build, nil
}

func annotationsOf(t *testing.T, jobJSON []byte) map[string]string {
	t.Helper()
	job := &trainer.TrainJob{}
	if err := json.Unmarshal(jobJSON, job); err != nil {
		t.Fatal(err)
	}
	return job.Annotations
}

func TestSkewRuntimeCheck(t *testing.T) {
	ctx := context.Background()
	info := &framework.Info{Version: framework.InfoVersion}
	infoJSON, _ := json.Marshal(info)

	t.Run("a host since 1.3 says it twice, for plugins before 1.3", func(t *testing.T) {
		old := &recording{}
		c, err := describedClient(ctx, serveSkew(t, old))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Validate(ctx, framework.RuntimeCheck(info, "mpi")); err != nil {
			t.Fatal(err)
		}
		if k := old.validate.GetKind(); k != pluginv1.ValidationKind_VALIDATION_KIND_RUNTIME {
			t.Errorf("kind %v, want VALIDATION_KIND_RUNTIME", k)
		}
		if a := annotationsOf(t, old.validate.GetNewTrainJob()); a[RuntimeCheckAnnotation] != "true" {
			t.Errorf("the stand-in's annotations are %v, want %s: \"true\" for a plugin that reads it", a, RuntimeCheckAnnotation)
		}
		if _, _, err := c.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: framework.RuntimeCheckJob("job")}); err != nil {
			t.Fatal(err)
		}
		if k, a := old.validate.GetKind(), annotationsOf(t, old.validate.GetNewTrainJob()); k != pluginv1.ValidationKind_VALIDATION_KIND_TRAIN_JOB || len(a) != 0 {
			t.Errorf("a TrainJob's check: kind %v, annotations %v; want VALIDATION_KIND_TRAIN_JOB and none", k, a)
		}
	})

	for _, tc := range []struct {
		name        string
		kind        pluginv1.ValidationKind
		annotations map[string]string
		want        framework.ValidationKind
	}{
		{name: "a host before 1.3 says a runtime check with the annotation", annotations: map[string]string{RuntimeCheckAnnotation: "true"}, want: framework.ValidateRuntime},
		{name: "a host before 1.3 checks a TrainJob", want: framework.ValidateTrainJob},
		{name: "a host since 1.3 checks a runtime", kind: pluginv1.ValidationKind_VALIDATION_KIND_RUNTIME, annotations: map[string]string{RuntimeCheckAnnotation: "true"}, want: framework.ValidateRuntime},
		{name: "a host since 1.3 checks a TrainJob", kind: pluginv1.ValidationKind_VALIDATION_KIND_TRAIN_JOB, want: framework.ValidateTrainJob},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &wirePlugin{}
			job := framework.RuntimeCheckJob("mpi")
			job.Annotations = tc.annotations
			jobJSON, _ := json.Marshal(job)
			if _, err := NewServer(p).Validate(ctx, &pluginv1.ValidateRequest{Info: infoJSON, NewTrainJob: jobJSON, Kind: tc.kind}); err != nil {
				t.Fatal(err)
			}
			if p.got.Kind != tc.want || len(p.got.NewJob.Annotations) != 0 {
				t.Errorf("the plugin got kind %q and annotations %v; want %q and none, as in process", p.got.Kind, p.got.NewJob.Annotations, tc.want)
			}
		})
	}
}

func TestSkewCreateOnce(t *testing.T) {
	ctx := context.Background()
	info := &framework.Info{Version: framework.InfoVersion}
	infoJSON, _ := json.Marshal(info)
	jobJSON, _ := json.Marshal(&trainer.TrainJob{})

	t.Run("a plugin since 1.3 answers hosts before 1.3 too", func(t *testing.T) {
		resp, err := NewServer(&wirePlugin{}).Build(ctx, &pluginv1.BuildRequest{Info: infoJSON, TrainJob: jobJSON})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]uint32{0}, resp.GetCreateOnce()); diff != "" {
			t.Errorf("create_once (-want +got):\n%s", diff)
		}
		for i, want := range []string{ApplyIfNotPresent, ""} {
			o := &unstructured.Unstructured{}
			if err := o.UnmarshalJSON(resp.GetObjects()[i]); err != nil {
				t.Fatal(err)
			}
			if got := o.GetAnnotations()[ApplyPolicyAnnotation]; got != want {
				t.Errorf("object %d: %s = %q, want %q", i, ApplyPolicyAnnotation, got, want)
			}
		}
	})

	marked := &unstructured.Unstructured{}
	marked.SetGroupVersionKind(secretGVK)
	marked.SetName("key")
	marked.SetAnnotations(map[string]string{ApplyPolicyAnnotation: ApplyIfNotPresent, "team": "a"})
	markedJSON, _ := marked.MarshalJSON()
	plain := &unstructured.Unstructured{}
	plain.SetGroupVersionKind(secretGVK)
	plain.SetName("plain")
	plainJSON, _ := plain.MarshalJSON()
	for _, tc := range []struct {
		name    string
		answer  *pluginv1.BuildResponse
		want    []bool
		wantErr string
	}{
		{name: "a plugin before 1.3 marks with the annotation", answer: &pluginv1.BuildResponse{Objects: [][]byte{plainJSON, markedJSON}}, want: []bool{false, true}},
		{name: "a plugin since 1.3 lists the index", answer: &pluginv1.BuildResponse{Objects: [][]byte{plainJSON, plainJSON}, CreateOnce: []uint32{1}}, want: []bool{false, true}},
		{name: "an index out of range", answer: &pluginv1.BuildResponse{Objects: [][]byte{plainJSON}, CreateOnce: []uint32{1}}, wantErr: "create_once names object 1, but the answer has 1 objects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := describedClient(ctx, serveSkew(t, &recording{build: tc.answer}))
			if err != nil {
				t.Fatal(err)
			}
			objs, err := c.Build(ctx, info, &trainer.TrainJob{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Build error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range objs {
				if o.CreateOnce != tc.want[i] {
					t.Errorf("object %d: CreateOnce %v, want %v", i, o.CreateOnce, tc.want[i])
				}
				if _, ok := o.GetAnnotations()[ApplyPolicyAnnotation]; ok {
					t.Errorf("object %d keeps %s: the host removes it, so that the object is the one an in-process plugin builds", i, ApplyPolicyAnnotation)
				}
			}
			if a := objs[len(objs)-1].GetAnnotations(); tc.answer.CreateOnce == nil && a["team"] != "a" {
				t.Errorf("the plugin's other annotations are gone: %v", a)
			}
		})
	}

	t.Run("a plugin and a host since 1.3", func(t *testing.T) {
		objs, err := mustDial(t, &wirePlugin{}).Build(ctx, info, &trainer.TrainJob{})
		if err != nil {
			t.Fatal(err)
		}
		local, _ := (&wirePlugin{}).Build(ctx, info, &trainer.TrainJob{})
		if diff := cmp.Diff(local, objs); diff != "" {
			t.Errorf("the objects over the wire differ from those in process (-in process +wire):\n%s", diff)
		}
	})
}

func mustDial(t *testing.T, p framework.Plugin) *Client {
	t.Helper()
	c, err := describedClient(context.Background(), serveSkew(t, NewServer(p)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hostReader is a plugin made from the host's facts: it takes args only
// when the host gave it a status endpoint.
type hostReader struct{ h framework.Handle }

func (*hostReader) Describe() framework.Description { return framework.Description{Name: "Reader"} }

func (r *hostReader) Configure(_ context.Context, args json.RawMessage) error {
	if r.h.StatusEndpoint().URL == "" && len(args) > 0 {
		return &field.Error{Type: field.ErrorTypeInvalid, Field: "args", Detail: "no status endpoint"}
	}
	return nil
}

func TestSkewHostFacts(t *testing.T) {
	ctx := context.Background()
	facts := framework.Host{Status: framework.StatusEndpoint{URL: "https://progress.ml-system.svc:8443", CAConfigMapName: "ca", TokenExpirationSeconds: 7200}}

	t.Run("a host since 1.3 sends its facts with Configure", func(t *testing.T) {
		old := &recording{}
		c, err := describedClient(ctx, serveSkew(t, old))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ConfigureWith(ctx, json.RawMessage(`{"a":1}`), facts); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(facts, HostFromProto(old.configure.GetHost())); diff != "" {
			t.Errorf("the facts the plugin got (-sent +got):\n%s", diff)
		}
	})

	var made []framework.Handle
	factory := func(h framework.Handle) framework.Plugin {
		made = append(made, h)
		return &hostReader{h: h}
	}
	srv := NewFactoryServer(factory)
	c := NewClient(serveSkew(t, srv), Limits{})
	d, _, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "Reader" {
		t.Fatalf("Describe = %+v, from the plugin made with an empty Host", d)
	}
	// A host before 1.3 sends no facts: the plugin is made with none,
	// and refuses what needs them.
	if err := c.Configure(ctx, json.RawMessage(`{"a":1}`)); err == nil {
		t.Error("Configure without facts succeeded, want the plugin's refusal")
	}
	if err := c.ConfigureWith(ctx, json.RawMessage(`{"a":1}`), facts); err != nil {
		t.Fatalf("Configure with the facts: %v", err)
	}
	want := []framework.Handle{framework.Host{}, framework.Host{}, facts}
	if diff := cmp.Diff(want, made); diff != "" {
		t.Errorf("the Handles the factory got: at the start, per Configure (-want +got):\n%s", diff)
	}
	if got := srv.current.Load().plugin.(*hostReader).h; got != framework.Handle(facts) {
		t.Errorf("the plugin in use was made from %v, want the facts of the last accepted Configure", got)
	}
}

// describedClient returns the Client of rpc once its plugin has described
// itself, as the host asks before any other call.
func describedClient(ctx context.Context, rpc pluginv1.PluginServiceClient) (*Client, error) {
	c := NewClient(rpc, Limits{})
	if _, _, err := c.Describe(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// livePlugin builds a Secret created once and a ConfigMap with live
// fields, held, as the JobSet plugin builds an elastic JobSet in a queue.
type livePlugin struct{ wirePlugin }

var liveData = &framework.LiveFields{Paths: []string{"/data/size"}, Held: "the queue admitted it at its size", Advice: "resize it outside the queue"}

func (p *livePlugin) Build(ctx context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	objs, _ := p.wirePlugin.Build(ctx, info, job)
	_ = unstructured.SetNestedField(objs[1].Object, "2", "data", "size")
	objs[1].Live = liveData
	return objs, nil
}

// The tests of protocol 1.4's promise: a built object with its live
// fields is one message, and hosts and plugins on either side of 1.4 keep
// each other's objects as they were built.
func TestSkewBuiltObjects(t *testing.T) {
	ctx := context.Background()
	info := &framework.Info{Version: framework.InfoVersion}
	infoJSON, _ := json.Marshal(info)
	jobJSON, _ := json.Marshal(&trainer.TrainJob{})
	local, _ := (&livePlugin{}).Build(ctx, info, &trainer.TrainJob{})

	t.Run("a plugin and a host since 1.4", func(t *testing.T) {
		rec := &recordingBuild{PluginServiceServer: NewServer(&livePlugin{})}
		c, err := describedClient(ctx, serveSkew(t, rec))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := c.Build(ctx, info, &trainer.TrainJob{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(local, objs); diff != "" {
			t.Errorf("the objects over the wire differ from those in process (-in process +wire):\n%s", diff)
		}
		if resp := rec.last(); len(resp.GetBuilt()) != 2 || len(resp.GetObjects()) != 0 || len(resp.GetCreateOnce()) != 0 {
			t.Errorf("the plugin answered a 1.4 host with %d built, %d objects, create_once %v; want 2 built alone", len(resp.GetBuilt()), len(resp.GetObjects()), resp.GetCreateOnce())
		}
		for i, b := range rec.last().GetBuilt() {
			if strings.Contains(string(b.GetObject()), "trainforge.dev/") {
				t.Errorf("built object %d carries a legacy annotation to a 1.4 host: %s", i, b.GetObject())
			}
		}
	})

	t.Run("a plugin since 1.4 answers hosts before 1.4 with the annotation", func(t *testing.T) {
		resp, err := NewServer(&livePlugin{}).Build(ctx, &pluginv1.BuildRequest{Info: infoJSON, TrainJob: jobJSON})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetBuilt()) != 0 || len(resp.GetObjects()) != 2 {
			t.Fatalf("answer: %d built, %d objects; want objects alone", len(resp.GetBuilt()), len(resp.GetObjects()))
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(resp.GetObjects()[1]); err != nil {
			t.Fatal(err)
		}
		if got, want := o.GetAnnotations()[LiveFieldsAnnotation], `["/data/size"]`; got != want {
			t.Errorf("%s = %q, want %q", LiveFieldsAnnotation, got, want)
		}
	})

	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("hosts")
	_ = unstructured.SetNestedField(cm.Object, "2", "data", "size")
	cm.SetAnnotations(map[string]string{LiveFieldsAnnotation: `["/data/size"]`})
	annotatedJSON, _ := cm.MarshalJSON()
	cm.SetAnnotations(map[string]string{LiveFieldsAnnotation: `/data/size`})
	badJSON, _ := cm.MarshalJSON()
	cm.SetAnnotations(nil)
	plainJSON, _ := cm.MarshalJSON()
	for _, tc := range []struct {
		name     string
		answer   *pluginv1.BuildResponse
		wantLive *framework.LiveFields
		wantErr  string
	}{
		{name: "a plugin before 1.4 lists live fields in the annotation", answer: &pluginv1.BuildResponse{Objects: [][]byte{annotatedJSON}}, wantLive: &framework.LiveFields{Paths: []string{"/data/size"}}},
		{name: "a plugin before 1.4 whose annotation is not a list", answer: &pluginv1.BuildResponse{Objects: [][]byte{badJSON}}, wantErr: "annotation " + LiveFieldsAnnotation},
		{name: "a plugin since 1.4 sends built", answer: &pluginv1.BuildResponse{Built: []*pluginv1.BuiltObject{{Object: plainJSON, LiveFields: []string{"/data/size"}, LiveHeld: "held"}}}, wantLive: &framework.LiveFields{Paths: []string{"/data/size"}, Held: "held"}},
		{name: "an answer with both built and objects", answer: &pluginv1.BuildResponse{Objects: [][]byte{plainJSON}, Built: []*pluginv1.BuiltObject{{Object: plainJSON}}}, wantErr: "send built alone"},
		{name: "a built object that is null", answer: &pluginv1.BuildResponse{Built: []*pluginv1.BuiltObject{{Object: []byte("null")}}}, wantErr: "null where an object goes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := describedClient(ctx, serveSkew(t, &recording{build: tc.answer}))
			if err != nil {
				t.Fatal(err)
			}
			objs, err := c.Build(ctx, info, &trainer.TrainJob{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Build error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLive, objs[0].Live); diff != "" {
				t.Errorf("live fields (-want +got):\n%s", diff)
			}
			if _, ok := objs[0].GetAnnotations()[LiveFieldsAnnotation]; ok {
				t.Errorf("the object keeps %s: the host removes it, so that the object is the one an in-process plugin builds", LiveFieldsAnnotation)
			}
		})
	}
}

// recordingBuild passes every call to a PluginServiceServer and keeps
// its last Build answer.
type recordingBuild struct {
	pluginv1.PluginServiceServer
	mu   sync.Mutex
	resp *pluginv1.BuildResponse
}

func (r *recordingBuild) Build(ctx context.Context, req *pluginv1.BuildRequest) (*pluginv1.BuildResponse, error) {
	resp, err := r.PluginServiceServer.Build(ctx, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resp = resp
	return resp, err
}

func (r *recordingBuild) last() *pluginv1.BuildResponse {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resp
}
