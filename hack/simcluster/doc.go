// Package simcluster runs a simulated Kubernetes cluster on this machine,
// without Docker, for `make demo` (hack/demo) and the e2e suite
// (test/e2e): the same cluster for both, so that what the suite proves is
// what the demo shows.
//
// The control plane is real: etcd, kube-apiserver, kube-controller-manager
// (Jobs, garbage collection), the scheduler of sigs.k8s.io/scheduler-plugins
// with its Coscheduling plugin as the cluster's only scheduler, the JobSet
// controller with its admission webhooks, and Trainforge's controller with
// its webhooks and plugin processes. Only the nodes are simulated:
//
//   - kwok plays the kubelets of the fake nodes (annotated
//     kwok.x-k8s.io/node=fake; kwok manages no other), moving pods through
//     the stages of stages.yaml (running, then succeeded or failed after a
//     time that pod annotations set);
//   - the process nodes (DefaultProcessNodes, or Options.ProcessNodes;
//     label and NoSchedule taint trainforge.dev/process-node) have package
//     procnode's agent, in this process, as their kubelet: their pods run
//     as real processes of this machine, without images and without
//     isolation beyond mount and UTS namespaces, as root with
//     CAP_SYS_ADMIN (without it the cluster has none, and NoProcessNodes
//     says why; procnode's package doc says what they do and do not).
//
// kwokctl starts etcd, the API server, the controller manager, the
// scheduler and kwok from the binaries hack/cluster-binaries.sh builds, so
// nothing is downloaded.
//
// Everything lives in one work directory that Stop removes. Every process
// is stopped by Stop, dies with its parent if that crashes (parent-death
// signal), and a watchdog process kills the process groups (the process
// nodes' containers among them), stops the kwok cluster and removes the
// directory if the parent dies without calling Stop. A lock per cluster
// name (TryLock) keeps two runs of the same cluster apart.
//
// The package lives in hack/ because it is tooling, not part of the
// operator: nothing outside the demo and the tests imports it.
package simcluster
