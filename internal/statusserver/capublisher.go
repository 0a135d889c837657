package statusserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch

// CAKey is the key of the CA in the CA ConfigMap, the one the
// TrainJobStatus plugin mounts.
const CAKey = "ca.crt"

// caRecheck is how often a namespace's ConfigMap is compared with the CA
// file again, to follow a rotation of the CA.
const caRecheck = time.Minute

// CAPublisher keeps one ConfigMap in each namespace that has TrainJobs,
// holding the CA that signs the status endpoint's certificate, which
// trainer pods mount. It writes a namespace's ConfigMap when it is missing
// or differs from the CA: a TrainJob costs no write, unlike Kubeflow
// Trainer's copy of the CA into a ConfigMap per TrainJob at every
// reconcile. It runs on the leader, and reads the ConfigMaps from the
// cache (they carry the managed-by label the cache keeps).
type CAPublisher struct {
	Client client.Client
	// CAFile is the CA certificate (PEM), ca.crt of the webhook's
	// certificate directory.
	CAFile string
	// ConfigMapName is the ConfigMap's name in every namespace.
	ConfigMapName string
}

// SetupWithManager adds it to the manager: a TrainJob's namespace, and a
// change of the ConfigMap, are reconciled; the key is the namespace. A
// namespace is checked again every minute while it has TrainJobs, to
// follow a rotation of the CA.
func (p *CAPublisher) SetupWithManager(mgr ctrl.Manager) error {
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	})
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == p.ConfigMapName })
	return ctrl.NewControllerManagedBy(mgr).Named("status-ca").
		// A namespace needs the CA once it has a TrainJob: creations
		// (and the initial list) are enough, updates are not.
		Watches(&trainer.TrainJob{}, byNamespace, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(event.UpdateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Watches(&corev1.ConfigMap{}, byNamespace, builder.WithPredicates(ours)).
		Complete(p)
}

// Reconcile writes the namespace's ConfigMap when it is not the CA.
func (p *CAPublisher) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	namespace := req.Name
	jobs := &trainer.TrainJobList{}
	if err := p.Client.List(ctx, jobs, client.InNamespace(namespace), client.Limit(1)); err != nil {
		return ctrl.Result{}, err
	}
	if len(jobs.Items) == 0 {
		// No TrainJob left (or the namespace is going): nothing to keep
		// up to date until the next one comes.
		return ctrl.Result{}, nil
	}
	ca, err := os.ReadFile(p.CAFile)
	if err != nil || len(ca) == 0 {
		// The certificate is being made: try again shortly.
		ctrl.LoggerFrom(ctx).V(1).Info("the CA is not there yet", "file", p.CAFile, "error", err)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	cm := &corev1.ConfigMap{}
	err = p.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: p.ConfigMapName}, cm)
	switch {
	case err == nil && bytes.Equal([]byte(cm.Data[CAKey]), ca):
		return ctrl.Result{RequeueAfter: caRecheck}, nil
	case err != nil && !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	apply := corev1ac.ConfigMap(p.ConfigMapName, namespace).
		WithLabels(map[string]string{framework.ManagedByLabel: framework.ManagedByValue, "app.kubernetes.io/component": "status-ca"}).
		WithData(map[string]string{CAKey: string(ca)})
	if err := p.Client.Apply(ctx, apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return ctrl.Result{}, fmt.Errorf("writing the status endpoint's CA into ConfigMap %s/%s: %w", namespace, p.ConfigMapName, err)
	}
	ctrl.LoggerFrom(ctx).Info("status endpoint CA written", "configMap", namespace+"/"+p.ConfigMapName)
	return ctrl.Result{RequeueAfter: caRecheck}, nil
}
