// Package flux is the Flux plugin of Trainforge: a Flux Framework cluster
// (the HPC workload manager) bootstrapped in a TrainJob's trainer pods,
// which runs the training command with `flux run` across them, MPI
// included, without SSH, as Kubeflow Trainer v2.3's Flux plugin does. It
// is written against package sdk only, runs as the external plugin
// cmd/trainforge-plugin-flux, and is named "Flux" in the configuration
// file:
//
//	plugins:
//	- name: Flux
//	  external:
//	    command: /plugins/trainforge-plugin-flux
//
// It takes no args. It builds a ConfigMap and a Secret per TrainJob, so
// the controller needs permission to manage them (docs/configuration.md,
// Permissions).
//
// # When it runs
//
// The plugin owns the mlPolicy key "flux". Kubeflow Trainer's example
// runtime, flux-distributed, sets it empty; numProcPerNode defaults to 1:
//
//	mlPolicy:
//	  numNodes: 1
//	  flux:
//	    numProcPerNode: 1   # Flux tasks per node
//
// The trainer step (the replicatedJob labelled
// trainer.kubeflow.org/trainjob-ancestor-step: trainer) runs one replica of
// numNodes pods: the TrainJob's spec.trainer.numNodes, else the runtime's
// mlPolicy.numNodes, else 1. Its main container (named "node", else
// "trainer", else the pod's only container) gets the TrainJob's env.
//
// # Settings
//
// Three variables of the main container's env, the TrainJob's
// spec.trainer.env winning over the runtime's, choose how Flux runs, with
// Kubeflow Trainer's names and defaults:
//
//	FLUX_VIEW_IMAGE      ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy
//	                     the installer's image: a Flux build for the OS of
//	                     the training image (rocky, ubuntu; tag-, arm-)
//	FLUX_NETWORK_DEVICE  eth0: the interface the brokers bind to
//	FLUX_QUEUE_POLICY    fcfs: Fluxion's queue policy (fcfs, easy, hybrid,
//	                     conservative)
//
// # Pods
//
// Each trainer pod gets, as in Kubeflow Trainer:
//
//   - the init container flux-installer, from FLUX_VIEW_IMAGE, running
//     /bin/bash /etc/flux-config/init.sh: it writes the broker
//     configuration and the host list into the emptyDir flux-install
//     (/mnt/flux) and copies Flux there;
//   - the main container's command replaced by
//     ["/bin/bash", "/etc/flux-config/entrypoint.sh", "<command>"], where
//     <command> is the TrainJob's command (else the runtime's) and the
//     TrainJob's args, joined with spaces; without TrainJob args, the
//     runtime's args stay the container's args and follow the command.
//     An empty command starts an interactive cluster;
//   - the volumes spack-install (emptyDir, /opt/software), flux-install
//     (emptyDir, /mnt/flux), <trainjob>-flux-entrypoint (the ConfigMap, mode
//     0755, read-only at /etc/flux-config in both containers), flux-curve
//     (the Secret, mode 0400, read-only at /curve) and shared-memory
//     (emptyDir in memory, at /dev/shm).
//
// The entrypoint starts the pod's Flux broker. The brokers find each other
// on port 8050 at <pod hostname>.<subdomain>.<namespace>.svc.cluster.local
// (the JobSet's headless service). On the lead pod,
// <trainjob>-<replicatedJob>-0-0, the broker runs
//
//	flux run -N <nodes> -n <nodes × numProcPerNode> [-g <GPUs per task>] <command>
//
// and the container exits with its status; the other pods' brokers follow
// the lead, retrying every 15 seconds until it is up, and exit when it is
// done. Each node declares numProcPerNode cores and its GPUs (flux R
// encode --cores=0-<n-1> --gpu=0-<g-1>). In the lead pod,
// `. /mnt/flux/flux-view.sh; flux proxy $fluxsocket` reaches the cluster.
//
// # numProcPerNode and GPUs
//
// The tasks per node are the TrainJob's spec.trainer.numProcPerNode (an
// integer, or "auto" or "gpu": the GPUs of a node, 1 without), else the
// runtime's mlPolicy.flux.numProcPerNode, else 1. The GPUs of a node (of
// resourcesPerNode, else the runtime's container) are shared evenly: each
// task gets GPUs ÷ numProcPerNode (flux run -g).
//
// # Objects
//
// The ConfigMap <trainjob>-flux-entrypoint holds init.sh and
// entrypoint.sh, with the broker configuration (flux-config(5): bootstrap
// hosts, CURVE certificate, Fluxion's queue policy, the job archive) in
// init.sh. The Secret <trainjob>-flux-curve holds curve.cert, the ZeroMQ
// CURVE certificate every broker of the TrainJob authenticates the others
// with. Its secret key is Kubeflow Trainer's: the SHA-256 of the
// TrainJob's metadata.uid as an X25519 key, Z85-encoded. Both objects are
// the same on every Build, so applying them again changes nothing; the
// TrainJob owns them, and they go with it.
//
// Whoever can read a TrainJob can read its UID, and so derive its brokers'
// key: keep the pods' port 8050 unreachable from other workloads (a
// NetworkPolicy) where that matters.
//
// # Validation
//
// On admission (and again before it changes anything), the plugin rejects:
//
//   - a runtime without a trainer step or trainer container;
//   - a trainer step that has an init container named flux-installer;
//   - a numProcPerNode below 1, or a string other than an integer, "auto"
//     and "gpu";
//   - a numProcPerNode that does not divide a node's GPUs;
//   - a numNodes below 1;
//   - a TrainJob name longer than 47 characters: the volume named
//     <trainjob>-flux-entrypoint would exceed 63;
//   - a FLUX_* setting taken from a Secret, ConfigMap or field
//     (valueFrom), an empty FLUX_VIEW_IMAGE, a FLUX_NETWORK_DEVICE that is
//     not an interface name, a FLUX_QUEUE_POLICY Fluxion does not know.
//
// # Differences from Kubeflow Trainer v2.3
//
//   - The lead container exits with the status of flux run, so that a
//     failed command fails the TrainJob; Kubeflow's entrypoint ends with
//     status 0 whatever the command did.
//   - /dev/shm is writable; Kubeflow mounts it read-only, where MPI, NCCL
//     and PyTorch's data loaders cannot create their shared memory.
//   - Each task gets its share of a node's GPUs (-g GPUs ÷ numProcPerNode);
//     Kubeflow gives every task all of them (-g GPUs), which Flux cannot
//     place when numProcPerNode is above 1.
//   - The trainer step is found by its label, whatever its name, and its
//     pods are reached under the JobSet's subdomain; Kubeflow needs the
//     replicatedJob "node" and assumes the subdomain is the TrainJob's name.
//   - With TrainJob args, the runtime's args are not run too; Kubeflow
//     leaves them after the wrapped command.
//   - The TrainJob's numProcPerNode may be "auto" or "gpu", as for MPI.
//   - A TrainJob without spec.trainer or numNodes runs (on the runtime's
//     nodes); Kubeflow's plugin dereferences both.
//   - Admission checks the settings, the GPU split and the name's length;
//     Kubeflow's pods fail later, or never start.
//   - The scripts are Trainforge's own: they do what Kubeflow's do, with
//     the same paths and files (/mnt/flux/flux-view.sh,
//     /mnt/flux/load-fluxion.sh, flux-operator-done.txt and
//     flux-operator-complete.txt), and write the broker configuration
//     once even when the installer runs again.
package flux
