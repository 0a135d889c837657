# Trainforge. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN := $(CURDIR)/bin
# Tools are built from the Go module proxy into a cache outside the
# repository, one file per version, so that a fresh clone reuses them (as
# hack/envtest.sh and hack/cluster-binaries.sh do).
CACHE ?= $(or $(TRAINFORGE_CACHE),$(if $(XDG_CACHE_HOME),$(XDG_CACHE_HOME)/trainforge),$(HOME)/.cache/trainforge)
TOOLS := $(CACHE)/tools
CONTROLLER_GEN_VERSION ?= v0.23.0
CONTROLLER_GEN := $(TOOLS)/controller-gen-$(CONTROLLER_GEN_VERSION)
BUF_VERSION ?= v1.75.0
BUF := $(TOOLS)/buf-$(BUF_VERSION)
# buf.gen.yaml names the two generators with these versions; buf finds
# them on PATH.
PROTOC_GEN_GO := $(TOOLS)/protoc-gen-go-v1.36.12
PROTOC_GEN_GO_GRPC := $(TOOLS)/protoc-gen-go-grpc-v1.6.2
# Helm renders the chart in make test-install; it is a tool, not a
# dependency of go.mod (it would pull Kubernetes modules of its own).
# HELM_K8S_MINOR is the minor of the k8s.io modules that Helm version
# builds with (its go.mod): the Kubernetes version `helm template` assumes,
# which Helm's own release build sets with these same ldflags.
HELM_VERSION ?= v3.22.0
HELM_K8S_MINOR ?= 37
HELM := $(TOOLS)/helm-$(HELM_VERSION)
# make bench compares the paths of each benchmark with benchstat (medians,
# 95% confidence intervals, p-values).
BENCHSTAT_VERSION ?= v0.0.0-20260908200009-22c9c6c9d4da
BENCHSTAT := $(TOOLS)/benchstat-$(BENCHSTAT_VERSION)
# The released plugin protocol; `buf breaking` compares proto/ with it.
PROTO_BASELINE := proto/breaking-baseline.binpb
# The Python stubs of the protocol (buf.gen.yaml) come from Debian 12's
# protoc and grpc_python_plugin: other versions write other bytes, and
# verify-generate would fail on every machine but one.
PROTOC_PYTHON_VERSION := libprotoc 3.21.12
GRPC_PYTHON_PLUGIN_VERSION := 1.51
# Debian's interpreter: it sees Debian's python3-grpcio, python3-protobuf and
# python3-cryptography, which a python3 first on PATH (pyenv, a venv) may not.
PYTHON := /usr/bin/python3
DEEPSPEED := examples/plugins/deepspeed
GINKGO_FLAGS ?=
# The fault suite: TrainJobs per storm, a -run pattern, extra flags (-pprof, -clients N).
FAULTS_N ?= 500
FAULTS_RUN ?=
FAULTS_FLAGS ?=

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

# $(call go-install-tool,PACKAGE,VERSION[,GO INSTALL FLAGS]) builds
# PACKAGE@VERSION into the target, through a directory of its own and a
# rename: two makes may build the same tool at once (make test builds Helm
# behind its stages, and test-install may start that build before it ends),
# and neither must ever run the other's half-written binary.
define go-install-tool
@mkdir -p $(TOOLS)
gobin=$$(mktemp -d $(TOOLS)/.install-XXXXXX) && \
GOBIN=$$gobin go install $(3) $(1)@$(2) && \
mv $$gobin/$(notdir $(1)) $@; status=$$?; rm -rf $$gobin; exit $$status
endef

$(CONTROLLER_GEN):
	$(call go-install-tool,sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_GEN_VERSION))

$(BUF):
	$(call go-install-tool,github.com/bufbuild/buf/cmd/buf,$(BUF_VERSION))

$(BENCHSTAT):
	$(call go-install-tool,golang.org/x/perf/cmd/benchstat,$(BENCHSTAT_VERSION))

$(TOOLS)/helm-%:
	@echo "building Helm $* from the Go module proxy into $@ (a few minutes the first time)"
	$(call go-install-tool,helm.sh/helm/v3/cmd/helm,$*,-ldflags "-s -w \
		-X helm.sh/helm/v3/internal/version.version=$* \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$(HELM_K8S_MINOR) \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$(HELM_K8S_MINOR)")

$(PROTOC_GEN_GO):
	$(call go-install-tool,google.golang.org/protobuf/cmd/protoc-gen-go,$(patsubst $(TOOLS)/protoc-gen-go-%,%,$@))

$(PROTOC_GEN_GO_GRPC):
	$(call go-install-tool,google.golang.org/grpc/cmd/protoc-gen-go-grpc,$(patsubst $(TOOLS)/protoc-gen-go-grpc-%,%,$@))

.PHONY: generate
generate: $(CONTROLLER_GEN) proto ## Generate deepcopy code, CRDs, RBAC, webhook manifests and the protobuf stubs.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/trainer/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=trainforge-controller paths=./internal/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./internal/... output:webhook:artifacts:config=config/webhook
	@# The Helm chart installs the same CRDs, RBAC rules and webhooks (test/install checks the copies).
	cp config/crd/bases/*.yaml charts/trainforge/crds/
	cp config/rbac/role.yaml charts/trainforge/files/role.yaml
	cp config/webhook/manifests.yaml charts/trainforge/files/webhook.yaml
	@# Volcano's Go module ships no CRD; the integration suite installs this one.
	$(CONTROLLER_GEN) crd paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 output:crd:artifacts:config=test/crds/volcano

.PHONY: proto
proto: $(BUF) $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC) proto-python-tools ## Generate the Go and Python stubs of the plugin protocol.
	PATH="$(TOOLS):$$PATH" $(BUF) generate
	@# A WebAssembly guest serves without gRPC: proto/.../service_wasip1.go stands in for the gRPC stubs there.
	sed -i '1i //go:build !wasip1\n' proto/trainforge/plugin/v1/plugin_grpc.pb.go

.PHONY: proto-python-tools
proto-python-tools: ## Check for Debian 12's protoc and grpc_python_plugin (apt-get install protobuf-compiler protobuf-compiler-grpc).
	@found="$$(protoc --version 2>/dev/null || echo none)"; if [ "$$found" != "$(PROTOC_PYTHON_VERSION)" ]; then \
		echo "the Python stubs need $(PROTOC_PYTHON_VERSION), Debian 12's protobuf-compiler; found protoc: $$found"; \
		echo "install it with: apt-get install protobuf-compiler protobuf-compiler-grpc"; exit 1; fi
	@found="$$(dpkg-query -W -f='$${Version}' protobuf-compiler-grpc 2>/dev/null || echo none)"; case "$$found" in \
		$(GRPC_PYTHON_PLUGIN_VERSION).*) ;; \
		*) echo "the Python stubs need grpc_python_plugin $(GRPC_PYTHON_PLUGIN_VERSION), Debian 12's protobuf-compiler-grpc; found: $$found"; \
		   echo "install it with: apt-get install protobuf-compiler-grpc"; exit 1;; esac

.PHONY: proto-lint
proto-lint: $(BUF) ## Lint the plugin protocol and check it for breaking changes against the baseline.
	$(BUF) lint
	$(BUF) breaking --against $(PROTO_BASELINE)

.PHONY: proto-baseline
proto-baseline: $(BUF) ## Record proto/ as the released protocol (at a release only).
	$(BUF) build --exclude-source-info -o $(PROTO_BASELINE)

.PHONY: build
build: ## Build the binaries into bin/.
	go build -o $(BIN)/ ./cmd/...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd from the Go module proxy (cached) and print their directory.
	@hack/envtest.sh

# The binaries the suites run as processes (the controller, every plugin,
# the test plugins), built once per make run with one go build into bin/;
# the suites take them from there (TRAINFORGE_TEST_BIN) instead of each
# linking its own. go build relinks only the binaries whose code changed.
TEST_BINARIES := ./cmd/... ./test/plugins/... ./examples/plugins/sharedmemory
# What every suite that starts an API server or runs a binary gets.
TEST_ENV = TRAINFORGE_TEST_BIN=$(BIN) KUBEBUILDER_ASSETS="$$(hack/envtest.sh)"

.PHONY: test-bin
test-bin: ## Build every binary the tests run into bin/ (make test does it once; suites run by go test alone build their own).
	@mkdir -p $(BIN)
	go build -o $(BIN)/ $(TEST_BINARIES)

# make test's stages, in order: first those that need no API server, so
# that the builds behind them (hack/build-behind.sh) have the most time.
TEST_STAGES := vet proto-lint test-unit test-fuzz test-python conformance test-bench-smoke test-badinput
# Then its last stage, test-suites: the suites that spend much of their time
# waiting for processes, API servers and real training (the CPU idle 35 to
# 65 % of each alone, docs/testing.md) run in two lanes of about the same
# length side by side, each lane's suites one after the other. On a cold
# machine the e2e suite waits for the cluster's build behind, and Helm
# (test-install's) builds behind it: the e2e suite comes after the load
# harness, when the first lane still runs beside it, and the install checks
# last, when Helm has had the e2e suite's idle CPU.
TEST_SUITES := test-faults test-integration
TEST_SUITES_BESIDE := test-load-smoke test-e2e test-install

.PHONY: test
test: ## Run every test: protocol lint, unit (Go and Python), a short fuzz of each target, plugin conformance, one round of each benchmark, the bad-input table, then the fault and integration suites beside the load harness at a small N, the e2e suite and the install checks; what a fresh machine lacks builds behind the first stages.
	@HELM=$(HELM) hack/build-behind.sh $(MAKE) --no-print-directory $(TEST_STAGES) test-suites

# The binaries are built once, by test-suites; the makes of its lanes take
# them as they are (-o), rather than each running go build again to find
# nothing to do. ($(MAKE) stays written in each line: make -n and the
# jobserver treat only such lines as recursive makes.)
SUITES_MAKEFLAGS := --no-print-directory -o test-bin -o wasm-bin

.PHONY: test-suites
test-suites: test-bin wasm-bin ## Run TEST_SUITES one after the other, and beside them TEST_SUITES_BESIDE one after the other (make test's last stage); the output of the first lane is shown as it comes, that of the second when each of its suites ends, so that the two do not interleave.
	@$(MAKE) $(SUITES_MAKEFLAGS) -j2 --output-sync=target test-suites-lane test-suites-beside-lane

.PHONY: test-suites-lane test-suites-beside-lane
test-suites-lane:
	+@for s in $(TEST_SUITES); do $(MAKE) $(SUITES_MAKEFLAGS) --output-sync=none $$s || exit 1; done
test-suites-beside-lane:
	+@for s in $(TEST_SUITES_BESIDE); do $(MAKE) $(SUITES_MAKEFLAGS) --output-sync=target $$s || exit 1; done

.PHONY: test-under-load
test-under-load: ## Run make test beside BUSY (default 2) busy processes, then the fault, integration and e2e suites REPEAT (default 3) times each the same way; every run must pass (not part of make test: over two hours on 2 cores).
	hack/test-under-load.sh

.PHONY: test-stages
test-stages: ## Run the stages of make test one by one and print how long each took (docs/testing.md; a cold run: see hack/test-stages.sh).
	hack/test-stages.sh

.PHONY: test-unit
test-unit: test-bin ## Run the unit tests.
	TRAINFORGE_TEST_BIN=$(BIN) go test -count=1 $$(go list ./... | grep -v /test/) ./test/testenv/

# The fuzz targets, as package:Target. Go fuzzes one target per `go test`.
# Their seeds (f.Add and testdata/fuzz/<Target>/) run in every plain
# `go test`; docs/bad-input.md#fuzzing says what each checks.
FUZZ_TARGETS := \
	./api/config/v1alpha1:FuzzDecode \
	./framework/remote:FuzzApplyPatch \
	./framework/remote:FuzzApplyInfo \
	./framework/remote:FuzzApplyInfoChanges \
	./framework/remote:FuzzChangesRoundTrip \
	./framework/remote:FuzzPluginAnswer \
	./builtin:FuzzPipeline \
	./internal/validation:FuzzTrainJob \
	./internal/validation:FuzzRuntime \
	./sdk:FuzzServeRequest
# A count of inputs, not a duration: with a duration, Go 1.26's fuzzing
# coordinator can report "context deadline exceeded" as the target's failure
# when the time runs out on a busy machine (go.dev/issue/75804, fixed in Go
# 1.27). 1000 inputs take 2 to 3 s a target on 2 cores.
FUZZ_TIME ?= 1000x
# New interesting inputs are minimized; a small budget keeps each run near FUZZ_TIME.
FUZZ_FLAGS ?= -fuzzminimizetime=100x -parallel=2

.PHONY: test-fuzz
test-fuzz: ## Fuzz each target for FUZZ_TIME inputs (default 1000x; e.g. FUZZ_TIME=1000000x for a long run); a crasher is written to the package's testdata/fuzz/<Target>/.
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; echo "--- $$name ($$pkg)"; \
		go test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZ_TIME) $(FUZZ_FLAGS) $$pkg || exit 1; \
	done

.PHONY: test-badinput
test-badinput: test-bin ## Check the bad-input table: each bad manifest, config file, plugin answer and flag gets its documented message (docs/bad-input.md; refresh it with UPDATE=1).
	$(TEST_ENV) go test -count=1 ./test/badinput/ $(if $(UPDATE),-args -update)

.PHONY: test-python
test-python: ## Run the unit tests of the Python example plugin, of the real jobs' scripts and of the process nodes' torchrun (these need python3-torch and python3-xgboost) with Debian's python3, and send the host's table of bad answers from the Python plugin through the plugin host.
	$(PYTHON) -m unittest discover -s $(DEEPSPEED)/tests -t $(DEEPSPEED)
	$(PYTHON) -m unittest discover -s examples/realjobs/tests -t examples/realjobs
	$(PYTHON) -m unittest discover -s hack/simcluster/procnode/image -t hack/simcluster/procnode/image
	go test -count=1 -run '^TestBadAnswersFromPython$$' ./$(DEEPSPEED)/

.PHONY: conformance
conformance: test-bin ## Check plugin binaries with trainforge-plugin-conformance; the broken test plugin shows what failures look like.
	$(BIN)/trainforge-plugin-conformance $(foreach f,deepspeed-distributed mlx-distributed mpi-launcher,--case plugins/mpi/testdata/$(f).yaml) -- $(BIN)/trainforge-plugin-mpi
	$(BIN)/trainforge-plugin-conformance -- $(BIN)/trainforge-plugin-jax
	$(BIN)/trainforge-plugin-conformance -- $(BIN)/trainforge-plugin-xgboost
	$(BIN)/trainforge-plugin-conformance $(foreach f,flux-distributed flux-gpus,--case plugins/flux/testdata/$(f).yaml) -- $(BIN)/trainforge-plugin-flux
	$(BIN)/trainforge-plugin-conformance -- $(BIN)/trainforge-builtin-plugin Torch
	$(BIN)/trainforge-plugin-conformance -- $(BIN)/trainforge-builtin-plugin TrainJobStatus
	$(BIN)/trainforge-plugin-conformance --args '{"sizeLimit": "16Gi"}' -- $(BIN)/sharedmemory
	$(BIN)/trainforge-plugin-conformance --case plugins/volcano/testdata/gang.yaml --case plugins/volcano/testdata/queue-override.yaml \
		--args '{"schedulerName": "volcano"}' -- $(BIN)/trainforge-plugin-volcano
	$(BIN)/trainforge-plugin-conformance $(addprefix --case ,$(filter-out %.golden.yaml,$(wildcard $(DEEPSPEED)/testdata/*.yaml))) -- $(PYTHON) $(DEEPSPEED)/plugin.py
	@echo "--- a broken plugin, expected to fail:"
	@if $(BIN)/trainforge-plugin-conformance -- $(BIN)/broken; then echo "the broken plugin passed conformance"; exit 1; fi
	$(MAKE) conformance-wasm

# The one build command of a WebAssembly plugin (docs/writing-a-plugin.md):
# every module the tests and benchmarks run is built as a vendor builds it.
WASM_BUILD = GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w'

# The plugins built as WebAssembly modules.
WASM_PLUGINS := ./cmd/trainforge-plugin-mpi ./cmd/trainforge-plugin-jax ./cmd/trainforge-plugin-xgboost \
	./cmd/trainforge-plugin-flux ./cmd/trainforge-plugin-volcano ./examples/plugins/sharedmemory

.PHONY: wasm-bin
wasm-bin: ## Build the vendor plugins and sharedmemory as WebAssembly modules into bin/wasm/.
	@mkdir -p $(BIN)/wasm
	for p in $(WASM_PLUGINS); do $(WASM_BUILD) -o $(BIN)/wasm/$$(basename $$p).wasm $$p || exit 1; done

# The modules' machine code is kept between runs (wazero keys it by the
# module's contents), as the tests of modules keep theirs: a module compiles
# once per change, not at every run (10 to 30 s of CPU each).
CONFORMANCE_WASM = $(BIN)/trainforge-plugin-conformance --wasm-cache-dir $(CACHE)/wasm-compiled

.PHONY: conformance-wasm
conformance-wasm: test-bin wasm-bin ## Check the plugins built as WebAssembly with trainforge-plugin-conformance, as their binaries are checked.
	$(CONFORMANCE_WASM) $(foreach f,deepspeed-distributed mlx-distributed mpi-launcher,--case plugins/mpi/testdata/$(f).yaml) -- $(BIN)/wasm/trainforge-plugin-mpi.wasm
	$(CONFORMANCE_WASM) -- $(BIN)/wasm/trainforge-plugin-jax.wasm
	$(CONFORMANCE_WASM) -- $(BIN)/wasm/trainforge-plugin-xgboost.wasm
	$(CONFORMANCE_WASM) $(foreach f,flux-distributed flux-gpus,--case plugins/flux/testdata/$(f).yaml) -- $(BIN)/wasm/trainforge-plugin-flux.wasm
	$(CONFORMANCE_WASM) --args '{"sizeLimit": "16Gi"}' -- $(BIN)/wasm/sharedmemory.wasm
	$(CONFORMANCE_WASM) --case plugins/volcano/testdata/gang.yaml --case plugins/volcano/testdata/queue-override.yaml \
		--args '{"schedulerName": "volcano"}' -- $(BIN)/wasm/trainforge-plugin-volcano.wasm

.PHONY: test-bench-smoke
test-bench-smoke: test-bin ## Run each benchmark once, so that they keep working (figures: make bench).
	TRAINFORGE_TEST_BIN=$(BIN) go test -count=1 -run='^$$' -bench=. -benchtime=1x ./test/bench/

.PHONY: benchstat
benchstat: $(BENCHSTAT) ## Build (or find) benchstat $(BENCHSTAT_VERSION) from the Go module proxy and print its path.
	@echo $(BENCHSTAT)

# Runs of each benchmark: benchstat gives a confidence interval from 6.
BENCH_COUNT ?= 6

.PHONY: bench
bench: test-bin $(BENCHSTAT) ## Benchmark each extension point and a reconcile, in-process, codec-only and external; benchstat compares the paths (raw output in bin/bench.txt).
	TRAINFORGE_TEST_BIN=$(BIN) go test -run='^$$' -bench=. -benchmem -count=$(BENCH_COUNT) -timeout=30m ./test/bench/ | tee $(BIN)/bench.txt
	$(BENCHSTAT) -col /path $(BIN)/bench.txt

# The load harness (test/load): N TrainJobs, and flags such as
# LOAD_FLAGS='-mode restart' or '-runtime coscheduling' or
# '-compare NAME=COMMAND -rows floor,in-process,external,NAME'.
N ?= 500
LOAD_FLAGS ?=

.PHONY: bench-load
bench-load: test-bin ## Measure a burst of N TrainJobs (default 500) against a local API server: floor, design floor, in-process, external, wasm (LOAD_FLAGS='-rounds 3' interleaves three rounds and adds medians); print a table (also in bin/bench-load/table.md).
	@mkdir -p $(BIN)/wasm
	$(WASM_BUILD) -o $(BIN)/wasm/trainforge-builtin-plugin.wasm ./cmd/trainforge-builtin-plugin
	$(TEST_ENV) go run ./test/load -n $(N) -controller $(BIN)/trainforge-controller -plugin $(BIN)/trainforge-builtin-plugin -wasm-module $(BIN)/wasm/trainforge-builtin-plugin.wasm -out $(BIN)/bench-load $(LOAD_FLAGS)

# The sub-makes take test-bin as made (-o): this target built bin/ already,
# and they would run its go build again.
.PHONY: test-load-smoke
test-load-smoke: test-bin ## Run the load harness's tests (the design-floor row on a real API server among them) and the harness once in each mode at N=20, so that it keeps working (figures: make bench-load).
	$(TEST_ENV) go test -count=1 ./test/load/
	$(MAKE) --no-print-directory -o test-bin bench-load N=20 LOAD_FLAGS='-out $(BIN)/load-smoke-burst -wasm-cache-dir $(CACHE)/wasm-compiled'
	$(MAKE) --no-print-directory -o test-bin bench-load N=20 LOAD_FLAGS='-mode restart -out $(BIN)/load-smoke-restart -wasm-cache-dir $(CACHE)/wasm-compiled'

.PHONY: test-faults
test-faults: test-bin ## Run the fault suite (test/faults): a storm of FAULTS_N TrainJobs (default 500) per case, each with a fault (plugin or controller killed, plugin hanging or answering garbage, API server restarted, runtime deleted, leader of two replicas killed); prints the recovery table (also in bin/faults/faults.md).
	$(TEST_ENV) go test -count=1 -timeout 30m -v ./test/faults/ $(if $(FAULTS_RUN),-run '$(FAULTS_RUN)') -args -jobs $(FAULTS_N) -out $(BIN)/faults $(FAULTS_FLAGS)

.PHONY: test-integration
test-integration: test-bin ## Run the integration suite against a real kube-apiserver and etcd.
	$(TEST_ENV) go test -count=1 -timeout 20m ./test/integration/... $(if $(GINKGO_FLAGS),-args $(GINKGO_FLAGS))

.PHONY: test-install
test-install: $(HELM) ## Render the kustomize install and the Helm chart (every values file of charts/trainforge/ci) and apply them to a real kube-apiserver.
	HELM=$(HELM) KUBEBUILDER_ASSETS="$$(hack/envtest.sh)" go test -count=1 -timeout 10m ./test/install/...

.PHONY: helm
helm: $(HELM) ## Build (or find) Helm $(HELM_VERSION) from the Go module proxy and print its path.
	@echo $(HELM)

.PHONY: install-render
install-render: ## Print the kustomize install (config/default), as kustomize build does; apply it with kubectl apply --server-side -f -.
	@go run ./hack/kustomize build config/default

# Images (not built by make test: no container runtime is needed here).
IMAGE_REGISTRY ?= ghcr.io/trainforge
IMAGE_TAG ?= v0.1.0
CONTAINER_TOOL ?= docker
IMAGE_PLUGINS := mpi jax xgboost volcano flux

.PHONY: images
images: ## Build the controller's image and two images per vendor plugin with $(CONTAINER_TOOL): its sidecar and its WebAssembly module (for an image volume).
	$(CONTAINER_TOOL) build -t $(IMAGE_REGISTRY)/trainforge-controller:$(IMAGE_TAG) .
	$(foreach p,$(IMAGE_PLUGINS),$(CONTAINER_TOOL) build -f plugins/Dockerfile --build-arg PLUGIN=$(p) -t $(IMAGE_REGISTRY)/trainforge-plugin-$(p):$(IMAGE_TAG) . &&) true
	$(foreach p,$(IMAGE_PLUGINS),$(CONTAINER_TOOL) build -f plugins/wasm.Dockerfile --build-arg PLUGIN=$(p) -t $(IMAGE_REGISTRY)/trainforge-plugin-$(p)-wasm:$(IMAGE_TAG) . &&) true

.PHONY: cluster-binaries
cluster-binaries: ## Build the simulated cluster's binaries from the Go module proxy (cached) and print their directory.
	@hack/cluster-binaries.sh

.PHONY: test-e2e
test-e2e: test-bin wasm-bin ## Run the e2e suite on the simulated cluster of make demo (real control plane, fake nodes).
	TRAINFORGE_TEST_BIN=$(BIN) TRAINFORGE_CLUSTER_BINARIES="$$(hack/cluster-binaries.sh)" go test -count=1 -timeout 30m ./test/e2e/... $(if $(GINKGO_FLAGS),-args $(GINKGO_FLAGS))

.PHONY: demo
demo: ## See it run: a simulated cluster (no Docker) where the example TrainJobs are gang-scheduled, run and complete, shown live until Ctrl-C.
	@mkdir -p $(BIN)
	@echo "Compiling the demo (the first time, Go downloads and compiles the Kubernetes libraries: a few minutes)..."
	@go build -o $(BIN)/demo ./hack/demo
	@$(BIN)/demo

# What `make generate` writes; verify-generate fails when it differs from git.
GENERATED := api config charts/trainforge/crds charts/trainforge/files proto $(DEEPSPEED)/gen test/crds

.PHONY: verify-generate
verify-generate: generate ## Fail when `make generate` changes a committed file.
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "make generate changed these files; run it and commit the result:"; \
		git status --porcelain -- $(GENERATED); git --no-pager diff -- $(GENERATED) | head -50; exit 1; fi
