package controller

import (
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A reconcile's log lines carry the keys controller-runtime's builder
// gives them.
func TestReconcileLoggerKeys(t *testing.T) {
	var line string
	base := funcr.New(func(_, args string) { line = args }, funcr.Options{})
	reconcileLogger(base)(&reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "job"}}).Info("x")
	for _, want := range []string{`"controller"="trainjob"`, `"controllerGroup"="trainer.kubeflow.org"`, `"controllerKind"="TrainJob"`, `"TrainJob"={"name"="job" "namespace"="ns"}`, `"namespace"="ns"`, `"name"="job"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log line %s lacks %s", line, want)
		}
	}
}
