# The controller's image: trainforge-controller, and trainforge-builtin-plugin
# for a built-in plugin run out of process (the chart's child-process mode:
# plugins.<Name>.command: /usr/local/bin/trainforge-builtin-plugin).
#
#   docker build -t ghcr.io/trainforge/trainforge-controller:v0.1.0 .
#
# Static binaries (CGO_ENABLED=0) on distroless static, as user 65532
# (nonroot): no shell, no package manager, nothing to run but these.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o /out/ \
      ./cmd/trainforge-controller ./cmd/trainforge-builtin-plugin

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/trainforge-controller /out/trainforge-builtin-plugin /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/trainforge-controller"]
