// Package volcano is the Volcano plugin of Trainforge: gang scheduling of a
// TrainJob's training pods with the Volcano scheduler (volcano.sh, API
// group scheduling.volcano.sh). It is a vendor-style plugin, written only
// against package sdk and the public API, and runs out of process: the
// binary trainforge-plugin-volcano serves it.
//
// # When it runs
//
// The plugin owns the podGroupPolicy key "volcano". It takes part in a
// TrainJob whose runtime says
//
//	spec:
//	  podGroupPolicy:
//	    volcano:
//	      networkTopology:        # optional, for Volcano's hyperNodes
//	        mode: hard            # hard or soft; Volcano's default is hard
//	        highestTierAllowed: 2 # at least 1; Volcano's default is 1
//
// and leaves every other job alone.
//
// # What it does
//
// The gang is the trainer step: every replicatedJob labelled
// trainer.kubeflow.org/trainjob-ancestor-step=trainer (for older runtimes,
// the one named "node" or "trainer-node"). The dataset and model
// initializers run before training and are left out: their pods are not
// annotated, not counted, and never wait for the trainers.
//
// For each TrainJob the plugin
//
//   - annotates the gang's pods with scheduling.k8s.io/group-name=<TrainJob
//     name>, and, when the plugin args set schedulerName, makes it their
//     scheduler (unless the runtime's pod template or an earlier plugin
//     already names one);
//   - builds one PodGroup (scheduling.volcano.sh/v1beta1) named as the
//     TrainJob, in its namespace, with the TrainJob's labels and annotations
//     and
//   - minMember: the number of pods of the gang, after the ML policy has
//     set the number of nodes; an elastic step (framework.PodSet.Elastic,
//     set by Torch for mlPolicy.torch.elasticPolicy) counts its minimum,
//     so the job starts once that fits and a resize leaves the PodGroup as
//     it is;
//   - minResources: one pod's requests times the number of pods, summed
//     over the gang, counted as the kube-scheduler counts them (init
//     containers, sidecars, pod overhead; framework.GangSize, which the built-in
//     Coscheduling plugin uses too); left out when the gang requests
//     nothing;
//   - queue: the annotation scheduling.volcano.sh/queue-name of the
//     runtime's template, which the TrainJob's spec.annotations (or a
//     runtimePatch) may override; without it Volcano uses its queue
//     "default";
//   - priorityClassName: that of the gang's pod templates;
//   - networkTopology: the policy's, as it is.
//
// # Admission
//
// Validate rejects, each as a field error that says what would be
// accepted: a networkTopology with another field than mode and
// highestTierAllowed, a mode other than hard or soft, a highestTierAllowed
// below 1; a queue annotation that is empty or not a valid object name; a
// runtime without a trainer step; and trainer-step replicatedJobs that name
// different priority classes. A problem of the runtime is shown on the
// runtime's own field when the runtime is admitted, and on the TrainJob's
// spec.runtimeRef, naming the runtime's field, when a TrainJob is.
//
// # Configuration
//
//	plugins:
//	- name: Volcano
//	  args:
//	    schedulerName: volcano    # optional: the scheduler of the gang's pods
//	  external:
//	    command: /plugins/trainforge-plugin-volcano
//
// The args are decoded strictly (an unknown field is an error that names
// it); schedulerName must be a DNS-1123 subdomain.
//
// # RBAC
//
// The controller applies the PodGroups and watches them through their
// owner reference, with its own service account; the role that Trainforge
// installs does not cover Volcano's kinds. An admin adds this role
// (the controller refuses to start the plugin's watch without it, and says
// which verbs are missing):
//
//	apiVersion: rbac.authorization.k8s.io/v1
//	kind: ClusterRole
//	metadata:
//	  name: trainforge-plugin-volcano
//	rules:
//	- apiGroups: [scheduling.volcano.sh]
//	  resources: [podgroups]
//	  verbs: [get, list, watch, create, patch]
//	---
//	apiVersion: rbac.authorization.k8s.io/v1
//	kind: ClusterRoleBinding
//	metadata:
//	  name: trainforge-plugin-volcano
//	roleRef:
//	  apiGroup: rbac.authorization.k8s.io
//	  kind: ClusterRole
//	  name: trainforge-plugin-volcano
//	subjects:
//	- kind: ServiceAccount
//	  name: trainforge-controller
//	  namespace: trainforge-system
//
// The controller applies with server-side apply (a patch), so it needs no
// update; PodGroups are deleted with their TrainJob by the garbage
// collector, so it needs no delete.
package volcano
