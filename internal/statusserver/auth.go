package statusserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups="",resources=pods,verbs=get
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get

// Claims of a token bound to a pod, as a TokenReview gives them in the
// user's extra.
const (
	podNameExtra = "authentication.kubernetes.io/pod-name"
	podUIDExtra  = "authentication.kubernetes.io/pod-uid"
)

// forbiddenError says why a post is refused; the reason is logged, the
// caller only gets 403, as from Kubeflow Trainer.
type forbiddenError struct{ reason string }

func (e *forbiddenError) Error() string { return e.reason }

func forbidden(format string, args ...any) error {
	return &forbiddenError{reason: fmt.Sprintf(format, args...)}
}

// boundPod is the pod a token was issued for.
type boundPod struct {
	namespace, name string
	uid             types.UID
}

// authorizer checks that a token was issued for a TrainJob's audience to a
// pod of that TrainJob.
type authorizer struct {
	// client creates TokenReviews.
	client client.Client
	// reader reads pods and their controllers' metadata from the API
	// server: the endpoint holds no cache of them.
	reader client.Reader
}

// bearerToken is the token of an RFC 6750 Authorization header, or "".
func bearerToken(header string) string {
	fields := strings.Fields(header)
	if len(fields) != 2 || !strings.EqualFold(fields[0], "Bearer") {
		return ""
	}
	return fields[1]
}

// authenticate asks the API server whether the token is valid for the
// TrainJob's audience, and returns the pod it is bound to.
func (a *authorizer) authenticate(ctx context.Context, token, namespace, name string) (boundPod, error) {
	if token == "" {
		return boundPod{}, forbidden("no bearer token")
	}
	audience := trainer.StatusTokenAudience(namespace, name)
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{audience}}}
	if err := a.client.Create(ctx, review); err != nil {
		return boundPod{}, fmt.Errorf("reviewing the token: %w", err)
	}
	st := review.Status
	if !st.Authenticated {
		return boundPod{}, forbidden("token not valid for audience %s: %s", audience, st.Error)
	}
	if !slices.Contains(st.Audiences, audience) {
		return boundPod{}, forbidden("token not issued for audience %s", audience)
	}
	saNamespace, ok := serviceAccountNamespace(st.User.Username)
	if !ok {
		return boundPod{}, forbidden("token of %q, not of a service account", st.User.Username)
	}
	if saNamespace != namespace {
		return boundPod{}, forbidden("token of a service account of namespace %s, not %s", saNamespace, namespace)
	}
	podName, podUID := st.User.Extra[podNameExtra], st.User.Extra[podUIDExtra]
	if len(podName) != 1 || len(podUID) != 1 {
		return boundPod{}, forbidden("token of %s not bound to a pod", st.User.Username)
	}
	return boundPod{namespace: namespace, name: podName[0], uid: types.UID(podUID[0])}, nil
}

// maxControllers bounds the chain of controllers walked from a pod to its
// TrainJob: pod, Job, JobSet, TrainJob is three; a plugin's workload may
// add one more level.
const maxControllers = 4

// checkPod checks that the pod exists, is the one the token was bound to,
// and was created for the TrainJob: the chain of its controllers (owner
// references with controller: true, each checked by uid, so that a pod of
// an earlier workload of the same name is refused) leads to the TrainJob.
// The endpoint knows no kind that plugins build: whatever workload a
// plugin made, its pods' controllers lead to the TrainJob. Each object on
// the way is read as metadata only, from the API server.
func (a *authorizer) checkPod(ctx context.Context, pod boundPod, job *trainer.TrainJob) error {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	if err := a.reader.Get(ctx, types.NamespacedName{Namespace: pod.namespace, Name: pod.name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return forbidden("pod %s/%s of the token does not exist", pod.namespace, pod.name)
		}
		return fmt.Errorf("reading pod %s/%s: %w", pod.namespace, pod.name, err)
	}
	if obj.UID != pod.uid {
		return forbidden("pod %s/%s is not the pod the token was issued for (uid %s, token's %s)", pod.namespace, pod.name, obj.UID, pod.uid)
	}
	what := fmt.Sprintf("pod %s/%s", pod.namespace, pod.name)
	for range maxControllers {
		owner := metav1.GetControllerOfNoCopy(obj)
		if owner == nil {
			return forbidden("%s is not of TrainJob %s: it has no controller", what, job.Name)
		}
		if owner.APIVersion == trainer.GroupVersion.String() && owner.Kind == trainer.TrainJobKind {
			if owner.Name != job.Name || owner.UID != job.UID {
				return forbidden("%s is not of TrainJob %s (uid %s): its controller is TrainJob %s (uid %s)", what, job.Name, job.UID, owner.Name, owner.UID)
			}
			return nil
		}
		gv, err := schema.ParseGroupVersion(owner.APIVersion)
		if err != nil {
			return forbidden("%s has a controller of apiVersion %q: %v", what, owner.APIVersion, err)
		}
		next := &metav1.PartialObjectMetadata{}
		next.SetGroupVersionKind(gv.WithKind(owner.Kind))
		if err := a.reader.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: owner.Name}, next); err != nil {
			if apierrors.IsNotFound(err) {
				return forbidden("%s is of %s %s/%s, which no longer exists", what, owner.Kind, obj.Namespace, owner.Name)
			}
			return fmt.Errorf("reading %s %s/%s, the controller of %s: %w", owner.Kind, obj.Namespace, owner.Name, what, err)
		}
		if next.UID != owner.UID {
			return forbidden("%s is of an earlier %s %s/%s (its owner reference's uid %s, the %s's uid %s)", what, owner.Kind, obj.Namespace, owner.Name, owner.UID, owner.Kind, next.UID)
		}
		obj, what = next, fmt.Sprintf("%s %s/%s", owner.Kind, obj.Namespace, owner.Name)
	}
	return forbidden("pod %s/%s is not of TrainJob %s: no TrainJob among its first %d controllers", pod.namespace, pod.name, job.Name, maxControllers)
}

// serviceAccountNamespace is the namespace of a service account's user
// name, system:serviceaccount:<namespace>:<name>.
func serviceAccountNamespace(username string) (string, bool) {
	rest, ok := strings.CutPrefix(username, "system:serviceaccount:")
	if !ok {
		return "", false
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" {
		return "", false
	}
	return ns, true
}

func isForbidden(err error) bool {
	var f *forbiddenError
	return errors.As(err, &f)
}
