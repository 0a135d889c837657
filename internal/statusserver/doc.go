// Package statusserver is the status endpoint: training code reports its
// progress there, with Kubeflow Trainer's protocol, and the endpoint
// writes it into the TrainJob's status.trainerStatus.
//
// The protocol: a POST of an UpdateTrainJobStatusRequest (JSON) to
// /apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status,
// over HTTPS, with a service-account token as bearer token. The
// TrainJobStatus plugin (builtin/trainjobstatus) gives each trainer
// container the URL, the CA and a token bound to its pod.
//
// A post is applied only when all of these hold, in this order:
//
//  1. the body is at most 64 KiB (else 413);
//  2. a TokenReview accepts the token for the audience
//     trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status,
//     and the token belongs to a service account of <ns> and is bound to a
//     pod (else 403);
//  3. the TrainJob exists (else 404);
//  4. the pod the token is bound to still exists with the token's pod UID,
//     and is a pod of that TrainJob: its JobSet (the jobset-name and
//     jobset-uid labels) is the JobSet the TrainJob controls (else 403);
//  5. the TrainJob had no update applied within minUpdateInterval (else 429
//     with Retry-After);
//  6. the body decodes (else 422) and the API server accepts the values
//     (else 422 with the API server's message).
//
// Kubeflow Trainer checks 1, 2 without the pod, and 6: there, any pod of
// the namespace that mounts a token for a TrainJob's audience can write its
// progress, and the rate is left to the clients.
//
// A post may also carry a checkpoint the training code completed
// ({"checkpoint": {"step": 1200, "path": "...", "time": "..."}}),
// Trainforge's superset of the protocol: it is checked strictly in 6
// (DecodeRequest; each error names its field) and recorded in
// status.lastCheckpoint with a field manager of its own
// (CheckpointFieldManager), so that a post of progress alone, applied as
// trainforge-status-server, leaves it. A run start ({"runStart":
// {"fromStep": 1200, "time": "..."}}) is checked and recorded the same
// way, in status.lastRunStart (RunStartFieldManager): the goodput account
// reads it to see restarts that recreate no pod.
//
// The status is written by server-side apply to the status subresource,
// with the field manager trainforge-status-server, and the TrainJob's UID
// as precondition: it owns status.trainerStatus and nothing else, so that
// it never takes back a condition the reconciler writes, and the
// reconciler's status updates (optimistic, with resourceVersion) keep it.
//
// The server runs on every replica, not only the leader. The same package
// keeps, on the leader, one ConfigMap per namespace with the CA that trainer
// pods trust (CAPublisher), and the progress metrics (ProgressMetrics).
package statusserver
