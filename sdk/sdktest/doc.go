// Package sdktest is the test kit for Trainforge plugins. It runs a plugin
// the way the Trainforge controller runs an external one: served over gRPC
// by the SDK, called through the host's own client, its Enforce answers
// applied as JSON Patches and checked as the host checks them. The plugin
// is served in-process, so tests need no binary and stay fast.
//
//   - Connect returns the host-side client of a plugin, for tests of your
//     own.
//   - Check verifies the properties every plugin must have (see Property):
//     an honest Describe; args accepted; deterministic and idempotent
//     Enforce points whose patches apply; built objects that the host
//     accepts (declared kind, valid name, right namespace), the same on
//     every call; Validate answers that name the field at fault; Status
//     answers before and after the objects exist, with the Info they were
//     built from and without one, with conditions the API server accepts.
//   - Golden compares what the plugin makes of each case (Info and objects)
//     with golden files, which the -update flag rewrites.
//   - GoldenRPC does the same for a plugin reached through any
//     PluginService client: a binary, in any language, started by the host.
//   - Run checks the same properties through any PluginService client and
//     returns one Result per property and case: the command
//     trainforge-plugin-conformance uses it to check a plugin binary,
//     written in any language, started by the real host.
//
// Inputs are Cases: a runtime, a TrainJob and the plugin's args, written
// in YAML (CaseFromFiles, LoadCase) or in Go; DefaultCases makes cases
// from what a plugin says it owns, for a first check.
//
// An object the plugin marks with framework.CreateOnce (a generated key)
// may differ on every Build: the host creates only the first one. Check
// compares only its kind, name and metadata from one Build to the next, and
// Golden shows each value that differs as "<created once: differs on every
// Build>".
//
// # An example
//
// The Hello plugin of package sdk's documentation, with its runtime and a
// TrainJob in testdata/:
//
//	// testdata/hello.yaml
//	apiVersion: trainer.kubeflow.org/v1alpha1
//	kind: ClusterTrainingRuntime
//	metadata:
//	  name: hello-runtime
//	spec:
//	  mlPolicy:
//	    hello: {}
//	  template:
//	    spec:
//	      replicatedJobs:
//	        - name: node
//	          template:
//	            spec:
//	              template:
//	                spec:
//	                  containers:
//	                    - name: node
//	                      image: busybox
//	---
//	apiVersion: trainer.kubeflow.org/v1alpha1
//	kind: TrainJob
//	metadata:
//	  name: greet
//	  namespace: team-a
//	spec:
//	  runtimeRef:
//	    name: hello-runtime
//
// Its tests:
//
//	package main
//
//	import (
//		"context"
//		"testing"
//
//		"github.com/trainforge/trainforge/framework"
//		"github.com/trainforge/trainforge/sdk/sdktest"
//	)
//
//	func TestProperties(t *testing.T) {
//		sdktest.Check(t, hello{}, sdktest.CaseFromFiles(t, "greet", "testdata/hello.yaml", "testdata/hello.yaml"))
//	}
//
//	// The golden file testdata/greet.golden.yaml is written by
//	//	go test -run TestGolden -update
//	// and reviewed like code.
//	func TestGolden(t *testing.T) {
//		sdktest.Golden(t, hello{}, "testdata", sdktest.CaseFromFiles(t, "greet", "testdata/hello.yaml", "testdata/hello.yaml"))
//	}
//
//	// A test of one behaviour, through the host's client.
//	func TestSetsHello(t *testing.T) {
//		c := sdktest.CaseFromFiles(t, "greet", "testdata/hello.yaml", "testdata/hello.yaml")
//		info, err := framework.NewInfo(c.Job, c.Runtime)
//		if err != nil {
//			t.Fatal(err)
//		}
//		client := sdktest.Connect(t, hello{})
//		if err := client.EnforceMLPolicy(context.Background(), info, c.Job); err != nil {
//			t.Fatal(err)
//		}
//		_, ctr, err := info.Trainer()
//		if err != nil {
//			t.Fatal(err)
//		}
//		if len(ctr.Env) != 1 || ctr.Env[0].Name != "HELLO" || ctr.Env[0].Value != "world" {
//			t.Errorf("trainer env = %v, want HELLO=world", ctr.Env)
//		}
//	}
//
// When Check fails, each failure names the property, the case, what is
// wrong and why the host cares, with a diff where one helps:
//
//	--- FAIL: TestProperties/Enforce/idempotent
//	    Enforce/idempotent, case "greet": enforcing the resulting Info again
//	    changed it (-once +twice) (the host enforces on every reconcile; a
//	    second pass must change nothing):
//	      ...
//	      	  - env:
//	    + 	    - name: HELLO
//	    + 	      value: world
//	      	    - name: HELLO
//	      	      value: world
//
// A property that does not apply to the plugin (Build for a plugin that
// builds nothing, say) is a skipped subtest.
//
// # How the plugin is run
//
// Check and Golden run the plugin alone, as the host would for a job it
// takes part in: Configure with the case's args, then Info from
// framework.NewInfo, EnforceMLPolicy, the derived values (endpoints,
// per-pod requests) recomputed, EnforcePodGroupPolicy, and Build on the
// result; Validate on the case's TrainJob as admission sees it on create,
// and Status, given the Info Build got, with no owned objects, then with
// the objects it built, then with those and no Info (as a host that has
// none calls it). No
// other plugin runs before it, so give cases whose runtime the
// plugin takes part in (it owns one of the policy keys the runtime sets, or
// owns none); Check reports the others.
//
// # Flags
//
// Importing sdktest registers two test flags: -update (see Golden), and
// -sdktest.trace, which logs every call made to the plugin with its
// duration and error. A test package that imports sdktest cannot define
// flags of those names itself.
package sdktest
