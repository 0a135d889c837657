package remote_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// A plugin answers a host of protocol 1.0 with a patch; a host that
// accepts a whole Info (1.1) or Info changes (1.2) with the whole changed
// Info when its view of Info is the host's, and a 1.2 host with Info
// changes when the host sent fields the plugin does not know. Each gives
// the same Info.
func TestEnforceAnswersWithChangesOrPatch(t *testing.T) {
	change := func(i *framework.Info, _ *trainer.TrainJob) error {
		framework.MergeMap(&i.Labels, map[string]string{"team": "vision"})
		return nil
	}
	rpc := connect(t, &fullPlugin{desc: framework.Description{Name: "E"}, enforceML: change})
	ctx := context.Background()
	job := mustJSON(t, testJob())
	var withUnknown map[string]any
	if err := json.Unmarshal(mustJSON(t, testInfo()), &withUnknown); err != nil {
		t.Fatal(err)
	}
	withUnknown["podSets"].([]any)[0].(map[string]any)["futureField"] = true
	docs := map[string][]byte{"the plugin's Info": mustJSON(t, testInfo()), "a field the plugin does not know": mustJSON(t, withUnknown)}

	for _, tc := range []struct {
		host, doc, want string
		req             *pluginv1.EnforceMLPolicyRequest
	}{
		{"1.0", "the plugin's Info", "patch", &pluginv1.EnforceMLPolicyRequest{}},
		{"1.1", "the plugin's Info", "info", &pluginv1.EnforceMLPolicyRequest{AcceptsInfo: true}},
		{"1.2", "the plugin's Info", "info", &pluginv1.EnforceMLPolicyRequest{AcceptsInfoChanges: true}},
		{"1.0", "a field the plugin does not know", "patch", &pluginv1.EnforceMLPolicyRequest{}},
		{"1.1", "a field the plugin does not know", "patch", &pluginv1.EnforceMLPolicyRequest{AcceptsInfo: true}},
		{"1.2", "a field the plugin does not know", "info_changes", &pluginv1.EnforceMLPolicyRequest{AcceptsInfoChanges: true}},
	} {
		t.Run(tc.host+" host, "+tc.doc, func(t *testing.T) {
			tc.req.Info, tc.req.TrainJob = docs[tc.doc], job
			resp, err := rpc.EnforceMLPolicy(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{"patch": len(resp.GetPatch()) > 0, "info": len(resp.GetInfo()) > 0, "info_changes": len(resp.GetInfoChanges()) > 0}
			if want := map[string]bool{"patch": false, "info": false, "info_changes": false, tc.want: true}; !cmp.Equal(want, got) {
				t.Fatalf("answer: patch %q, info %q, info_changes %q; want %s only", resp.GetPatch(), resp.GetInfo(), resp.GetInfoChanges(), tc.want)
			}
			// As the host applies it, to the document it sent.
			var result []byte
			switch tc.want {
			case "patch":
				p, err := jsonpatch.DecodePatch(resp.GetPatch())
				if err != nil {
					t.Fatal(err)
				}
				if result, err = p.Apply(tc.req.Info); err != nil {
					t.Fatal(err)
				}
			case "info":
				result = resp.GetInfo()
			case "info_changes":
				info := testInfo()
				if err := remote.ApplyInfoChanges(info, resp.GetInfoChanges()); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(map[string]string{"team": "vision"}, info.Labels); diff != "" {
					t.Errorf("labels after the changes (-want +got):\n%s", diff)
				}
				return
			}
			var gotDoc, wantDoc map[string]any
			if err := json.Unmarshal(result, &gotDoc); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal(tc.req.Info, &wantDoc)
			wantDoc["labels"] = map[string]any{"team": "vision"}
			if diff := cmp.Diff(wantDoc, gotDoc); diff != "" {
				t.Errorf("Info after the answer (-want +got):\n%s", diff)
			}
		})
	}

	// No change: nothing.
	same, err := connect(t, &fullPlugin{desc: framework.Description{Name: "E"}}).EnforcePodGroupPolicy(ctx,
		&pluginv1.EnforcePodGroupPolicyRequest{Info: docs["the plugin's Info"], TrainJob: job, AcceptsInfoChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(same.GetPatch()) != 0 || len(same.GetInfo()) != 0 || len(same.GetInfoChanges()) != 0 {
		t.Errorf("answer for no change: patch %q, info %q, info_changes %q; want all empty", same.GetPatch(), same.GetInfo(), same.GetInfoChanges())
	}
}

// The host holds a whole changed Info to the rules of a patch.
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

// The host holds Info changes to the rules of a patch, and refuses changes
// that are not well formed, naming where.
func TestApplyInfoChangesRefusals(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"a field Info does not have":     {`{"fields":{"trainJob":{"set":{}}}}`, `change "/trainJob", which is outside Info`},
		"the version":                    {`{"fields":{"version":{"set":"v2"}}}`, `change "/version", which is outside Info`},
		"a field a PodSet does not have": {`{"fields":{"podSets":{"items":[{"from":0,"fields":{"gpus":{"set":8}}}]}}}`, `podSets[0]: this host's Info has no field "gpus"`},
		"a value of the wrong type":      {`{"fields":{"podSets":{"items":[{"from":0,"fields":{"count":{"set":"2"}}}]}}}`, `podSets[0].count: json: cannot unmarshal string`},
		"a new element with an unknown field": {`{"fields":{"podSets":{"items":[{"from":0},{"set":{"name":"x","gpus":8}}]}}}`,
			`podSets[1]: unknown field "gpus"`},
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

// The host refuses an answer with more than one kind of change.
func TestAnAnswerWithTwoKindsIsRefused(t *testing.T) {
	for _, resp := range []*pluginv1.EnforceMLPolicyResponse{
		{Patch: []byte(`[]`), InfoChanges: []byte(`{"fields":{}}`)},
		{Info: []byte(`{"version":"v1","podSets":[]}`), InfoChanges: []byte(`{"fields":{}}`)},
		{Patch: []byte(`[]`), Info: []byte(`{"version":"v1","podSets":[]}`)},
	} {
		rpc := twoAnswers{PluginServiceClient: connect(t, &fullPlugin{desc: framework.Description{Name: "E"}}), resp: resp}
		c := remote.NewClient(rpc, remote.Limits{})
		info := testInfo()
		err := c.EnforceMLPolicy(context.Background(), info, testJob())
		if want := "more than one of patch, info_changes and info"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
		if diff := cmp.Diff(testInfo(), info); diff != "" {
			t.Errorf("Info changed (-want +got):\n%s", diff)
		}
	}
}
