// Package trainjobstatus is the TrainJobStatus plugin: it tells the
// training code of every TrainJob where and how to report its progress,
// with Kubeflow Trainer's protocol, so that code written for Kubeflow
// Trainer (Hugging Face Transformers' KubeflowTrainerCallback, the Kubeflow
// SDK's update_trainjob_status) fills status.trainerStatus unchanged.
//
// For every container of the trainer step it sets
//
//   - KUBEFLOW_TRAINER_SERVER_URL: the TrainJob's status endpoint,
//     <url>/apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status;
//   - KUBEFLOW_TRAINER_SERVER_CA_CERT: /var/run/secrets/kubeflow/trainer/ca.crt,
//     the CA that signs the endpoint's certificate;
//   - KUBEFLOW_TRAINER_SERVER_TOKEN: /var/run/secrets/kubeflow/trainer/token,
//     a service-account token the kubelet issues for the pod with the
//     audience trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status
//     and renews before it expires;
//
// and mounts both files from one projected volume. A runtime that names a
// checkpoint volume (the annotation trainforge.dev/checkpoint-volume, see
// checkpoint.go) also gives the containers that mount it
// TRAINFORGE_CHECKPOINT_DIR and TRAINFORGE_CHECKPOINT_GRACE_SECONDS. The CA comes from a
// ConfigMap of the TrainJob's namespace (args.caConfigMapName) that the
// controller writes once per namespace and rewrites only when the CA
// changes; this plugin builds no object. Kubeflow Trainer instead copies
// the CA into a ConfigMap per TrainJob at every reconcile.
//
// The plugin owns no policy key, so it takes part in every TrainJob; list
// it after the ML plugins, whose EnforceMLPolicy may replace containers.
// It learns the endpoint from the host (framework.Handle's
// StatusEndpoint, which the controller makes from its configuration's
// statusServer block); its args (Args) may override each fact.
package trainjobstatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Name is the plugin's name in the configuration file.
const Name = "TrainJobStatus"

// Version is the plugin's version.
const Version = "v0.1.0"

// Where the token and the CA are mounted, as Kubeflow Trainer mounts them.
const (
	VolumeName = "kubeflow-trainer-token"
	MountPath  = "/var/run/secrets/kubeflow/trainer"
	TokenFile  = "token"
	CAFile     = "ca.crt"
	// CAKey is the key of the CA in the CA ConfigMap.
	CAKey = "ca.crt"
)

// Args are the plugin's args. Each one left out is the host's fact
// (framework.StatusEndpoint), else what a configuration without a
// statusServer block says.
type Args struct {
	// URL is the status endpoint's base URL; each TrainJob's is this plus
	// /apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status.
	URL string `json:"url,omitempty"`
	// CAConfigMapName is the ConfigMap of the TrainJob's namespace that
	// holds the CA (key ca.crt).
	CAConfigMapName string `json:"caConfigMapName,omitempty"`
	// TokenExpirationSeconds is the lifetime of the mounted token.
	TokenExpirationSeconds int64 `json:"tokenExpirationSeconds,omitempty"`
}

// New returns the TrainJobStatus plugin, pointing to the status endpoint
// of h; Configure may override it with args.
func New(h framework.Handle) framework.Plugin {
	p := &plugin{}
	if h != nil {
		s := h.StatusEndpoint()
		p.host = Args{URL: s.URL, CAConfigMapName: s.CAConfigMapName, TokenExpirationSeconds: s.TokenExpirationSeconds}
	}
	return p
}

type plugin struct {
	host Args // the host's facts
	args Args // in effect, after Configure
}

var (
	_ framework.MLPolicyEnforcer = (*plugin)(nil)
	_ framework.Configurable     = (*plugin)(nil)
)

// Describe says that TrainJobStatus owns no policy key: it takes part in
// every TrainJob.
func (*plugin) Describe() framework.Description {
	return framework.Description{Name: Name, Version: Version}
}

// Configure takes the args, each one left out from the host's facts (or,
// without them, a default configuration's statusServer), and checks them.
func (p *plugin) Configure(_ context.Context, raw json.RawMessage) error {
	var args Args
	if len(raw) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return fmt.Errorf("plugin %s: args: %w; it takes url, caConfigMapName and tokenExpirationSeconds", Name, err)
		}
	}
	args.defaultFrom(p.host)
	// A host before protocol 1.3 gives no facts (it filled the args).
	defaults := configv1alpha1.Defaulted(&configv1alpha1.Configuration{}).StatusServer
	args.defaultFrom(Args{URL: defaults.URL(), CAConfigMapName: defaults.CAConfigMapName, TokenExpirationSeconds: *defaults.TokenExpirationSeconds})
	u, err := url.Parse(args.URL)
	switch {
	case err != nil:
		return fmt.Errorf("plugin %s: args.url %q: %w", Name, args.URL, err)
	case u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "":
		return fmt.Errorf("plugin %s: args.url %q must be https://<host>[:<port>], with no path or query", Name, args.URL)
	}
	args.URL = strings.TrimSuffix(args.URL, "/")
	if msgs := validation.IsDNS1123Subdomain(args.CAConfigMapName); len(msgs) > 0 {
		return fmt.Errorf("plugin %s: args.caConfigMapName %q: %s", Name, args.CAConfigMapName, strings.Join(msgs, "; "))
	}
	if args.TokenExpirationSeconds < configv1alpha1.MinStatusTokenExpirationSeconds {
		return fmt.Errorf("plugin %s: args.tokenExpirationSeconds %d must be at least %d (the API server's minimum)",
			Name, args.TokenExpirationSeconds, configv1alpha1.MinStatusTokenExpirationSeconds)
	}
	p.args = args
	return nil
}

// defaultFrom fills the args left out from d.
func (a *Args) defaultFrom(d Args) {
	if a.URL == "" {
		a.URL = d.URL
	}
	if a.CAConfigMapName == "" {
		a.CAConfigMapName = d.CAConfigMapName
	}
	if a.TokenExpirationSeconds == 0 {
		a.TokenExpirationSeconds = d.TokenExpirationSeconds
	}
}

// EnforceMLPolicy gives every container of the trainer step the three
// variables and the volume that holds the token and the CA.
func (p *plugin) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	if info == nil || job == nil {
		return errors.New("no Info or TrainJob to point to the status endpoint")
	}
	if p.args.URL == "" {
		return fmt.Errorf("plugin %s is not configured: it needs args.url", Name)
	}
	ps := info.TrainerPodSet()
	if ps == nil {
		// Nothing trains, so nothing reports; the ML plugin says what
		// the runtime lacks.
		return nil
	}
	env := []corev1.EnvVar{
		{Name: trainer.StatusURLEnv, Value: p.args.URL + trainer.StatusPath(job.Namespace, job.Name)},
		{Name: trainer.StatusCACertEnv, Value: MountPath + "/" + CAFile},
		{Name: trainer.StatusTokenEnv, Value: MountPath + "/" + TokenFile},
	}
	mount := corev1.VolumeMount{Name: VolumeName, MountPath: MountPath, ReadOnly: true}
	for i := range ps.Containers {
		ps.Containers[i].UpsertEnv(env...)
		ps.Containers[i].UpsertVolumeMount(mount)
	}
	ps.UpsertVolume(p.volume(job))
	return enforceCheckpoint(info, ps)
}

func (p *plugin) volume(job *trainer.TrainJob) corev1.Volume {
	return corev1.Volume{
		Name: VolumeName,
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
					Audience:          trainer.StatusTokenAudience(job.Namespace, job.Name),
					ExpirationSeconds: ptr.To(p.args.TokenExpirationSeconds),
					Path:              TokenFile,
				}},
				{ConfigMap: &corev1.ConfigMapProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: p.args.CAConfigMapName},
					Items:                []corev1.KeyToPath{{Key: CAKey, Path: CAFile}},
				}},
			},
		}},
	}
}
