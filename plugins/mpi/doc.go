// Package mpi is the MPI plugin of Trainforge: training launched with
// mpirun (OpenMPI, Intel MPI or MPICH) over SSH, as Kubeflow Trainer's
// deepspeed-distributed and mlx-distributed runtimes do. It is written
// against package sdk only, runs as the external plugin
// cmd/trainforge-plugin-mpi, and is named "MPI" in the configuration file:
//
//	plugins:
//	- name: MPI
//	  external:
//	    command: /plugins/trainforge-plugin-mpi
//
// It takes no args. It builds Secrets and ConfigMaps, so the controller
// needs permission to manage them (docs/configuration.md, Permissions).
//
// # When it runs
//
// The plugin owns the mlPolicy key "mpi". A runtime that sets it has two
// replicatedJobs:
//
//   - the launcher: the trainer step (labelled
//     trainer.kubeflow.org/trainjob-ancestor-step: trainer), which runs
//     mpirun in one pod;
//   - the workers: the replicatedJob named "node", whose pods run sshd and
//     the processes mpirun starts on them.
//
// The main container of each is the one named "node" (else "trainer",
// else the pod's only container). Fields the runtime leaves unset take
// Kubeflow Trainer's defaults:
//
//	mlPolicy:
//	  mpi:
//	    numProcPerNode: 1            # slots per node
//	    mpiImplementation: OpenMPI   # or Intel, MPICH
//	    sshAuthMountPath: /root/.ssh
//	    runLauncherAsNode: false     # true: the launcher is a node too
//
// # Pods
//
// numNodes is the TrainJob's spec.trainer.numNodes, else the runtime's
// mlPolicy.numNodes, else 1. The launcher runs 1 pod; the workers run
// numNodes pods, or numNodes - 1 when runLauncherAsNode (the launcher then
// is one of the numNodes). Both replicatedJobs run one replica: a
// runtime's replicas would multiply pods the hostfile does not list.
//
// The TrainJob's spec.trainer.env goes into the main container of the
// launcher and of the workers, and its resourcesPerNode into the workers'
// (its image, command and args go to the launcher only). A launcher that
// is not a node keeps the runtime's own resources: it runs mpirun, not the
// training, so it holds none of the GPUs a node asks for.
//
// # Slots
//
// The number of processes per node, numProcPerNode, is the TrainJob's
// spec.trainer.numProcPerNode when set: an integer, or "auto" or "gpu" for
// the GPUs of one worker (1 without GPUs). Else it is the runtime's
// mlPolicy.mpi.numProcPerNode, except that a runtime value of 1 becomes
// the GPU count of a worker that has more than one GPU (as in Kubeflow
// Trainer).
//
// # SSH
//
// mpirun reaches the workers over SSH, with a key pair that the plugin
// generates for each TrainJob: the Secret <trainjob>-mpi-ssh-auth, of type
// kubernetes.io/ssh-auth and immutable, holds an ECDSA P-521 private key
// (PEM) under ssh-privatekey and its public key (authorized_keys format)
// under ssh-publickey. The plugin marks it to be created once
// (framework.CreateOnce): the host creates it when it does not exist and never
// updates it, so the key stays the same for the TrainJob's whole life,
// across controller restarts and suspensions; the TrainJob owns it, and it
// goes with it. A Secret volume "mpi-ssh-auth" mounts it at
// sshAuthMountPath in the main container of the launcher and of every
// worker, with Kubeflow Trainer v2.3's files and modes: id_rsa (0640),
// id_rsa.pub and authorized_keys (0644), default mode 0400.
//
// # Hostfile
//
// The ConfigMap <trainjob>-mpi-hostfile holds, under "hostfile", one line
// per node that mpirun starts processes on: every worker pod and, when
// runLauncherAsNode, the launcher's, in the runtime's replicatedJob order,
// each by its stable DNS name
// (<trainjob>-<replicatedJob>-<replica>-<index>.<subdomain>) with its slots:
//
//	llm-node-0-0.llm slots=4    # OpenMPI
//	llm-node-0-0.llm:4          # Intel MPI, MPICH
//
// Unlike the key, it is applied on every change, as the JobSet is: it
// derives from the pod counts. A ConfigMap volume "mpi-hostfile" mounts it at /etc/mpi in
// the launcher's main container (file hostfile, mode 0444).
//
// # Launcher environment
//
// The launcher's main container gets what its mpirun reads:
//
//	OpenMPI: OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile
//	         OMPI_MCA_orte_keep_fqdn_hostnames=true
//	         OMPI_MCA_orte_set_default_slots=<slots>
//	         OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10
//	Intel:   I_MPI_HYDRA_HOST_FILE=/etc/mpi/hostfile
//	         I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS=-o ConnectionAttempts=10
//	         I_MPI_PERHOST=<slots>
//	MPICH:   HYDRA_HOST_FILE=/etc/mpi/hostfile
//	         HYDRA_LAUNCH_EXTRA_ARGS=-o ConnectionAttempts=10
//
// ConnectionAttempts lets ssh retry while a worker's sshd starts.
//
// # Validation
//
// On admission (and again before it changes anything), the plugin rejects:
//
//   - an mpiImplementation other than OpenMPI, Intel and MPICH;
//   - a sshAuthMountPath that is not absolute, or is /etc/mpi;
//   - a runtime without a trainer step, or without a replicatedJob "node"
//     apart from it, or whose "node" has no main container;
//   - runLauncherAsNode with fewer than 2 nodes: the launcher would be the
//     only node. A runtime's own default numNodes of 1 is accepted (Kubeflow
//     Trainer's deepspeed-distributed runtime ships it); the TrainJob must
//     then set spec.trainer.numNodes to 2 or more;
//   - a numProcPerNode below 1, or a string other than an integer, "auto"
//     and "gpu";
//   - a TrainJob whose spec.trainer.env sets a variable the plugin sets for
//     the implementation in effect.
//
// # Differences from Kubeflow Trainer v2.3
//
//   - Intel MPI and MPICH are supported (hostfile and variables of the MPI
//     Operator); Kubeflow Trainer v2.3 supports OpenMPI only.
//   - The launcher is the trainer step, whatever its name; Kubeflow Trainer
//     looks for a replicatedJob named "launcher".
//   - The launcher runs one pod and the workers follow numNodes from the
//     runtime too; Kubeflow Trainer gives the launcher (the trainer step)
//     the runtime's mlPolicy.numNodes pods, and the workers the TrainJob's
//     numNodes, else the template's parallelism. Both replicatedJobs run
//     one replica.
//   - runLauncherAsNode with numNodes 1 is rejected; Kubeflow Trainer runs
//     one worker anyway (max(numNodes-1, 1)), one more node than asked for.
//   - The workers always get the TrainJob's env and resourcesPerNode;
//     Kubeflow Trainer gives them only when runLauncherAsNode.
//   - A launcher that is not a node keeps the runtime's resources; Kubeflow
//     Trainer gives it resourcesPerNode, GPUs it does not use.
//   - numProcPerNode "auto" and "gpu" are resolved to the GPUs of a worker;
//     a runtime's 1 becomes the GPU count of the workers' resources (the
//     TrainJob's resourcesPerNode, else the runtime's "node" container),
//     where Kubeflow Trainer reads the launcher's runtime resources.
//   - Errors name the field and what would be accepted; user env that sets
//     one of the plugin's variables is refused per variable, for the
//     implementation in effect.
package mpi
