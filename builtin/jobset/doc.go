// Package jobset is Trainforge's built-in JobSet plugin. It builds the
// JobSet that runs a TrainJob and reports the JobSet's progress back on the
// TrainJob.
//
// It owns no policy key, so it takes part in every TrainJob.
//
// # What it builds
//
// One JobSet (jobset.x-k8s.io/v1alpha2), named as the TrainJob and in its
// namespace, made from the runtime's template (after the TrainJob's
// runtimePatches) with the job's Info applied:
//
//   - metadata labels and annotations: the template's, then the Info's
//     (the TrainJob's spec.labels and spec.annotations and those added by
//     plugins); the Info wins on a conflicting key;
//   - for every replicatedJob that has a PodSet of the same name:
//     replicas = the PodSet's replicas; the Job's parallelism and
//     completions = the PodSet's count (for the trainer step, the node
//     count that the ML plugin settled on);
//   - in its pod template, each container and init container with the name
//     of an Info container takes that container's image, command, args,
//     env, envFrom, ports, volumeMounts and resources. This is how the
//     TrainJob's trainer image, command, args and resourcesPerNode, the ML
//     plugin's environment (PET_* for Torch) and the initializers'
//     STORAGE_URI, env and secretRef reach the pods. Other container fields
//     (probes, security context, ...) stay as the template has them. An
//     Info container that the template lacks is appended;
//   - the pod template's volumes are the PodSet's; its labels and
//     annotations get the PodSet's pod labels and annotations (for example
//     a gang scheduler's pod-group label, on the gang's pods only); its
//     schedulerName is the PodSet's when one is set;
//   - spec.suspend is the TrainJob's spec.suspend (false when unset), so
//     that suspending or resuming the TrainJob, or Kueue admitting it with
//     a runtimePatch, reaches the JobSet in one apply;
//   - the job's restart policy (Info.RestartPolicy: the runtime's
//     spec.restartPolicy with the TrainJob's over it) becomes the JobSet's
//     failurePolicy (maxRestarts, restartStrategy, rules before the
//     template's own) and podFailurePolicy rules of every Job (after the
//     template's own); see restart.go and docs/restart-policy.md. A
//     conflict with the template is an error naming both fields, which
//     Validate reports at admission;
//   - for an elastic PodSet (Info.PodSet.Elastic, set by the ML plugin):
//     the Job's completionMode Indexed when the template sets none, and
//     the object's live fields (framework.LiveFields) naming
//     that Job's parallelism and completions, which the host then writes
//     to the running JobSet (JobSet's ElasticJobSet gate lets them change)
//     while it leaves the rest as it is. A TrainJob in a Kueue queue
//     (label kueue.x-k8s.io/queue-name) has them held: Kueue admitted it
//     at its size, and the Resized condition says so and what to do. An
//     elastic replicatedJob must have replicas 1, and only one may be
//     elastic.
//
// Everything else in the template (success and failure policies, network,
// startup policy, dependsOn, ...) is copied unchanged. The output depends
// only on Info and the TrainJob's name, namespace and suspend, and is the
// same on every call; Build never changes Info.
//
// # What it reports
//
// Status reads the owned JobSet named as the TrainJob, and the Info it was
// built from (framework.StatusReporter), when the host has it:
//
//   - JobSet condition Completed=True gives the TrainJob condition
//     Complete=True, and Failed=True gives Failed=True, each with the
//     JobSet condition's reason (JobSetCompleted / JobSetFailed when it has
//     none), message and transition time, observed at the TrainJob's
//     generation (the controller merges them into the TrainJob's
//     conditions);
//   - every entry of the JobSet's status.replicatedJobsStatus becomes an
//     entry of the TrainJob's status.jobsStatus (ready, succeeded, failed,
//     active and suspended child Jobs), in the same order;
//   - the JobSet's status.restarts and restartsCountTowardsMax become the
//     TrainJob's status.restarts, with the reason of the last restart (from
//     the RestartingJobSet condition's FailurePolicy_<rule>); a Failed
//     JobSet that the restart policy failed gives reason
//     NonRetryableExitCode, or ReachedMaxRestarts with the budget in the
//     message;
//   - for an elastic job (a PodSet of Info with Elastic set, whose
//     replicatedJob the JobSet has), status.nodes: current (the elastic
//     Job's parallelism as the JobSet has it), minNodes, maxNodes and
//     range from Info, the selector of its pods, and lastResizeTime as the
//     TrainJob had it (the host sets it when it resizes).
//
// Before the JobSet exists it reports nothing.
//
// The plugin stores nothing on the JobSet for Status to read back: the
// elastic range comes from Info (protocol 1.5; before it, Build wrote the
// annotation trainforge.dev/elastic, ElasticAnnotation, which Status read).
// That annotation, still on JobSets an earlier controller built, is
// ignored: Info is what the JobSet is built from now, and the annotation
// would say what it was built from then. Without Info (the runtime was
// deleted and the TrainJob has no snapshot of it, which no elastic job
// lacks; a finished TrainJob following its Jobs; JobSets deleted after
// they finished; a host before 1.5 calling this plugin out of process)
// the plugin cannot tell which replicatedJob is elastic nor its range,
// and reports no status.nodes rather than a guess: the TrainJob keeps the
// nodes last reported, by a reconcile that built the JobSet, the only
// thing that resizes it. Its conditions, jobsStatus and restarts do not
// depend on Info.
//
// # What the controller caches
//
// Watch asks the controller's cache to keep its JobSets without the pod
// template of each replicated Job (CacheOmits): Status reads the status,
// spec.suspend, spec.failurePolicy and the replicated Jobs' sizes, never
// the pod templates, which are most of a JobSet's size.
package jobset
