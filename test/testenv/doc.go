// Package testenv is the test environment every suite of the repository
// shares (test/integration, test/install, test/badinput, test/faults, the
// load harness of test/load, test/bench): where the repository and the
// CRDs are, a kube-apiserver and etcd started by envtest with those CRDs
// (and the admission webhooks when asked), an admin kubeconfig, and the
// module's binaries built once per test run.
//
// kube-apiserver and etcd come from KUBEBUILDER_ASSETS, or, when it is
// not set, from the cache hack/envtest.sh builds. When neither has them a
// suite fails (it does not skip) with an error that names the command
// that fixes it: `make envtest`.
//
// The binaries come from TRAINFORGE_TEST_BIN when it is set (the
// Makefile's test targets build them once into bin/ and set it), else
// they are built once, with one go build, into a temporary directory.
package testenv
