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
{{/* Secret holding the client credentials (auth.existingSecret or the generated one). */}}
{{- define "nats.authSecret" -}}
{{- default (printf "%s-client" (include "nats.fullname" .)) .Values.auth.existingSecret }}
{{- end }}
{{/* Secret holding the server certificate (config.nats.tls.secretName or the generated one). */}}
{{- define "nats.tlsSecret" -}}
{{- default (printf "%s-server-tls" (include "nats.fullname" .)) .Values.config.nats.tls.secretName }}
{{- end }}
{{- define "nats.tlsDir" -}}/etc/nats-tls{{- end }}
{{/* auth.method accounts: each graph namespace its own account and operator-issued certificate. */}}
{{- define "nats.accounts" -}}
{{- if and .Values.auth.enabled (eq .Values.auth.method "accounts") }}true{{ end }}
{{- end }}
{{/* The operator's: the NATS CA with its key (it signs each namespace's certificate). */}}
{{- define "nats.adminSecret" -}}
{{- printf "%s-admin" (include "nats.fullname" .) }}
{{- end }}
{{/* The accounts file the operator keeps (one account per graph namespace), included by nats.conf. */}}
{{- define "nats.accountsConfigMap" -}}
{{- printf "%s-accounts" (include "nats.fullname" .) }}
{{- end }}
{{/* The server certificate: TLS on (config.nats.tls), or the accounts mode's own. */}}
{{- define "nats.tls" -}}
{{- if or .Values.config.nats.tls.enabled (include "nats.accounts" .) }}true{{ end }}
{{- end }}
{{- define "nats.validate" -}}
{{- if and .Values.auth.enabled (not (has .Values.auth.method (list "accounts" "userPassword" "token"))) }}
{{- fail (printf "nats.auth.method=%q: use accounts (the default), userPassword or token (the bundled NATS has no JWT/NKEY operator mode; point dynamo-operator.natsAddr at a NATS that does)" .Values.auth.method) }}
{{- end }}
{{- if and (include "nats.accounts" .) .Values.config.nats.tls.enabled }}
{{- fail "nats.auth.method=accounts brings its own TLS (a CA of the chart's, mutual TLS mapping each certificate to its namespace's account): set nats.config.nats.tls.enabled=false, or choose nats.auth.method=userPassword or token to use your own TLS settings" }}
{{- end }}
{{- if and (include "nats.accounts" .) .Values.auth.existingSecret }}
{{- fail "nats.auth.existingSecret is for userPassword/token: with nats.auth.method=accounts the operator issues each namespace its own certificate; clear existingSecret" }}
{{- end }}
{{- if and .Values.config.nats.tls.verifyClients (not .Values.config.nats.tls.enabled) }}
{{- fail "nats.config.nats.tls.verifyClients=true needs TLS: set nats.config.nats.tls.enabled=true too" }}
{{- end }}
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
{{- if include "nats.accounts" . }}
# per-namespace accounts: the client certificate's subject (CN=ns:<namespace>) is the user, of its
# namespace's account; the Dynamo operator keeps the accounts file (the reloader SIGHUPs the server)
tls {
  cert_file: "{{ include "nats.tlsDir" . }}/tls.crt"
  key_file: "{{ include "nats.tlsDir" . }}/tls.key"
  ca_file: "{{ include "nats.tlsDir" . }}/ca.crt"
  verify: true
  verify_and_map: true
}
system_account: SYS
include accounts.conf
{{- else if .Values.auth.enabled }}
# credentials from the Secret through the environment (nats-server resolves $NAMES there)
authorization {
  {{- if eq .Values.auth.method "token" }}
  token: $NATS_AUTH_TOKEN
  {{- else }}
  user: $NATS_AUTH_USERNAME
  password: $NATS_AUTH_PASSWORD
  {{- end }}
}
{{- end }}
{{- if $c.nats.tls.enabled }}
tls {
  cert_file: "{{ include "nats.tlsDir" . }}/tls.crt"
  key_file: "{{ include "nats.tlsDir" . }}/tls.key"
  ca_file: "{{ include "nats.tlsDir" . }}/ca.crt"
  verify: {{ $c.nats.tls.verifyClients }}
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
{{/* The accounts file before any graph: the system account alone (render/natsaccess.py accounts_conf([])). */}}
{{- define "nats.initialAccounts" -}}
# written by the Dynamo operator (render/natsaccess.py): one account per graph namespace
accounts: {
  SYS: {}
}
{{- end }}
