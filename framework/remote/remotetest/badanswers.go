// Package remotetest holds the table of bad plugin answers that every
// answer format is checked against (bad-answers.json): the same faults (a
// field in the wrong case, a key given twice, an unknown field, too deep,
// too big, a wrong type, JSON that is not JSON, two documents), each
// written in every format a plugin answers with JSON, and the host's
// message for each. framework/remote runs it through remote.Client,
// examples/plugins/deepspeed sends it from a Python plugin through the
// plugin host, and test/badinput shows it in docs/bad-input.md, so that
// one table proves the host decodes every format by the same rules.
package remotetest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

//go:embed bad-answers.json
var tableJSON []byte

// TableFile is the table's path from the repository's root, for programs
// in other languages.
const TableFile = "framework/remote/remotetest/bad-answers.json"

// Formats are the answer formats, each a JSON document of a response: an
// Enforce answer's info, patch and info_changes, a Build answer's object,
// a Status answer's status, and a Validate field error's bad_value.
// Describe, Configure and Watch answers carry no JSON.
var Formats = []string{"info", "patch", "info_changes", "object", "status", "bad_value"}

// FormatNames say where each format is, for people.
var FormatNames = map[string]string{
	"info":         "EnforceMLPolicy, a whole changed Info",
	"patch":        "EnforceMLPolicy, a JSON Patch",
	"info_changes": "EnforceMLPolicy, Info changes",
	"object":       "Build, a built object",
	"status":       "Status, the status",
	"bad_value":    "Validate, a field error's bad_value",
}

// Points are the extension points whose call answers with each format.
var Points = map[string]framework.ExtensionPoint{
	"info":         framework.PointEnforceMLPolicy,
	"patch":        framework.PointEnforceMLPolicy,
	"info_changes": framework.PointEnforceMLPolicy,
	"object":       framework.PointBuild,
	"status":       framework.PointStatus,
	"bad_value":    framework.PointValidate,
}

// Table is bad-answers.json.
type Table struct {
	Comment string `json:"_comment"`
	// Limits are the host's bounds the messages were taken with.
	Limits struct {
		MaxMessageBytes int `json:"maxMessageBytes"`
		MaxObjectBytes  int `json:"maxObjectBytes"`
		MaxDepth        int `json:"maxDepth"`
	} `json:"limits"`
	// Info is what the host sends.
	Info json.RawMessage `json:"info"`
	Rows []*Row          `json:"rows"`
}

// Row is one fault, in every format.
type Row struct {
	Name    string             `json:"name"`
	Answers map[string]*Answer `json:"answers"`
}

// Answer is one fault in one format.
type Answer struct {
	// Doc is the answer's JSON document (not always JSON, on purpose);
	// PAD in it stands for Pad x's.
	Doc string `json:"answer"`
	Pad int    `json:"pad,omitempty"`
	// Message is the host's error, or "accepted".
	Message string `json:"message"`
	// ViaHost is what the plugin host says instead, when it refuses the
	// answer before the decoder sees it; "" when it says Message.
	ViaHost string `json:"viaHost,omitempty"`
}

// Bytes is the answer's document with PAD expanded.
func (a *Answer) Bytes() []byte {
	return []byte(strings.Replace(a.Doc, "PAD", strings.Repeat("x", a.Pad), 1))
}

// HostMessage is what the plugin host says of the answer.
func (a *Answer) HostMessage() string {
	if a.ViaHost != "" {
		return a.ViaHost
	}
	return a.Message
}

// Load returns the table; every row has every format.
func Load() (*Table, error) {
	t := &Table{}
	if err := json.Unmarshal(tableJSON, t); err != nil {
		return nil, fmt.Errorf("%s: %w", TableFile, err)
	}
	for i, r := range t.Rows {
		for _, f := range Formats {
			if r.Answers[f] == nil {
				return nil, fmt.Errorf("%s: rows[%d] (%s) has no %s answer: every row has every format", TableFile, i, r.Name, f)
			}
		}
		if len(r.Answers) != len(Formats) {
			return nil, fmt.Errorf("%s: rows[%d] (%s) has a format this table does not know; formats: %v", TableFile, i, r.Name, Formats)
		}
	}
	return t, nil
}

// Save writes t back to its file, from the repository root root, after a
// test has refreshed its messages.
func Save(t *Table, root string) error {
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(root+"/"+TableFile, append(data, '\n'), 0o644)
}

// RemoteLimits are the table's bounds as a Client's.
func (t *Table) RemoteLimits() remote.Limits {
	return remote.Limits{MaxMessageBytes: t.Limits.MaxMessageBytes, MaxObjectBytes: t.Limits.MaxObjectBytes, MaxDepth: t.Limits.MaxDepth}
}

// NewInfo decodes the table's Info.
func (t *Table) NewInfo() (*framework.Info, error) {
	info := &framework.Info{}
	return info, json.Unmarshal(t.Info, info)
}

// Job is the TrainJob the calls carry; its annotation AnswerAnnotation
// names the answer a plugin that serves the table is to give ("3/patch":
// row 3's patch), for plugins in other languages.
func Job(row int, format string) *trainer.TrainJob {
	return &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team-a", Name: "job", UID: "uid-job",
		Annotations: map[string]string{AnswerAnnotation: fmt.Sprintf("%d/%s", row, format)},
	}}
}

// AnswerAnnotation is the annotation of Job.
const AnswerAnnotation = "test.trainforge.dev/bad-answer"

// Response is the response of the answer a in format, as a plugin sends it.
func Response(format string, a *Answer) any {
	doc := a.Bytes()
	switch format {
	case "info":
		return &pluginv1.EnforceMLPolicyResponse{Info: doc}
	case "patch":
		return &pluginv1.EnforceMLPolicyResponse{Patch: doc}
	case "info_changes":
		return &pluginv1.EnforceMLPolicyResponse{InfoChanges: doc}
	case "object":
		return &pluginv1.BuildResponse{Objects: [][]byte{doc}}
	case "status":
		return &pluginv1.StatusResponse{Status: doc}
	default:
		return &pluginv1.ValidateResponse{FieldErrors: []*pluginv1.FieldError{{
			Type: pluginv1.FieldErrorType_FIELD_ERROR_TYPE_INVALID, Field: "spec.trainer", BadValue: doc, Detail: "bad",
		}}}
	}
}

// Call calls c's point of format with the table's Info and job, and
// returns what the host says: the error's message, or "accepted".
func Call(ctx context.Context, c *remote.Client, format string, info *framework.Info, job *trainer.TrainJob) string {
	var err error
	switch Points[format] {
	case framework.PointEnforceMLPolicy:
		err = c.EnforceMLPolicy(ctx, info, job)
	case framework.PointBuild:
		_, err = c.Build(ctx, info, job)
	case framework.PointStatus:
		_, err = c.Status(ctx, info, job, nil)
	default:
		_, _, err = c.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job})
	}
	if err != nil {
		return err.Error()
	}
	return "accepted"
}

// Describe is how a plugin that serves the table describes itself.
func Describe(name string) *pluginv1.DescribeResponse {
	return &pluginv1.DescribeResponse{
		Name:         name,
		MlPolicyKeys: []string{"vendor"},
		Points: []pluginv1.ExtensionPoint{
			pluginv1.ExtensionPoint_EXTENSION_POINT_VALIDATE,
			pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY,
			pluginv1.ExtensionPoint_EXTENSION_POINT_BUILD,
			pluginv1.ExtensionPoint_EXTENSION_POINT_STATUS,
		},
		Builds: []*pluginv1.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}},
	}
}

// Shown is the answer's document for a test's message: its first 200
// bytes.
func (a *Answer) Shown() string {
	b := a.Bytes()
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
