# The WebAssembly module of one vendor plugin, as an OCI image to mount as
# an image volume of the controller's pod (charts/trainforge:
# plugins.<Name>.wasm.image; config/wasm-plugins). It holds one file,
# /trainforge-plugin-<PLUGIN>.wasm, and nothing to run: the controller
# compiles the module in its own process, after checking its sha256.
#
#   docker build -f plugins/wasm.Dockerfile --build-arg PLUGIN=mpi \
#     -t ghcr.io/trainforge/trainforge-plugin-mpi-wasm:v0.1.0 .
#
# The sum to put in the configuration (wasm.sha256), of the same build:
#   docker build -f plugins/wasm.Dockerfile --build-arg PLUGIN=mpi -o out . &&
#     sha256sum out/trainforge-plugin-mpi.wasm
FROM golang:1.26 AS build
ARG PLUGIN
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN test -n "$PLUGIN" && GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags='-s -w' -buildmode=c-shared \
      -o /out/trainforge-plugin-${PLUGIN}.wasm ./cmd/trainforge-plugin-${PLUGIN}

FROM scratch
COPY --from=build /out/ /
