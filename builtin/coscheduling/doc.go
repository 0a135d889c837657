// Package coscheduling is the built-in Coscheduling plugin: gang scheduling
// of a TrainJob's training pods with the scheduler-plugins coscheduling
// plugin (sigs.k8s.io/scheduler-plugins, API group scheduling.x-k8s.io).
//
// # When it runs
//
// The plugin owns the podGroupPolicy key "coscheduling". It takes part in a
// TrainJob whose runtime says
//
//	spec:
//	  podGroupPolicy:
//	    coscheduling:
//	      scheduleTimeoutSeconds: 120   # optional
//
// and leaves every other job alone.
//
// # What it does
//
// The gang is the trainer step: every replicatedJob labelled
// trainer.kubeflow.org/trainjob-ancestor-step=trainer (for runtimes written
// before that label, the replicatedJob named "node" or "trainer-node").
// The dataset and model initializers run before training, so they are not
// part of the gang: their pods get no pod-group label, are not counted and
// are never held back waiting for the trainers. A runtime without a trainer
// step is an error.
//
// For each TrainJob the plugin
//
//   - adds the label scheduling.x-k8s.io/pod-group=<TrainJob name> to the pods
//     of the gang, and, when the plugin args set schedulerName, makes it their
//     scheduler (unless the runtime's pod template or an earlier plugin
//     already names one);
//   - builds one PodGroup named as the TrainJob, in its namespace, with the
//     TrainJob's labels and annotations and
//   - minMember: the number of pods of the gang (replicas × pods per replica
//     of every trainer-step replicatedJob, after the ML policy has set the
//     number of nodes); an elastic step (mlPolicy.torch.elasticPolicy)
//     counts its minNodes, so the job starts once its minimum fits, the
//     other pods join as capacity frees, and a resize leaves the PodGroup
//     as it is;
//   - minResources: for each resource, the requests of one pod times the
//     number of pods counted in minMember, summed over the gang. One pod's
//     requests are counted the way the kube-scheduler counts them (k8s.io/component-helpers):
//     the larger of the init containers and the containers, sidecars
//     (init containers with restartPolicy Always) added to both, plus the
//     pod overhead; the TrainJob's resourcesPerNode replace the runtime's
//     requests of the trainer container;
//   - scheduleTimeoutSeconds: the policy's value; when the policy leaves it
//     unset or 0 (including `coscheduling: {}`), the default from the plugin
//     args, else 60.
//
// # Configuration
//
// The plugin's args in the configuration file are defaults, decoded
// strictly (an unknown field is an error that names it):
//
//	plugins:
//	- name: Coscheduling
//	  args:
//	    scheduleTimeoutSeconds: 300            # default timeout, >= 0
//	    schedulerName: scheduler-plugins-scheduler
//
// schedulerName must be a DNS-1123 subdomain; it is the scheduler that runs
// the coscheduling plugin when that is not the cluster's default scheduler.
//
// # Admission
//
// Validate rejects a TrainJob whose runtime asks for coscheduling with a
// negative scheduleTimeoutSeconds, or has no trainer step to gang.
package coscheduling
