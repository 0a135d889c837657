package remote_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/trainforge/trainforge/builtin/torch"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
	"github.com/trainforge/trainforge/framework/remote"
)

// torchEnforced returns the Torch seed's Info before Torch's
// EnforceMLPolicy, and both encodings of it, before and after.
func torchEnforced(b *testing.B) (info *framework.Info, before, after []byte) {
	b.Helper()
	spec, job := frameworktest.Seed(b, frameworktest.SeedTorch)
	info = frameworktest.NewInfo(b, job, spec)
	before, err := json.Marshal(info)
	if err != nil {
		b.Fatal(err)
	}
	if err := torch.New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		b.Fatal(err)
	}
	if after, err = json.Marshal(info); err != nil {
		b.Fatal(err)
	}
	info = &framework.Info{}
	if err := json.Unmarshal(before, info); err != nil {
		b.Fatal(err)
	}
	return info, before, after
}

// BenchmarkApplyAnswer times what the host does with each kind of Enforce
// answer to Torch's EnforceMLPolicy on its seed: the whole changed Info
// (a plugin whose view of Info is the host's), Info changes (a plugin
// built against another Info) and a JSON Patch (a plugin before protocol
// 1.2).
func BenchmarkApplyAnswer(b *testing.B) {
	info, before, after := torchEnforced(b)
	changes, err := remote.CreateChanges(before, after)
	if err != nil {
		b.Fatal(err)
	}
	patch, err := remote.CreateChangesPatch(before, after)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		answer string
		apply  func(*framework.Info) error
	}{
		{"info", func(i *framework.Info) error { return remote.ApplyInfo(i, after) }},
		{"info_changes", func(i *framework.Info) error { return remote.ApplyInfoChanges(i, changes) }},
		{"patch", func(i *framework.Info) error { return remote.ApplyPatch(i, before, patch) }},
	} {
		b.Run("answer="+tc.answer, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				i := *info
				if err := tc.apply(&i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCreateAnswer times what a plugin computes for each kind of
// answer from the two encodings of Info (the whole Info needs none).
func BenchmarkCreateAnswer(b *testing.B) {
	_, before, after := torchEnforced(b)
	for _, tc := range []struct {
		answer string
		create func(before, after []byte) ([]byte, error)
	}{
		{"info_changes", remote.CreateChanges},
		{"patch", remote.CreateChangesPatch},
		{"patch-by-position (protocol 1.1 SDK)", remote.CreatePatch},
	} {
		b.Run("answer="+tc.answer, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.create(before, after); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
