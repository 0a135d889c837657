// Package procnode is the kubelet of the simulated cluster's process
// nodes: nodes whose pods run as real processes of this machine, beside
// kwok's fake nodes, so that a training job really trains (torchrun's
// rendezvous, real exit codes, real logs).
//
// The agent registers its nodes (label NodeLabel "true", taint NodeTaint
// NoSchedule, so that only pods that choose them land there), keeps them
// Ready (status and a Lease in kube-node-lease) and, for each pod bound to
// one, does what a kubelet does, without images:
//
//   - the pod gets a loopback address of its own, 127.x.y.z, as its podIP:
//     the whole 127.0.0.0/8 is local, so what listens on it is reachable
//     from every pod;
//   - its volumes are written under the agent's directory (emptyDir,
//     configMap, secret, downwardAPI, projected with a service-account
//     token from TokenRequest bound to the pod, with the audience and
//     lifetime it asks for; hostPath is the host's path), and an
//     /etc/hosts names every pod of its namespace and subdomain (a
//     JobSet's headless Service) by <hostname>.<subdomain>[.<namespace>[
//     .svc[.cluster.local]]], all of a JobSet's hostnames reserved before
//     its first pod starts so that rank 0 resolves from a pod that starts
//     first;
//   - init containers run in order, then the containers, each a process
//     group of `/bin/sh` in new mount and UTS namespaces that bind-mounts
//     the volumes and the hosts file, sets the pod's hostname and execs
//     the container's command and args ($(VAR) expanded as the kubelet
//     does) with its env (values, fieldRef, resourceFieldRef,
//     configMapKeyRef, secretKeyRef, envFrom) on a PATH of the host's
//     system directories, Debian's before /usr/local's (a `python3` is
//     Debian's, which sees python3-torch);
//   - exit codes go to containerStatuses (a signal is 128+signal), the
//     phase follows restartPolicy (OnFailure and Always restart the
//     container in place) and a container's own restartPolicy and
//     restartPolicyRules (a rule's exit codes restart it in place under a
//     pod's Never, as JobSet's in-place restart needs), with the kubelet's
//     back-off: a first failure restarts at once, one within the back-off
//     of the last waits it, from 10s doubling to 5 minutes; what a
//     container's main process leaves behind in its process group is
//     killed when it exits; Ready while every container runs;
//   - a deleted pod's process groups get SIGTERM, SIGKILL after the grace
//     period, then the pod's final status and its deletion (grace 0); a
//     Node deleted, or lost (Agent.Lose), kills its pods' processes;
//   - each node serves /containerLogs over HTTPS at its address and
//     kubelet port, which the API server proxies `kubectl logs` (-c,
//     --previous, -f, --tail, --limit-bytes) to.
//
// What process nodes are not: there are no images (a container needs a
// command; Image is ignored; where a host program lacks what a runtime
// relies on in the image it names, a stand-in comes first on the PATH:
// torchrun, whose keep-alive keys torch 1.13 lacks, image/torchrun), no isolation beyond mount and UTS namespaces
// (one network namespace, so two pods cannot bind the same port on
// 0.0.0.0; no cgroups, so no resource limits; one PID namespace; the
// host's root filesystem, where missing mount points are made), processes
// run as root, a container's working directory defaults to an empty
// directory of the pod's (an image's WORKDIR would), and probes,
// lifecycle hooks, sidecar init containers, tokens' refresh and
// activeDeadlineSeconds are not implemented.
//
// The agent needs root with CAP_SYS_ADMIN, which root in a container
// started without privileges lacks; CheckHost tries what a container's
// start does, once, and says which is missing.
//
// Every process gets the parent-death signal through Config.Spawn and is
// reported to Config.Watch (the simulation's watchdog), so none outlives
// the agent.
package procnode
