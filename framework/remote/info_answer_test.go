package remote_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// A plugin answers a host that accepts the changed Info with the Info, and
// any other host (before protocol 1.1) with a patch; both give the same
// Info.
func TestEnforceAnswersWithInfoOrPatch(t *testing.T) {
	change := func(i *framework.Info, _ *trainer.TrainJob) error {
		framework.MergeMap(&i.Labels, map[string]string{"team": "vision"})
		return nil
	}
	rpc := connect(t, &fullPlugin{desc: framework.Description{Name: "E"}, enforceML: change})
	ctx := context.Background()
	doc, job := mustJSON(t, testInfo()), mustJSON(t, testJob())
	want := testInfo()
	_ = change(want, nil)

	old, err := rpc.EnforceMLPolicy(ctx, &pluginv1.EnforceMLPolicyRequest{Info: doc, TrainJob: job})
	if err != nil {
		t.Fatal(err)
	}
	if len(old.GetPatch()) == 0 || len(old.GetInfo()) != 0 {
		t.Fatalf("answer to a host without accepts_info: patch %q, info %q; want a patch only", old.GetPatch(), old.GetInfo())
	}
	fromPatch := testInfo()
	if err := remote.ApplyPatch(fromPatch, doc, old.GetPatch()); err != nil {
		t.Fatal(err)
	}

	cur, err := rpc.EnforceMLPolicy(ctx, &pluginv1.EnforceMLPolicyRequest{Info: doc, TrainJob: job, AcceptsInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.GetPatch()) != 0 || len(cur.GetInfo()) == 0 {
		t.Fatalf("answer to a host with accepts_info: patch %q, info %q; want the info only", cur.GetPatch(), cur.GetInfo())
	}
	fromInfo := testInfo()
	if err := remote.ApplyInfo(fromInfo, cur.GetInfo()); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*framework.Info{"patch": fromPatch, "info": fromInfo} {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Info from the %s (-want +got):\n%s", name, diff)
		}
	}

	// No change: neither.
	same, err := connect(t, &fullPlugin{desc: framework.Description{Name: "E"}}).EnforcePodGroupPolicy(ctx,
		&pluginv1.EnforcePodGroupPolicyRequest{Info: doc, TrainJob: job, AcceptsInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(same.GetPatch()) != 0 || len(same.GetInfo()) != 0 {
		t.Errorf("answer for no change: patch %q, info %q; want both empty", same.GetPatch(), same.GetInfo())
	}
}

// The host holds a changed Info to the rules of a patch.
func TestApplyInfoRefusals(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"a field Info does not have": {`{"version":"v1","podSets":[],"trainJob":{"spec":{}}}`, `unknown field "trainJob"`},
		"another version":            {`{"version":"v2","podSets":[]}`, `(replace "/version") is outside Info`},
		"not JSON":                   {`{"version":`, "is not an Info"},
		"two documents":              {`{"version":"v1","podSets":[]} {}`, "data after the document"},
	} {
		t.Run(name, func(t *testing.T) {
			info := testInfo()
			err := remote.ApplyInfo(info, []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ApplyInfo error %v, want one containing %q", err, tc.want)
			}
			if diff := cmp.Diff(testInfo(), info); diff != "" {
				t.Errorf("a refused Info changed it (-want +got):\n%s", diff)
			}
		})
	}
}

// bothAnswers answers EnforceMLPolicy with a patch and an info at once.
type bothAnswers struct {
	pluginv1.PluginServiceClient
}

func (bothAnswers) EnforceMLPolicy(context.Context, *pluginv1.EnforceMLPolicyRequest, ...grpc.CallOption) (*pluginv1.EnforceMLPolicyResponse, error) {
	return &pluginv1.EnforceMLPolicyResponse{Patch: []byte(`[]`), Info: []byte(`{"version":"v1","podSets":[]}`)}, nil
}

func TestAnAnswerWithPatchAndInfoIsRefused(t *testing.T) {
	rpc := bothAnswers{PluginServiceClient: connect(t, &fullPlugin{desc: framework.Description{Name: "E"}})}
	c, err := remote.Dial(context.Background(), rpc)
	if err != nil {
		t.Fatal(err)
	}
	info := testInfo()
	err = c.EnforceMLPolicy(context.Background(), info, testJob())
	if err == nil || !strings.Contains(err.Error(), "both a patch and an info") {
		t.Errorf("error %v, want one saying the answer has both", err)
	}
	if diff := cmp.Diff(testInfo(), info); diff != "" {
		t.Errorf("Info changed (-want +got):\n%s", diff)
	}
}
