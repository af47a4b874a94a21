{{- define "grove.name" -}}
{{- default "grove-operator" .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "grove.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "grove.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- define "grove.selectorLabels" -}}
app.kubernetes.io/name: {{ include "grove.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
{{- define "grove.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "grove.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: dynamo-platform
{{- end }}
{{- define "grove.config" -}}
{{- $c := .Values.config -}}
apiVersion: operator.config.grove.io/v1alpha1
kind: OperatorConfiguration
leaderElection:
  enabled: {{ $c.leaderElection.enabled }}
  resourceLock: leases
  resourceName: grove-operator-leader-election
  resourceNamespace: {{ .Release.Namespace }}
server:
  webhooks:
    port: {{ $c.server.webhookPort }}
    serverCertDir: /etc/grove-operator/webhook-certs
    secretName: {{ include "grove.fullname" . }}-webhook-cert
    certProvisionMode: auto
  healthProbes:
    port: {{ $c.server.healthProbePort }}
  metrics:
    port: {{ $c.server.metricsPort }}
controllers:
  podCliqueSet:
    concurrentSyncs: {{ $c.controllers.podCliqueSetConcurrentSyncs }}
  podClique:
    concurrentSyncs: {{ $c.controllers.podCliqueConcurrentSyncs }}
  podCliqueScalingGroup:
    concurrentSyncs: {{ $c.controllers.podCliqueScalingGroupConcurrentSyncs }}
logLevel: {{ $c.logLevel }}
logFormat: {{ $c.logFormat }}
{{- end }}
