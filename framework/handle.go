package framework

// Handle is what the host gives a plugin when it creates it (Factory):
// facts about the host that a plugin may build on, so that nothing outside
// the plugin has to know which plugin needs which fact and smuggle it in
// through the plugin's args. It is kube-scheduler's framework.Handle for
// Trainforge: plugins read it, hosts implement it.
//
// An in-process plugin gets it from its Factory. A plugin out of process
// gets the same facts with every Configure (the protocol's
// ConfigureRequest.host); the SDK creates a plugin served with
// sdk.ServeFactory from them then.
type Handle interface {
	// StatusEndpoint is where the training code of a TrainJob reports its
	// progress; its zero value (Enabled false) when the host serves none.
	StatusEndpoint() StatusEndpoint
}

// StatusEndpoint is the host's status endpoint, where training code
// reports its progress with Kubeflow Trainer's protocol.
type StatusEndpoint struct {
	// URL is the endpoint's base URL as pods reach it,
	// https://<host>[:<port>]; a TrainJob's own is this plus
	// trainer.StatusPath(namespace, name).
	URL string
	// CAConfigMapName is the ConfigMap, in each TrainJob's namespace, whose
	// key ca.crt holds the CA of the endpoint's certificate.
	CAConfigMapName string
	// TokenExpirationSeconds is the lifetime of the service-account token
	// a pod presents to the endpoint.
	TokenExpirationSeconds int64
}

// Enabled reports whether the host serves a status endpoint.
func (s StatusEndpoint) Enabled() bool { return s.URL != "" }

// Host is a Handle holding fixed facts: what a host builds from its
// configuration, and what the SDK builds from a ConfigureRequest.
type Host struct {
	Status StatusEndpoint
}

// StatusEndpoint returns h.Status.
func (h Host) StatusEndpoint() StatusEndpoint { return h.Status }

var _ Handle = Host{}
