{{- define "dynamo-platform.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The operator subchart's full name (same rule as dynamo-operator.fullname). */}}
{{- define "dynamo-platform.operatorFullname" -}}
{{- $op := index .Values "dynamo-operator" }}
{{- if $op.fullnameOverride }}
{{- $op.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default "dynamo-operator" $op.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}
