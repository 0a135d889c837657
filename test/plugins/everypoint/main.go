// Command everypoint is a Trainforge plugin written with the SDK that
// implements every extension point, to test the plugin host end to end,
// in both of the ways it runs plugins: as a child process (go-plugin's
// handshake) and on a Unix socket (TRAINFORGE_PLUGIN_SOCKET set, the
// process started by someone else).
//
//	--name NAME          the plugin's name (default EveryPoint)
//	--key KEY            the mlPolicy and podGroupPolicy key it owns (default everypoint)
//	--report-env FILE    write the process's environment to FILE, the
//	                     variables separated by NUL bytes, before serving
//	--build-objects N    Build returns N ConfigMaps (default 1)
//	--object-bytes N     each built ConfigMap carries N bytes of data
//
// Configure takes {"greeting": "..."}. EnforceMLPolicy adds the label
// everypoint/ml=<greeting> to Info, EnforcePodGroupPolicy the annotation
// everypoint/pg=<greeting>; Validate warns "validated <job>"; Build returns
// ConfigMaps named <job>-everypoint[-i] whose data holds the greeting;
// Watch asks for Pods mapped by the label everypoint/job; Status sets the
// condition EveryPoint=True. It logs to stderr only.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk"
)

func main() {
	p := &plugin{}
	flag.StringVar(&p.name, "name", "EveryPoint", "the plugin's name")
	flag.StringVar(&p.key, "key", "everypoint", "the mlPolicy and podGroupPolicy key it owns")
	reportEnv := flag.String("report-env", "", "write the environment to this file")
	flag.IntVar(&p.objects, "build-objects", 1, "Build returns this many ConfigMaps")
	flag.IntVar(&p.objectBytes, "object-bytes", 0, "bytes of data in each built ConfigMap")
	flag.Parse()
	if *reportEnv != "" {
		if err := os.WriteFile(*reportEnv, []byte(strings.Join(os.Environ(), "\x00")), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "--report-env:", err)
			os.Exit(2)
		}
	}
	sdk.Serve(p)
}

var configMap = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

type plugin struct {
	name, key            string
	objects, objectBytes int

	mu       sync.Mutex
	greeting string
}

func (p *plugin) Describe() framework.Description {
	return framework.Description{
		Name:               p.name,
		Version:            "everypoint-test",
		MLPolicyKeys:       []string{p.key},
		PodGroupPolicyKeys: []string{p.key},
		Builds:             []schema.GroupVersionKind{configMap},
	}
}

func (p *plugin) Configure(_ context.Context, args json.RawMessage) error {
	var a struct {
		Greeting string `json:"greeting"`
	}
	if len(args) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(args)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return fmt.Errorf("args: %w", err)
		}
	}
	p.mu.Lock()
	p.greeting = a.Greeting
	p.mu.Unlock()
	sdk.Logger().Info("configured", "greeting", a.Greeting)
	return nil
}

func (p *plugin) hello() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.greeting == "" {
		return "none"
	}
	return p.greeting
}

func (p *plugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	job := req.NewJob
	return []string{"validated " + job.Name}, nil, nil
}

func (p *plugin) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	if info.Labels == nil {
		info.Labels = map[string]string{}
	}
	info.Labels["everypoint/ml"] = p.hello()
	return nil
}

func (p *plugin) EnforcePodGroupPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	if info.Annotations == nil {
		info.Annotations = map[string]string{}
	}
	info.Annotations["everypoint/pg"] = p.hello()
	return nil
}

func (p *plugin) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	out := make([]*unstructured.Unstructured, 0, p.objects)
	for i := range p.objects {
		name := job.Name + "-everypoint"
		if p.objects > 1 {
			name = fmt.Sprintf("%s-%d", name, i)
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: job.Namespace},
			Data:       map[string]string{"greeting": p.hello()},
		}
		if p.objectBytes > 0 {
			cm.Data["padding"] = strings.Repeat("x", p.objectBytes)
		}
		obj, err := framework.ToObject(info, cm, configMap)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return framework.Apply(out...), nil
}

func (p *plugin) Watch(context.Context) ([]framework.WatchSource, error) {
	return []framework.WatchSource{{Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Mapping: framework.MapByLabel, Label: "everypoint/job"}}, nil
}

func (p *plugin) Status(_ context.Context, _ *framework.Info, job *trainer.TrainJob, _ []*unstructured.Unstructured) (*framework.StatusReport, error) {
	return &framework.StatusReport{Conditions: []metav1.Condition{
		{Type: "EveryPoint", Status: metav1.ConditionTrue, Reason: "Answered", Message: p.hello()},
	}}, nil
}
