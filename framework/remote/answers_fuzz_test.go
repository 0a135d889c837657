package remote_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// The fuzz targets of this file feed what a plugin answers, as arbitrary
// bytes, to the host's side of the protocol: remote.Client and the runner
// that checks what a Client returns. An external plugin is another
// program, perhaps buggy, perhaps hostile: nothing it sends may panic the
// controller, and whatever the host accepts must be something it can use.

// patchSeeds are real patches: what the SDK computes for the built-ins'
// changes, and the refusals of TestApplyPatchRefuses.
var patchSeeds = []string{
	`[]`,
	`[{"op":"add","path":"/labels/owner","value":"torch"}]`,
	`[{"op":"add","path":"/podSets/0/containers/0/env/-","value":{"name":"PET_NNODES","value":"2"}}]`,
	`[{"op":"replace","path":"/podSets/0/count","value":4}]`,
	`[{"op":"remove","path":"/annotations/note"}]`,
	`[{"op":"copy","from":"/labels","path":"/annotations"}]`,
	`[{"op":"move","from":"/labels/team","path":"/labels/group"}]`,
	`[{"op":"test","path":"/version","value":"v1"}]`,
	`[{"op":"replace","path":"/version","value":"v2"}]`,
	`[{"op":"add","path":"/spec","value":{}}]`,
	`[{"op":"add","path":"labels/version","value":"x"}]`,
	`[{"op":"replace","path":"","value":{}}]`,
	`[{"op":"add","path":"/podSets/0/count","value":"two"}]`,
	`[{"op":"add","path":"/template/spec/suspend","value":true}]`,
	`[{"op":"add","path":"/labels~1x","value":"y"}]`,
	`[{"op":"copy","from":"/podSets/0","path":"/podSets/-"},{"op":"copy","from":"/podSets/0","path":"/podSets/-"},{"op":"copy","from":"/podSets","path":"/template/copies"}]`,
	`[{"op":"add","path":"/labels/a","value":"1"},{"op":"add","path":"/labels/b","value":"2"},{"op":"add","path":"/labels/c","value":"3"},{"op":"add","path":"/labels/d","value":"4"}]`,
	`{"op":"add"}`,
	`not json`,
}

// FuzzApplyPatch applies arbitrary patches to an Info. It must never
// panic; a refused patch leaves Info as it was; an accepted one gives an
// Info of the same version that encodes and decodes to itself; and a patch
// with an operation outside Info's patchable fields is always refused.
func FuzzApplyPatch(f *testing.F) {
	for _, s := range patchSeeds {
		f.Add([]byte(s))
	}
	doc, err := json.Marshal(testInfo())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, patch []byte) {
		info := testInfo()
		err := remote.ApplyPatch(info, doc, patch)
		if err != nil {
			if diff := cmp.Diff(testInfo(), info); diff != "" {
				t.Fatalf("a refused patch (%v) changed Info (-want +got):\n%s", err, diff)
			}
			return
		}
		if outside := outsideOperation(patch); outside != "" {
			t.Fatalf("accepted a patch with an operation outside Info (%s): %s", outside, patch)
		}
		checkUsableInfo(t, info)

		// Within tight bounds, as pluginHost.limits sets them.
		bounded := testInfo()
		err = remote.ApplyPatchWithin(bounded, doc, patch, fuzzLimits)
		if err != nil {
			if diff := cmp.Diff(testInfo(), bounded); diff != "" {
				t.Fatalf("a refused patch (%v) changed Info (-want +got):\n%s", err, diff)
			}
			return
		}
		if p, err := jsonpatch.DecodePatch(patch); err == nil && len(p) > fuzzLimits.MaxPatchOperations {
			t.Fatalf("accepted %d operations, more than the bound %d", len(p), fuzzLimits.MaxPatchOperations)
		}
		checkUsableInfo(t, bounded)
	})
}

// fuzzLimits are bounds small enough for fuzzed answers to cross them.
var fuzzLimits = remote.Limits{MaxObjects: 2, MaxObjectBytes: 512, MaxPatchOperations: 3, MaxCopyBytes: 1024}

// outsideOperation returns the path of the first operation of a decodable
// patch that reaches outside Info's patchable fields, or "".
func outsideOperation(patch []byte) string {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return ""
	}
	patchable := []string{"labels", "annotations", "runtimePolicy", "podSets", "template"}
	for _, op := range p {
		paths := []string{}
		if path, err := op.Path(); err == nil {
			paths = append(paths, path)
		}
		if k := op.Kind(); k == "move" || k == "copy" {
			if from, err := op.From(); err == nil {
				paths = append(paths, from)
			}
		}
		for _, path := range paths {
			rest, ok := strings.CutPrefix(path, "/")
			seg, _, _ := strings.Cut(rest, "/")
			seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
			if !ok || !slices.Contains(patchable, seg) {
				return path
			}
		}
	}
	return ""
}

// checkUsableInfo fails unless info, as the host stored it, is an Info of
// the version it sent that encodes and decodes to the same thing.
func checkUsableInfo(t *testing.T, info *framework.Info) {
	t.Helper()
	if info.Version != framework.InfoVersion {
		t.Fatalf("an accepted answer changed Info's version to %q", info.Version)
	}
	data, err := json.Marshal(info)
	if err != nil {
		t.Fatalf("the Info of an accepted answer does not encode: %v", err)
	}
	back := &framework.Info{}
	if err := json.Unmarshal(data, back); err != nil {
		t.Fatalf("the Info of an accepted answer does not decode: %v\n%s", err, data)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Fatalf("the Info of an accepted answer changes through encode and decode:\n%s\n%s", data, again)
	}
}

// changesSeeds are real Info changes, what the SDK computes for the
// built-ins' changes, and the refusals of TestApplyInfoChangesRefusals.
var changesSeeds = []string{
	`{"fields":{"labels":{"fields":{"owner":{"set":"torch"}}}}}`,
	`{"fields":{"podSets":{"items":[{"from":0,"fields":{"count":{"set":4},"containers":{"items":[{"from":0,"fields":{"env":{"items":[{"set":{"name":"PET_NNODES","value":"2"}},{"from":0}]}}}]}}}]}}}`,
	`{"fields":{"annotations":{"fields":{"note":{"remove":true}}}}}`,
	`{"fields":{"podSets":{"items":[{"from":0},{"set":{"name":"launcher","replicas":1,"count":1}}]}}}`,
	`{"fields":{"podSets":{"items":[{"from":0,"fields":{"volumes":{"set":[{"name":"shm","emptyDir":{"medium":"Memory","sizeLimit":"1Gi"}}]}}}]}}}`,
	`{"fields":{"template":{"fields":{"spec":{"fields":{"suspend":{"set":true}}}}}}}`,
	`{"fields":{"runtimePolicy":{"fields":{"mlPolicy":{"fields":{"torch":{"fields":{"numProcPerNode":{"set":"auto"}}}}}}}}}`,
	`{"fields":{"version":{"set":"v2"}}}`,
	`{"fields":{"spec":{"set":{}}}}`,
	`{"fields":{"podSets":{"items":[{"from":0},{"from":0}]}}}`,
	`{"fields":{"podSets":{"items":[{"from":-1}]}}}`,
	`{"fields":{"podSets":{"items":[{"from":0,"fields":{"count":{"set":"two"}}}]}}}`,
	`{"fields":{"labels":{"set":{},"remove":true}}}`,
	`{"set":{"version":"v1"}}`,
	`{"fields":{"podSets":{"items":[{"from":0,"fields":{"overhead":{"fields":{"cpu":{"fields":{}}}}}}]}}}`,
	`null`,
	`[]`,
}

// FuzzApplyInfo stores arbitrary documents as a plugin's whole changed
// Info: the same rules as a patch.
func FuzzApplyInfo(f *testing.F) {
	doc, err := json.Marshal(testInfo())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	for _, s := range []string{
		`{"version":"v1","podSets":[]}`,
		`{"version":"v2","podSets":[]}`,
		`{"version":"v1","podSets":[],"spec":{}}`,
		`{"version":"v1","podSets":[{"name":"node","count":"2"}]}`,
		`{"version":"v1","template":{"spec":{}}} {}`,
		`{"version":"v1","template":"a string"}`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		info := testInfo()
		if err := remote.ApplyInfo(info, answer); err != nil {
			if diff := cmp.Diff(testInfo(), info); diff != "" {
				t.Fatalf("a refused Info (%v) changed Info (-want +got):\n%s", err, diff)
			}
			return
		}
		checkUsableInfo(t, info)
	})
}

// FuzzApplyInfoChanges applies arbitrary documents as a plugin's Info
// changes (info_changes, protocol 1.2): the same rules as a patch. It must
// never panic; refused changes leave Info as it was; accepted ones give an
// Info of the same version that encodes and decodes to itself, and never
// change a field outside Info's own.
func FuzzApplyInfoChanges(f *testing.F) {
	for _, s := range changesSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		info := testInfo()
		if err := remote.ApplyInfoChanges(info, answer); err != nil {
			if diff := cmp.Diff(testInfo(), info); diff != "" {
				t.Fatalf("refused changes (%v) changed Info (-want +got):\n%s", err, diff)
			}
			return
		}
		var root struct {
			Fields map[string]json.RawMessage `json:"fields"`
		}
		if json.Unmarshal(answer, &root) == nil {
			for name := range root.Fields {
				if !slices.Contains([]string{"labels", "annotations", "runtimePolicy", "podSets", "template"}, name) {
					t.Fatalf("accepted changes to %q, outside Info: %s", name, answer)
				}
			}
		}
		checkUsableInfo(t, info)
	})
}

// Answer kinds of FuzzPluginAnswer: which method's response the bytes are.
const (
	answerDescribe = iota
	answerValidate
	answerEnforceML
	answerEnforcePG
	answerBuild
	answerWatch
	answerStatus
	answerKinds
)

// answers is a PluginServiceClient whose every method answers with the
// message decoded from fixed bytes, as a plugin's process would send it.
type answers struct {
	pluginv1.PluginServiceClient
	describe *pluginv1.DescribeResponse
	message  proto.Message
}

func (a *answers) Describe(context.Context, *pluginv1.DescribeRequest, ...grpc.CallOption) (*pluginv1.DescribeResponse, error) {
	return a.describe, nil
}

func (a *answers) Configure(context.Context, *pluginv1.ConfigureRequest, ...grpc.CallOption) (*pluginv1.ConfigureResponse, error) {
	return &pluginv1.ConfigureResponse{}, nil
}

func (a *answers) Validate(context.Context, *pluginv1.ValidateRequest, ...grpc.CallOption) (*pluginv1.ValidateResponse, error) {
	return a.message.(*pluginv1.ValidateResponse), nil
}

func (a *answers) EnforceMLPolicy(context.Context, *pluginv1.EnforceMLPolicyRequest, ...grpc.CallOption) (*pluginv1.EnforceMLPolicyResponse, error) {
	return a.message.(*pluginv1.EnforceMLPolicyResponse), nil
}

func (a *answers) EnforcePodGroupPolicy(context.Context, *pluginv1.EnforcePodGroupPolicyRequest, ...grpc.CallOption) (*pluginv1.EnforcePodGroupPolicyResponse, error) {
	return a.message.(*pluginv1.EnforcePodGroupPolicyResponse), nil
}

func (a *answers) Build(context.Context, *pluginv1.BuildRequest, ...grpc.CallOption) (*pluginv1.BuildResponse, error) {
	return a.message.(*pluginv1.BuildResponse), nil
}

func (a *answers) Watch(context.Context, *pluginv1.WatchRequest, ...grpc.CallOption) (*pluginv1.WatchResponse, error) {
	return a.message.(*pluginv1.WatchResponse), nil
}

func (a *answers) Status(context.Context, *pluginv1.StatusRequest, ...grpc.CallOption) (*pluginv1.StatusResponse, error) {
	return a.message.(*pluginv1.StatusResponse), nil
}

// newAnswer returns an empty response message of an answer kind.
func newAnswer(kind int) proto.Message {
	switch kind {
	case answerDescribe:
		return &pluginv1.DescribeResponse{}
	case answerValidate:
		return &pluginv1.ValidateResponse{}
	case answerEnforceML:
		return &pluginv1.EnforceMLPolicyResponse{}
	case answerEnforcePG:
		return &pluginv1.EnforcePodGroupPolicyResponse{}
	case answerBuild:
		return &pluginv1.BuildResponse{}
	case answerWatch:
		return &pluginv1.WatchResponse{}
	default:
		return &pluginv1.StatusResponse{}
	}
}

// setPayload puts JSON bytes where the answer of a kind carries JSON: the
// patch, the Info changes, a built object, the status, a field error's
// bad value. The fuzzer then mutates JSON itself, not only the protobuf
// framing around it.
func setPayload(m proto.Message, payload []byte, alt bool) {
	switch r := m.(type) {
	case *pluginv1.DescribeResponse:
		if alt {
			r.Name = string(payload)
		}
	case *pluginv1.ValidateResponse:
		r.FieldErrors = append(r.FieldErrors, &pluginv1.FieldError{Field: "spec.trainer", Detail: "fuzz", BadValue: payload})
	case *pluginv1.EnforceMLPolicyResponse:
		if alt {
			r.InfoChanges = payload
		} else {
			r.Patch = payload
		}
	case *pluginv1.EnforcePodGroupPolicyResponse:
		if alt {
			r.InfoChanges = payload
		} else {
			r.Patch = payload
		}
	case *pluginv1.BuildResponse:
		r.Objects = append(r.Objects, payload)
	case *pluginv1.WatchResponse:
		if alt {
			r.Sources = append(r.Sources, &pluginv1.WatchSource{Kind: &pluginv1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Mapping: pluginv1.Mapping_MAPPING_LABEL, Label: string(payload)})
		}
	case *pluginv1.StatusResponse:
		r.Status = payload
	}
}

// fuzzDescribe is the description the fuzzed plugin gives when the
// answer fuzzed is not Describe's: every point, every job.
func fuzzDescribe() *pluginv1.DescribeResponse {
	return &pluginv1.DescribeResponse{
		Name:         "Fuzz",
		Version:      "1.0.0",
		MlPolicyKeys: []string{"*"},
		Points: []pluginv1.ExtensionPoint{
			pluginv1.ExtensionPoint_EXTENSION_POINT_VALIDATE,
			pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY,
			pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_POD_GROUP_POLICY,
			pluginv1.ExtensionPoint_EXTENSION_POINT_BUILD,
			pluginv1.ExtensionPoint_EXTENSION_POINT_WATCH,
			pluginv1.ExtensionPoint_EXTENSION_POINT_STATUS,
		},
		Builds: []*pluginv1.GroupVersionKind{
			{Version: "v1", Kind: "ConfigMap"},
			{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"},
		},
	}
}

func mustMarshal(f *testing.F, m proto.Message) []byte {
	f.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// FuzzPluginAnswer decodes arbitrary protobuf bytes as the response of
// each method, optionally with arbitrary JSON where the response carries
// JSON, and hands it to the host: remote.Dial for Describe, the runner over
// a remote.Client for the other points (which is where built objects and
// watches are checked). Nothing may panic; what is accepted must be usable:
// a described plugin has a name and whole kinds, an enforced Info keeps its
// version, built objects are of a declared kind, named, in the TrainJob's
// namespace.
func FuzzPluginAnswer(f *testing.F) {
	info := mustInfoJSON(f)
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"job-config"},"data":{"a":"b"}}`
	seeds := []struct {
		kind    int
		message proto.Message
		payload string
		alt     bool
	}{
		{answerDescribe, fuzzDescribe(), "", false},
		{answerDescribe, &pluginv1.DescribeResponse{Name: "X", Builds: []*pluginv1.GroupVersionKind{{Kind: "ConfigMap"}}}, "", false},
		{answerDescribe, &pluginv1.DescribeResponse{Points: []pluginv1.ExtensionPoint{99}}, "Fuzz", true},
		{answerValidate, &pluginv1.ValidateResponse{Warnings: []string{"deprecated"}, FieldErrors: []*pluginv1.FieldError{{Type: pluginv1.FieldErrorType_FIELD_ERROR_TYPE_REQUIRED, Field: "spec.trainer.image"}}}, `"busybox"`, false},
		{answerValidate, &pluginv1.ValidateResponse{FieldErrors: []*pluginv1.FieldError{{Type: 42}}}, `{`, false},
		{answerEnforceML, &pluginv1.EnforceMLPolicyResponse{}, `[{"op":"add","path":"/labels/x","value":"y"}]`, false},
		{answerEnforceML, &pluginv1.EnforceMLPolicyResponse{}, `[{"op":"add","path":"/spec","value":{}}]`, false},
		{answerEnforceML, &pluginv1.EnforceMLPolicyResponse{}, changesSeeds[1], true},
		{answerEnforceML, &pluginv1.EnforceMLPolicyResponse{}, string(info), true},
		{answerEnforceML, &pluginv1.EnforceMLPolicyResponse{Info: info}, "", false},
		{answerEnforcePG, &pluginv1.EnforcePodGroupPolicyResponse{Patch: []byte(`[]`)}, changesSeeds[0], true},
		{answerEnforcePG, &pluginv1.EnforcePodGroupPolicyResponse{}, `[{"op":"replace","path":"/podSets/0/count","value":8}]`, false},
		{answerBuild, &pluginv1.BuildResponse{}, cm, false},
		{answerBuild, &pluginv1.BuildResponse{Objects: [][]byte{[]byte(cm)}}, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`, false},
		{answerBuild, &pluginv1.BuildResponse{}, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"other"}}`, false},
		{answerBuild, &pluginv1.BuildResponse{}, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":5}}`, false},
		{answerBuild, &pluginv1.BuildResponse{}, `{"kind":"ConfigMap"}`, false},
		{answerBuild, &pluginv1.BuildResponse{Objects: [][]byte{[]byte(cm), []byte(cm)}}, cm, false},
		{answerBuild, &pluginv1.BuildResponse{}, `[]`, false},
		{answerWatch, &pluginv1.WatchResponse{Sources: []*pluginv1.WatchSource{{Kind: &pluginv1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Mapping: pluginv1.Mapping_MAPPING_OWNER_REFERENCE}}}, "", false},
		{answerWatch, &pluginv1.WatchResponse{Sources: []*pluginv1.WatchSource{{Mapping: 7}}}, "", false},
		{answerWatch, &pluginv1.WatchResponse{}, "", true},
		{answerStatus, &pluginv1.StatusResponse{}, `{"conditions":[{"type":"Complete","status":"True","reason":"JobSetCompleted","message":"done","lastTransitionTime":"2026-01-01T00:00:00Z"}],"jobsStatus":[{"name":"node","ready":0,"succeeded":2,"failed":0,"active":0,"suspended":0}]}`, false},
		{answerStatus, &pluginv1.StatusResponse{}, `{"conditions":"no"}`, false},
	}
	for _, s := range seeds {
		f.Add(uint8(s.kind), mustMarshal(f, s.message), []byte(s.payload), s.alt)
	}
	f.Fuzz(func(t *testing.T, kind uint8, message, payload []byte, alt bool) {
		k := int(kind) % answerKinds
		m := newAnswer(k)
		if err := proto.Unmarshal(message, m); err != nil {
			return // gRPC would have refused the frame
		}
		if len(payload) > 0 || alt {
			setPayload(m, payload, alt)
		}
		rpc := &answers{describe: fuzzDescribe(), message: m}
		if k == answerDescribe {
			rpc.describe = m.(*pluginv1.DescribeResponse)
		}
		ctx := context.Background()
		var limits remote.Limits
		bounded := len(message)%2 == 1 // half the inputs within tight bounds
		if bounded {
			limits = fuzzLimits
		}
		p, err := remote.Dial(ctx, remote.NewClient(rpc, limits))
		if err != nil {
			return
		}
		c := p.Client()
		desc := p.Describe()
		if desc.Name == "" {
			t.Fatal("Dial accepted a plugin without a name")
		}
		for _, gvk := range desc.Builds {
			if gvk.Version == "" || gvk.Kind == "" {
				t.Fatalf("Dial accepted a built kind without a version or kind: %v", gvk)
			}
		}
		if k == answerDescribe {
			// The runner must take a described plugin as it is.
			if _, err := frameworkruntime.New(ctx, framework.Registry{desc.Name: func(framework.Handle) framework.Plugin { return p }}, []frameworkruntime.PluginSpec{{Name: desc.Name}}); err != nil {
				t.Fatalf("the runner refused an accepted description: %v", err)
			}
			return
		}
		fw, err := frameworkruntime.New(ctx, framework.Registry{"Fuzz": func(framework.Handle) framework.Plugin { return p }}, []frameworkruntime.PluginSpec{{Name: "Fuzz"}})
		if err != nil {
			t.Fatalf("frameworkruntime.New: %v", err)
		}
		job := testJob()
		switch k {
		case answerValidate:
			_, errs := fw.Current().Validate(ctx, framework.ValidateRequest{Info: testInfo(), NewJob: job})
			for _, e := range errs {
				if e == nil {
					t.Fatal("Validate gave a nil field error")
				}
				_ = e.Error()
			}
		case answerEnforceML, answerEnforcePG:
			info := testInfo()
			var err error
			if k == answerEnforceML {
				err = c.EnforceMLPolicy(ctx, info, job)
			} else {
				err = c.EnforcePodGroupPolicy(ctx, info, job)
			}
			if err != nil {
				if diff := cmp.Diff(testInfo(), info); diff != "" {
					t.Fatalf("a refused answer (%v) changed Info (-want +got):\n%s", err, diff)
				}
				return
			}
			checkUsableInfo(t, info)
		case answerBuild:
			info := testInfo()
			keys, err := info.PolicyKeys()
			if err != nil {
				t.Fatal(err)
			}
			cycle, err := fw.Current().NewCycle(job, keys)
			if err != nil {
				return // the plugin owns no key of the job
			}
			objs, err := cycle.Build(ctx, info)
			if err != nil {
				return
			}
			if bounded && len(objs) > fuzzLimits.MaxObjects {
				t.Fatalf("accepted %d objects, more than the bound %d", len(objs), fuzzLimits.MaxObjects)
			}
			for _, o := range objs {
				checkBuiltObject(t, desc, o.Object, job.Namespace)
			}
		case answerWatch:
			sources, _, err := fw.Current().WatchSources(ctx)
			if err != nil {
				return
			}
			for _, s := range sources {
				if s.Kind.Kind == "" || s.Kind.Version == "" {
					t.Fatalf("accepted a watch of an incomplete kind %v", s.Kind)
				}
				if s.Mapping == framework.MapByLabel && s.Label == "" {
					t.Fatalf("accepted a watch by label without a label: %+v", s)
				}
			}
		case answerStatus:
			st, err := c.Status(ctx, nil, job, nil)
			if err == nil && st != nil {
				if _, err := json.Marshal(st); err != nil {
					t.Fatalf("an accepted status does not encode: %v", err)
				}
			}
		}
	})
}

func checkBuiltObject(t *testing.T, desc framework.Description, o *unstructured.Unstructured, namespace string) {
	t.Helper()
	if o == nil {
		t.Fatal("the runner accepted a nil object")
	}
	if !slices.Contains(desc.Builds, o.GroupVersionKind()) {
		t.Fatalf("the runner accepted a %v, which the plugin did not declare (%v)", o.GroupVersionKind(), desc.Builds)
	}
	if o.GetName() == "" {
		t.Fatal("the runner accepted an object without a name")
	}
	if o.GetNamespace() != namespace {
		t.Fatalf("the runner accepted an object in namespace %q, not the TrainJob's %q", o.GetNamespace(), namespace)
	}
	if _, err := o.MarshalJSON(); err != nil {
		t.Fatalf("an accepted object does not encode: %v", err)
	}
}

func mustInfoJSON(f *testing.F) []byte {
	f.Helper()
	data, err := json.Marshal(testInfo())
	if err != nil {
		f.Fatal(err)
	}
	return data
}
