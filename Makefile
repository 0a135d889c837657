# Trainforge. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN := $(CURDIR)/bin
CONTROLLER_GEN_VERSION ?= v0.23.0
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GINKGO_FLAGS ?=

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

$(CONTROLLER_GEN):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/controller-gen $(CONTROLLER_GEN)

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code, CRDs, RBAC and webhook manifests.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/trainer/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=trainforge-controller paths=./internal/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./internal/... output:webhook:artifacts:config=config/webhook

.PHONY: build
build: ## Build the binaries into bin/.
	go build -o $(BIN)/ ./cmd/...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd from the Go module proxy (cached) and print their directory.
	@hack/envtest.sh

.PHONY: test
test: vet test-unit test-integration ## Run every test: unit and integration.

.PHONY: test-unit
test-unit: ## Run the unit tests.
	go test -count=1 $$(go list ./... | grep -v /test/)

.PHONY: test-integration
test-integration: ## Run the integration suite against a real kube-apiserver and etcd.
	KUBEBUILDER_ASSETS="$$(hack/envtest.sh)" go test -count=1 -timeout 20m ./test/integration/... $(if $(GINKGO_FLAGS),-args $(GINKGO_FLAGS))

.PHONY: verify-generate
verify-generate: generate ## Fail when `make generate` changes a committed file.
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		echo "make generate changed these files; run it and commit the result:"; \
		git status --porcelain -- api config; git --no-pager diff -- api config | head -50; exit 1; fi
