// Package harness runs the pieces that the load harness (test/load) and
// the fault suite (test/faults) share: a kube-apiserver and etcd from the
// envtest cache with the CRDs and an audit log of the controller's user
// (Cluster), the controller as a real process (Process), and what a
// process tree has used, read from /proc (TreeUsage, Descendants).
package harness
