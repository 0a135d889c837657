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

// A plugin answers a host that accepts Info changes (protocol 1.2) with
// them, and any other host, one of 1.1 that accepts a whole Info included,
// with a patch; both give the same Info.
func TestEnforceAnswersWithChangesOrPatch(t *testing.T) {
	change := func(i *framework.Info, _ *trainer.TrainJob) error {
		framework.MergeMap(&i.Labels, map[string]string{"team": "vision"})
		return nil
	}
	rpc := connect(t, &fullPlugin{desc: framework.Description{Name: "E"}, enforceML: change})
	ctx := context.Background()
	doc, job := mustJSON(t, testInfo()), mustJSON(t, testJob())
	want := testInfo()
	_ = change(want, nil)

	got := map[string]*framework.Info{}
	for _, host := range []struct {
		name string
		req  *pluginv1.EnforceMLPolicyRequest
	}{
		{"1.0", &pluginv1.EnforceMLPolicyRequest{Info: doc, TrainJob: job}},
		{"1.1", &pluginv1.EnforceMLPolicyRequest{Info: doc, TrainJob: job, AcceptsInfo: true}},
	} {
		resp, err := rpc.EnforceMLPolicy(ctx, host.req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetPatch()) == 0 || len(resp.GetInfo()) != 0 || len(resp.GetInfoChanges()) != 0 {
			t.Fatalf("answer to a %s host: patch %q, info %q, info_changes %q; want a patch only", host.name, resp.GetPatch(), resp.GetInfo(), resp.GetInfoChanges())
		}
		got[host.name] = testInfo()
		if err := remote.ApplyPatch(got[host.name], doc, resp.GetPatch()); err != nil {
			t.Fatal(err)
		}
	}

	cur, err := rpc.EnforceMLPolicy(ctx, &pluginv1.EnforceMLPolicyRequest{Info: doc, TrainJob: job, AcceptsInfoChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cur.GetPatch()) != 0 || len(cur.GetInfo()) != 0 || len(cur.GetInfoChanges()) == 0 {
		t.Fatalf("answer to a host with accepts_info_changes: patch %q, info %q, info_changes %q; want info_changes only", cur.GetPatch(), cur.GetInfo(), cur.GetInfoChanges())
	}
	got["1.2"] = testInfo()
	if err := remote.ApplyInfoChanges(got["1.2"], cur.GetInfoChanges()); err != nil {
		t.Fatal(err)
	}
	for name, got := range got {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Info from the answer to a %s host (-want +got):\n%s", name, diff)
		}
	}

	// No change: nothing.
	same, err := connect(t, &fullPlugin{desc: framework.Description{Name: "E"}}).EnforcePodGroupPolicy(ctx,
		&pluginv1.EnforcePodGroupPolicyRequest{Info: doc, TrainJob: job, AcceptsInfoChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(same.GetPatch()) != 0 || len(same.GetInfo()) != 0 || len(same.GetInfoChanges()) != 0 {
		t.Errorf("answer for no change: patch %q, info %q, info_changes %q; want all empty", same.GetPatch(), same.GetInfo(), same.GetInfoChanges())
	}
}

// The host holds Info changes to the rules of a patch, and refuses changes
// that are not well formed, naming where.
func TestApplyInfoChangesRefusals(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"a field Info does not have":     {`{"fields":{"trainJob":{"set":{}}}}`, `change "/trainJob", which is outside Info`},
		"the version":                    {`{"fields":{"version":{"set":"v2"}}}`, `change "/version", which is outside Info`},
		"a field a PodSet does not have": {`{"fields":{"podSets":{"items":[{"from":0,"fields":{"gpus":{"set":8}}}]}}}`, `podSets[0]: this host's Info has no field "gpus"`},
		"a value of the wrong type":      {`{"fields":{"podSets":{"items":[{"from":0,"fields":{"count":{"set":"2"}}}]}}}`, `podSets[0].count: json: cannot unmarshal string`},
		"a new element with an unknown field": {`{"fields":{"podSets":{"items":[{"from":0},{"set":{"name":"x","gpus":8}}]}}}`,
			`podSets[1]: json: unknown field "gpus"`},
		"an element that is not there":   {`{"fields":{"podSets":{"items":[{"from":3}]}}}`, "podSets[0]: from 3, but the list it was sent has 1 elements"},
		"an element taken twice":         {`{"fields":{"podSets":{"items":[{"from":0},{"from":0}]}}}`, "podSets[1]: from 0, which item 0 took already"},
		"a member that is not there":     {`{"fields":{"annotations":{"fields":{"a":{"fields":{}}}}}}`, "annotations.a: changes inside a member that is not there"},
		"fields of a list":               {`{"fields":{"podSets":{"fields":{"a":{"set":1}}}}}`, "podSets: changes the fields of a list"},
		"items of an object":             {`{"fields":{"labels":{"items":[]}}}`, "labels: changes the items of an object"},
		"inside a string":                {`{"fields":{"podSets":{"items":[{"from":0,"fields":{"name":{"fields":{}}}}]}}}`, "podSets[0].name: changes inside a string value"},
		"two kinds in one change":        {`{"fields":{"labels":{"set":{},"remove":true}}}`, "labels: a change has one of set, remove, fields and items"},
		"remove in an item":              {`{"fields":{"podSets":{"items":[{"from":0,"remove":true}]}}}`, "podSets[0]: remove is for an object's member"},
		"an item with neither":           {`{"fields":{"podSets":{"items":[{}]}}}`, `podSets[0]: a list's item is {"set": value} or {"from": n, ...}`},
		"not the root's fields":          {`{"set":{"version":"v1"}}`, `must be {"fields": {...}}`},
		"an unknown key":                 {`{"fields":{},"replace":1}`, `not an Info-changes document`},
		"not JSON":                       {`{"fields":`, "not an Info-changes document"},
		"two documents":                  {`{"fields":{}} {}`, "data after the document"},
		"inside the template, not there": {`{"fields":{"template":{"fields":{"spec":{"fields":{"x":{"fields":{}}}}}}}}`, "template.spec.x: changes inside a member that is not there"},
	} {
		t.Run(name, func(t *testing.T) {
			info := testInfo()
			err := remote.ApplyInfoChanges(info, []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ApplyInfoChanges error %v, want one containing %q", err, tc.want)
			}
			if diff := cmp.Diff(testInfo(), info); diff != "" {
				t.Errorf("refused changes changed Info (-want +got):\n%s", diff)
			}
		})
	}
}

// twoAnswers answers EnforceMLPolicy with a fixed response.
type twoAnswers struct {
	pluginv1.PluginServiceClient
	resp *pluginv1.EnforceMLPolicyResponse
}

func (a twoAnswers) EnforceMLPolicy(context.Context, *pluginv1.EnforceMLPolicyRequest, ...grpc.CallOption) (*pluginv1.EnforceMLPolicyResponse, error) {
	return a.resp, nil
}

// The host refuses an answer with a patch and Info changes, and one with a
// whole Info, which it does not ask for.
func TestAnAnswerWithTwoChangesOrAWholeInfoIsRefused(t *testing.T) {
	for _, tc := range []struct {
		resp *pluginv1.EnforceMLPolicyResponse
		want string
	}{
		{&pluginv1.EnforceMLPolicyResponse{Patch: []byte(`[]`), InfoChanges: []byte(`{"fields":{}}`)}, "both a patch and info_changes"},
		{&pluginv1.EnforceMLPolicyResponse{Info: []byte(`{"version":"v1","podSets":[]}`)}, "does not ask for (accepts_info is false)"},
	} {
		rpc := twoAnswers{PluginServiceClient: connect(t, &fullPlugin{desc: framework.Description{Name: "E"}}), resp: tc.resp}
		c, err := remote.Dial(context.Background(), rpc)
		if err != nil {
			t.Fatal(err)
		}
		info := testInfo()
		err = c.EnforceMLPolicy(context.Background(), info, testJob())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
		if diff := cmp.Diff(testInfo(), info); diff != "" {
			t.Errorf("Info changed (-want +got):\n%s", diff)
		}
	}
}
