{{- define "etcd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}
{{/* Always <release>-etcd unless fullnameOverride: the operator derives the address from it. */}}
{{- define "etcd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "etcd.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- define "etcd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "etcd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: etcd
{{- end }}
{{- define "etcd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "etcd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: dynamo-platform
{{- end }}
{{- define "etcd.peerHost" -}}
{{- $root := index . 0 }}{{- $i := index . 1 -}}
{{ include "etcd.fullname" $root }}-{{ $i }}.{{ include "etcd.fullname" $root }}-headless.{{ $root.Release.Namespace }}.svc
{{- end }}
{{/* https when clients use TLS (auth.client.secureTransport). */}}
{{- define "etcd.clientScheme" -}}
{{- if .Values.auth.client.secureTransport }}https{{ else }}http{{ end }}
{{- end }}
{{- define "etcd.tlsSecret" -}}
{{- default (printf "%s-server-tls" (include "etcd.fullname" .)) .Values.auth.client.existingSecret }}
{{- end }}
{{- define "etcd.tlsDir" -}}/etc/etcd/tls{{- end }}
{{/* The image reference: repository:tag, where tag may carry a digest ("v3.5.21@sha256:..."). */}}
{{- define "etcd.image" -}}
{{- if not .Values.image.tag }}
{{- fail "etcd.image.tag is empty: name a version (e.g. v3.5.21), optionally with @sha256:<digest>; a floating image is refused" }}
{{- end }}
{{- printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end }}
{{- define "etcd.validate" -}}
{{- if ne .Values.auth.client.secureTransport .Values.auth.client.enableAuthentication }}
{{- fail "etcd.auth.client.secureTransport and etcd.auth.client.enableAuthentication go together: the Dynamo runtime connects to etcd over TLS only with a client certificate (ETCD_AUTH_CA/CLIENT_CERT/CLIENT_KEY), and client certificates need TLS. Set both to true, or both to false." }}
{{- end }}
{{- if and .Values.auth.rbac.create (not .Values.auth.client.enableAuthentication) }}
{{- fail "etcd.auth.rbac.create=true needs etcd.auth.client.secureTransport=true and enableAuthentication=true: each graph namespace's etcd user is the Common Name of its client certificate. Turn both on, or set etcd.auth.rbac.create=false (with dynamo-operator.etcdAuth.method=none for an etcd without authentication)." }}
{{- end }}
{{- if and .Values.auth.rbac.create .Values.auth.client.existingSecret }}
{{- fail "etcd.auth.client.existingSecret with etcd.auth.rbac.create=true: the operator signs each graph namespace's certificate with the CA etcd trusts, and your Secret holds no CA key. Leave existingSecret empty (the chart generates the CA), or set etcd.auth.rbac.create=false (one shared client certificate, dynamo-operator.etcdAuth.method=clientCertificate)." }}
{{- end }}
{{- end }}
