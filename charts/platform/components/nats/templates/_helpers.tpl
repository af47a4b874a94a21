{{- define "nats.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}
{{/* Always <release>-nats unless fullnameOverride: the operator derives the address from it. */}}
{{- define "nats.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "nats.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- define "nats.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nats.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: nats
{{- end }}
{{- define "nats.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "nats.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: dynamo-platform
{{- end }}
{{- define "nats.replicas" -}}
{{- if .Values.config.cluster.enabled }}{{ .Values.config.cluster.replicas }}{{ else }}1{{ end }}
{{- end }}
{{- define "nats.conf" -}}
{{- $c := .Values.config -}}
port: {{ $c.nats.port }}
{{- if $c.monitor.enabled }}
http_port: {{ $c.monitor.port }}
{{- end }}
server_name: $SERVER_NAME
pid_file: "/var/run/nats/nats.pid"
lame_duck_duration: "30s"
lame_duck_grace_period: "10s"
{{- if $c.jetstream.enabled }}
jetstream {
  {{- if $c.jetstream.fileStore.enabled }}
  store_dir: {{ $c.jetstream.fileStore.dir | quote }}
  max_file_store: {{ default $c.jetstream.fileStore.pvc.size $c.jetstream.fileStore.maxSize | replace "i" "" | replace "Gi" "G" | quote }}
  {{- else }}
  max_file_store: 0
  {{- end }}
  {{- if $c.jetstream.memoryStore.enabled }}
  max_memory_store: {{ $c.jetstream.memoryStore.maxSize | replace "i" "" | quote }}
  {{- else }}
  max_memory_store: 0
  {{- end }}
}
{{- end }}
{{- if $c.cluster.enabled }}
cluster {
  name: {{ include "nats.fullname" . | quote }}
  port: {{ $c.cluster.port }}
  no_advertise: true
  routes: [
    {{- range $i, $_ := until (int $c.cluster.replicas) }}
    "nats://{{ include "nats.fullname" $ }}-{{ $i }}.{{ include "nats.fullname" $ }}-headless:{{ $c.cluster.port }}",
    {{- end }}
  ]
}
{{- end }}
{{- range $k, $v := $c.merge }}
{{ $k }}: {{ toJson $v }}
{{- end }}
{{- end }}
