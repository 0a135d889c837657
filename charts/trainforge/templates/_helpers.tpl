{{/* The prefix of every name: the release name when it says trainforge, else <release>-trainforge. */}}
{{- define "trainforge.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "trainforge.controllerName" -}}{{ include "trainforge.fullname" . }}-controller{{- end -}}
{{- define "trainforge.configMapName" -}}{{ include "trainforge.fullname" . }}-controller-config{{- end -}}
{{- define "trainforge.webhookServiceName" -}}{{ include "trainforge.fullname" . }}-webhook-service{{- end -}}
{{- define "trainforge.webhookSecretName" -}}{{ include "trainforge.fullname" . }}-webhook-server-cert{{- end -}}
{{- define "trainforge.webhookConfigurationName" -}}{{ include "trainforge.fullname" . }}-validating-webhook-configuration{{- end -}}

{{- define "trainforge.labels" -}}
app.kubernetes.io/name: trainforge
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "trainforge.selectorLabels" -}}
app.kubernetes.io/name: trainforge
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{/* Where the plugin sidecars serve, a shared emptyDir. */}}
{{- define "trainforge.socketDir" -}}/var/run/trainforge/plugins{{- end -}}

{{/*
The enabled plugins' names as a JSON list, sorted by order, then name.
Every entry is checked here, so that a mistake fails the render with a
message that names the plugin.
*/}}
{{- define "trainforge.pluginOrder" -}}
{{- $keys := list -}}
{{- range $name, $p := .Values.plugins -}}
{{- if not (kindIs "map" $p) -}}
{{- fail (printf "plugins.%s must be a map with at least enabled: true or false" $name) -}}
{{- end -}}
{{- if $p.enabled -}}
{{- $order := int (default 0 $p.order) -}}
{{- if lt $order 0 -}}{{- fail (printf "plugins.%s.order must be >= 0, not %d" $name $order) -}}{{- end -}}
{{- $lower := lower $name -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$" $lower) -}}
{{- fail (printf "plugins.%s: the name must be letters, digits and dashes (it names the sidecar container plugin-%s and its socket)" $name $lower) -}}
{{- end -}}
{{- $image := "" -}}{{- if $p.image -}}{{- $image = $p.image.repository -}}{{- end -}}
{{- if $p.wasm -}}
{{- include "trainforge.checkWasm" (dict "name" $name "p" $p) -}}
{{- $image = "" -}}
{{- end -}}
{{- if and $image $p.command -}}
{{- fail (printf "plugins.%s sets both image.repository (a sidecar) and command (a child process of the controller): choose one" $name) -}}
{{- end -}}
{{- if and $p.sha256 (not $p.command) (not $p.wasm) -}}
{{- fail (printf "plugins.%s.sha256 is checked before the controller starts command or compiles wasm; it needs one of them" $name) -}}
{{- end -}}
{{- if and (not $image) (not $p.command) (not $p.wasm) (or $p.commandArgs $p.startTimeout $p.callTimeout) -}}
{{- fail (printf "plugins.%s sets commandArgs, startTimeout or callTimeout, which only an external (image or command) or wasm plugin has" $name) -}}
{{- end -}}
{{- if and $p.failurePolicy (not (has $p.failurePolicy (list "Fail" "Ignore"))) -}}
{{- fail (printf "plugins.%s.failurePolicy must be Fail or Ignore, not %s" $name $p.failurePolicy) -}}
{{- end -}}
{{- $keys = append $keys (printf "%010d %s" $order $name) -}}
{{- end -}}
{{- end -}}
{{- $names := list -}}
{{- range $k := sortAlpha $keys -}}
{{- $names = append $names (index (splitList " " $k) 1) -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/*
Checks the wasm entry of plugin .name: the module from a ConfigMap or an
image volume (one of them), its checksum, and no command beside it.
*/}}
{{- define "trainforge.checkWasm" -}}
{{- $name := .name -}}{{- $w := .p.wasm -}}
{{- if not (kindIs "map" $w) -}}
{{- fail (printf "plugins.%s.wasm must be a map: {configMap: <name>} or {image: {repository: ...}}, with sha256 beside it" $name) -}}
{{- end -}}
{{- $fromImage := and $w.image $w.image.repository -}}
{{- if eq (not $w.configMap) (not $fromImage) -}}
{{- fail (printf "plugins.%s.wasm takes its module from exactly one of configMap (a ConfigMap's name) and image.repository (an OCI image volume)" $name) -}}
{{- end -}}
{{- if .p.command -}}
{{- fail (printf "plugins.%s sets both wasm (in the controller's process) and command (a child process of the controller): choose one" $name) -}}
{{- end -}}
{{- if not (regexMatch "^[0-9a-fA-F]{64}$" (toString (default "" .p.sha256))) -}}
{{- fail (printf "plugins.%s.sha256 must be the module's hex SHA-256, 64 digits (sha256sum <file>.wasm): the controller checks it before it compiles the module" $name) -}}
{{- end -}}
{{- end -}}

{{/* The emptyDir of the wasm modules' machine code (wasmCache). */}}
{{- define "trainforge.wasmCacheDir" -}}/var/cache/trainforge/wasm{{- end -}}

{{/* Where the wasm modules are mounted in the manager, one directory per plugin. */}}
{{- define "trainforge.wasmDir" -}}/var/lib/trainforge/wasm{{- end -}}

{{/* The file of plugin .name's module inside its volume: wasm.file, else <name in lower case>.wasm. */}}
{{- define "trainforge.wasmFile" -}}
{{- default (printf "%s.wasm" (lower .name)) .p.wasm.file -}}
{{- end -}}

{{/* The image of a plugin sidecar. */}}
{{- define "trainforge.pluginImage" -}}
{{- $p := .plugin -}}
{{- printf "%s:%s" $p.image.repository (default .root.Chart.AppVersion $p.image.tag) -}}
{{- end -}}

{{/* The configuration file (config.trainforge.dev/v1alpha1 Configuration). */}}
{{- define "trainforge.config" -}}
{{- $plugins := list -}}
{{- $anyWasm := false -}}
{{- range $name := include "trainforge.pluginOrder" . | fromJsonArray -}}
{{- $p := index $.Values.plugins $name -}}
{{- $e := dict "name" $name -}}
{{- with $p.failurePolicy -}}{{- $_ := set $e "failurePolicy" . -}}{{- end -}}
{{- if not (kindIs "invalid" $p.args) -}}{{- $_ := set $e "args" $p.args -}}{{- end -}}
{{- $ext := dict -}}
{{- if $p.wasm -}}
{{- $w := dict "module" (printf "%s/%s/%s" (include "trainforge.wasmDir" $) (lower $name) (include "trainforge.wasmFile" (dict "name" $name "p" $p))) "sha256" (lower $p.sha256) -}}
{{- with $p.commandArgs -}}{{- $_ := set $w "args" . -}}{{- end -}}
{{- with $p.startTimeout -}}{{- $_ := set $w "startTimeout" . -}}{{- end -}}
{{- with $p.callTimeout -}}{{- $_ := set $w "callTimeout" . -}}{{- end -}}
{{- with $p.wasm.memoryLimit -}}{{- $_ := set $w "memoryLimit" . -}}{{- end -}}
{{- with $p.wasm.maxInstances -}}{{- $_ := set $w "maxInstances" (int .) -}}{{- end -}}
{{- $_ := set $e "wasm" $w -}}
{{- $anyWasm = true -}}
{{- else if and $p.image $p.image.repository -}}
{{- $_ := set $ext "socket" (printf "%s/%s.sock" (include "trainforge.socketDir" $) (lower $name)) -}}
{{- else if $p.command -}}
{{- $_ := set $ext "command" $p.command -}}
{{- with $p.commandArgs -}}{{- $_ := set $ext "args" . -}}{{- end -}}
{{- with $p.sha256 -}}{{- $_ := set $ext "sha256" . -}}{{- end -}}
{{- with $p.env -}}{{- $_ := set $ext "env" . -}}{{- end -}}
{{- end -}}
{{- if $ext -}}
{{- with $p.startTimeout -}}{{- $_ := set $ext "startTimeout" . -}}{{- end -}}
{{- with $p.callTimeout -}}{{- $_ := set $ext "callTimeout" . -}}{{- end -}}
{{- $_ := set $e "external" $ext -}}
{{- end -}}
{{- $plugins = append $plugins $e -}}
{{- end -}}
{{- $pluginHost := dict "socketDir" (include "trainforge.socketDir" .) -}}
{{- if and $anyWasm .Values.wasmCache.enabled -}}
{{- $_ := set $pluginHost "wasmCacheDir" (include "trainforge.wasmCacheDir" .) -}}
{{- end -}}
{{- $leaseName := default (printf "%s.trainforge.dev" (include "trainforge.controllerName" .)) .Values.leaderElection.resourceName -}}
{{- $certs := dict
      "namespace" .Release.Namespace
      "webhookServiceName" (include "trainforge.webhookServiceName" .)
      "webhookSecretName" (include "trainforge.webhookSecretName" .)
      "validatingWebhookConfigurationName" (include "trainforge.webhookConfigurationName" .) -}}
{{- with .Values.webhook.extraDNSNames -}}{{- $_ := set $certs "extraDNSNames" . -}}{{- end -}}
{{- $metrics := "0" -}}
{{- if .Values.metrics.port -}}{{- $metrics = printf ":%d" (int .Values.metrics.port) -}}{{- end -}}
{{- $own := dict
      "apiVersion" "config.trainforge.dev/v1alpha1"
      "kind" "Configuration"
      "plugins" $plugins
      "pluginHost" $pluginHost
      "metrics" (dict "bindAddress" $metrics "perTrainJob" .Values.metrics.perTrainJob)
      "health" (dict "healthProbeBindAddress" (printf ":%d" (int .Values.health.port)))
      "leaderElection" (dict "leaderElect" .Values.leaderElection.enabled "resourceNamespace" .Release.Namespace "resourceName" $leaseName)
      "webhook" (dict "port" (int .Values.webhook.port) "certDir" "/tmp/k8s-webhook-server/serving-certs" "certManagement" $certs)
      "statusServer" (dict "enable" .Values.statusServer.enabled "port" (int .Values.statusServer.port) "minUpdateInterval" .Values.statusServer.minUpdateInterval) -}}
{{- range $k := list "apiVersion" "kind" "plugins" "metrics" "health" "leaderElection" "webhook" "statusServer" -}}
{{- if hasKey $.Values.extraConfig $k -}}
{{- fail (printf "extraConfig.%s: the chart writes %s from its own values (see values.yaml)" $k $k) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.extraConfig.pluginHost (hasKey .Values.extraConfig.pluginHost "socketDir") -}}
{{- fail "extraConfig.pluginHost.socketDir: the chart sets it to the plugin sockets' emptyDir" -}}
{{- end -}}
{{- if and .Values.extraConfig.pluginHost (hasKey .Values.extraConfig.pluginHost "wasmCacheDir") -}}
{{- fail "extraConfig.pluginHost.wasmCacheDir: the chart sets it to an emptyDir of its own (wasmCache.enabled); the root filesystem is read-only" -}}
{{- end -}}
{{- toYaml (merge $own (deepCopy .Values.extraConfig)) -}}
{{- end -}}
