package v1alpha1

import "fmt"

// Kubeflow Trainer's progress protocol: the training code finds the status
// endpoint, its CA and a token in these variables, and POSTs an
// UpdateTrainJobStatusRequest to the URL with the token as a bearer token.
// Clients written for Kubeflow Trainer (Hugging Face Transformers'
// KubeflowTrainerCallback, the Kubeflow SDK's update_trainjob_status)
// read exactly these names.
const (
	// StatusURLEnv is the URL of the TrainJob's status endpoint.
	StatusURLEnv = "KUBEFLOW_TRAINER_SERVER_URL"
	// StatusCACertEnv is the path of the CA certificate that signs the
	// endpoint's serving certificate.
	StatusCACertEnv = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
	// StatusTokenEnv is the path of the service-account token to send.
	StatusTokenEnv = "KUBEFLOW_TRAINER_SERVER_TOKEN"
)

// StatusPath is the path of a TrainJob's status endpoint.
func StatusPath(namespace, name string) string {
	return fmt.Sprintf("/apis/%s/%s/namespaces/%s/trainjobs/%s/status", GroupVersion.Group, GroupVersion.Version, namespace, name)
}

// StatusTokenAudience is the audience a token must be issued for to
// report a TrainJob's progress: the same as StatusPath without its /apis/
// prefix, as Kubeflow Trainer has it.
func StatusTokenAudience(namespace, name string) string {
	return fmt.Sprintf("%s/%s/namespaces/%s/trainjobs/%s/status", GroupVersion.Group, GroupVersion.Version, namespace, name)
}
