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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups="",resources=pods,verbs=get

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
	// reader reads pods and JobSets from the API server: the endpoint
	// holds no cache of either.
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

// checkPod checks that the pod exists, is the one the token was bound to,
// and was created for the TrainJob: its JobSet labels name the JobSet the
// TrainJob controls.
func (a *authorizer) checkPod(ctx context.Context, pod boundPod, job *trainer.TrainJob) error {
	p := &metav1.PartialObjectMetadata{}
	p.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	if err := a.reader.Get(ctx, types.NamespacedName{Namespace: pod.namespace, Name: pod.name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return forbidden("pod %s/%s of the token does not exist", pod.namespace, pod.name)
		}
		return fmt.Errorf("reading pod %s/%s: %w", pod.namespace, pod.name, err)
	}
	if p.UID != pod.uid {
		return forbidden("pod %s/%s is not the pod the token was issued for (uid %s, token's %s)", pod.namespace, pod.name, p.UID, pod.uid)
	}
	if got := p.Labels[jobsetv1alpha2.JobSetNameKey]; got != job.Name {
		return forbidden("pod %s/%s is not of TrainJob %s: its %s label is %q", pod.namespace, pod.name, job.Name, jobsetv1alpha2.JobSetNameKey, got)
	}
	js := &metav1.PartialObjectMetadata{}
	js.SetGroupVersionKind(jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet"))
	if err := a.reader.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, js); err != nil {
		if apierrors.IsNotFound(err) {
			return forbidden("TrainJob %s/%s has no JobSet, so no pods", job.Namespace, job.Name)
		}
		return fmt.Errorf("reading JobSet %s/%s: %w", job.Namespace, job.Name, err)
	}
	if owner := metav1.GetControllerOf(js); owner == nil || owner.UID != job.UID {
		return forbidden("JobSet %s/%s is not controlled by TrainJob %s", job.Namespace, job.Name, job.Name)
	}
	if got := p.Labels[jobsetv1alpha2.JobSetUIDKey]; got != string(js.UID) {
		return forbidden("pod %s/%s is of an earlier JobSet %s (its %s label is %q, the JobSet's uid %s)",
			pod.namespace, pod.name, job.Name, jobsetv1alpha2.JobSetUIDKey, got, js.UID)
	}
	return nil
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
