{{/* Chart name. */}}
{{- define "dynamo-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-dynamo-operator, or the release name when it already contains the chart name. */}}
{{- define "dynamo-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Prefix of cluster-scoped objects: unique per release and namespace. */}}
{{- define "dynamo-operator.clusterName" -}}
{{- printf "%s-%s" (include "dynamo-operator.fullname" .) .Release.Namespace | trunc 200 | trimSuffix "-" }}
{{- end }}

{{- define "dynamo-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dynamo-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dynamo-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end }}

{{- define "dynamo-operator.labels" -}}
helm.sh/chart: {{ include "dynamo-operator.chart" . }}
{{ include "dynamo-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: dynamo-operator
{{- end }}

{{- define "dynamo-operator.serviceAccountName" -}}
{{- printf "%s-controller-manager" (include "dynamo-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dynamo-operator.image" -}}
{{- $img := .Values.controllerManager.manager.image -}}
{{- printf "%s:%s" $img.repository (default .Chart.AppVersion $img.tag) }}
{{- end }}

{{/* The namespace the operator manages in restricted mode. */}}
{{- define "dynamo-operator.targetNamespace" -}}
{{- default .Release.Namespace .Values.namespaceRestriction.targetNamespace }}
{{- end }}

{{/* "true" when the operator copies the MPI SSH Secret into graph namespaces (mpi-secret-rbac.yaml,
     configuration mpi.sshSecretCopy): dynamo.mpiRun.copyToGraphNamespaces, unless the operator manages only
     the release namespace itself (restricted to it), where every graph mounts the original. */}}
{{- define "dynamo-operator.mpiSecretCopy" -}}
{{- $r := .Values.namespaceRestriction }}
{{- if and .Values.dynamo.mpiRun.copyToGraphNamespaces (or (not $r.enabled) (ne (include "dynamo-operator.targetNamespace" .) .Release.Namespace)) }}true{{ end }}
{{- end }}

{{- define "dynamo-operator.restricted" -}}
{{- if .Values.namespaceRestriction.enabled }}true{{ end }}
{{- end }}

{{/* Webhook Service name: fixed by contract (the operator and the hooks use it). */}}
{{- define "dynamo-operator.webhookServiceName" -}}
dynamo-operator-webhook-service
{{- end }}

{{- define "dynamo-operator.leaderElectionID" -}}
{{- default "dynamo.nvidia.com" .Values.controllerManager.leaderElection.id }}
{{- end }}

{{- define "dynamo-operator.leaderElectionNamespace" -}}
{{- if .Values.namespaceRestriction.enabled }}
{{- include "dynamo-operator.targetNamespace" . }}
{{- else }}
{{- default "kube-system" .Values.controllerManager.leaderElection.namespace }}
{{- end }}
{{- end }}

{{/* NATS / etcd addresses: natsAddr / etcdAddr when set, else the bundled subchart's Service when the
     umbrella chart installs it (`bundled.nats` / `bundled.etcd`, imported from the enabled subcharts
     through Chart.yaml `import-values`), else empty: the operator then injects no NATS_SERVER /
     ETCD_ENDPOINTS, which is right with Kubernetes discovery. */}}
{{- define "dynamo-operator.natsAddress" -}}
{{- if .Values.natsAddr }}
{{- .Values.natsAddr }}
{{- else if (.Values.bundled | default dict).nats }}
{{- printf "nats://%s-nats.%s.svc.%s:4222" .Release.Name .Release.Namespace .Values.kubernetesClusterDomain }}
{{- end }}
{{- end }}

{{- define "dynamo-operator.etcdAddress" -}}
{{- if .Values.etcdAddr }}
{{- .Values.etcdAddr }}
{{- else if (.Values.bundled | default dict).etcd }}
{{- printf "%s://%s-etcd.%s.svc.%s:2379" (include "dynamo-operator.bundledEtcdScheme" .) .Release.Name .Release.Namespace .Values.kubernetesClusterDomain }}
{{- end }}
{{- end }}

{{/* The metrics port (container and Service, 8443): `https` when secured, as upstream names it. */}}
{{- define "dynamo-operator.metricsPortName" -}}
{{- if .Values.metricsService.secure }}https{{ else }}http-metrics{{ end }}
{{- end }}

{{/* Certificate provisioning mode written to the OperatorConfiguration. */}}
{{- define "dynamo-operator.certProvisionMode" -}}
{{- if eq .Values.webhook.certificateMode "auto" }}auto{{ else }}manual{{ end }}
{{- end }}

{{- define "dynamo-operator.plannerClusterRole" -}}
{{ include "dynamo-operator.clusterName" . }}-planner
{{- end }}
{{- define "dynamo-operator.eppClusterRole" -}}
{{ include "dynamo-operator.clusterName" . }}-epp
{{- end }}
{{- define "dynamo-operator.profilingClusterRole" -}}
{{ include "dynamo-operator.clusterName" . }}-dgdr-profiling
{{- end }}
{{- define "dynamo-operator.discoveryClusterRole" -}}
{{ include "dynamo-operator.clusterName" . }}-discovery
{{- end }}
{{/* Namespace-restricted mode: the discovery rules as a Role in the target namespace (workload-rbac.yaml). */}}
{{- define "dynamo-operator.discoveryRole" -}}
{{ include "dynamo-operator.fullname" . }}-discovery
{{- end }}
{{- define "dynamo-operator.validatingName" -}}
{{ include "dynamo-operator.clusterName" . }}-validating
{{- end }}
{{- define "dynamo-operator.mutatingName" -}}
{{ include "dynamo-operator.clusterName" . }}-mutating
{{- end }}

{{- define "dynamo-operator.regcredName" -}}
{{- if .Values.dynamo.dockerRegistry.existingSecretName }}
{{- .Values.dynamo.dockerRegistry.existingSecretName }}
{{- else }}
{{- printf "%s-regcred" (include "dynamo-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Scheduling of the operator pod, shared by the install hook Jobs. */}}
{{- define "dynamo-operator.scheduling" -}}
{{- with .Values.controllerManager.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.controllerManager.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.controllerManager.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Render-time validation, included by the Deployment. */}}
{{- define "dynamo-operator.validate" -}}
{{- if and (not .Values.namespaceRestriction.enabled) .Values.controllerManager.leaderElection.id (ne .Values.controllerManager.leaderElection.id "dynamo.nvidia.com") }}
{{- fail (printf "controllerManager.leaderElection.id=%q: every cluster-wide Dynamo operator must use the SAME leader election ID (dynamo.nvidia.com), otherwise two operators lead at once (split-brain). Leave it empty." .Values.controllerManager.leaderElection.id) }}
{{- end }}
{{- if and .Values.dynamo.dockerRegistry.useKubernetesSecret (not .Values.dynamo.dockerRegistry.existingSecretName) (not (and .Values.dynamo.dockerRegistry.server .Values.dynamo.dockerRegistry.password)) }}
{{- fail "dynamo.dockerRegistry.useKubernetesSecret=true needs dynamo.dockerRegistry.existingSecretName, or server, username and password" }}
{{- end }}
{{- /* Values of the upstream chart this operator has no use for: the seed's default is accepted, a
     choice is refused (nothing would act on it). */}}
{{- if not .Values.dynamo.dockerRegistry.secure }}
{{- fail "dynamo.dockerRegistry.secure=false is not supported: this operator pulls and pushes no images itself (it builds none), so it has no registry connection to make insecure. An HTTP registry is configured in the nodes' container runtime (containerd registry hosts); remove the value." }}
{{- end }}
{{- if and .Values.natsAddr (not (regexMatch "^(nats|tls)://[^/]+$" .Values.natsAddr)) }}
{{- fail (printf "natsAddr=%q must look like nats://host:port" .Values.natsAddr) }}
{{- end }}
{{- if and .Values.etcdAddr (not (regexMatch "^https?://[^/]+(,https?://[^/]+)*$" .Values.etcdAddr)) }}
{{- fail (printf "etcdAddr=%q must look like http://host:port or https://host:port" .Values.etcdAddr) }}
{{- end }}
{{- if and (eq .Values.discoveryBackend "etcd") (not (include "dynamo-operator.etcdAddress" .)) }}
{{- fail "discoveryBackend=etcd needs etcd, but there is none: keep the bundled etcd (etcd.enabled=true), set etcdAddr=http://host:2379, or use discoveryBackend=kubernetes (the default), which needs neither NATS nor etcd." }}
{{- end }}
{{- if .Values.metricsService.enabled }}
{{- range .Values.controllerManager.manager.args }}
{{- if hasPrefix "--metrics-bind-address=" . }}
{{- $host := (trimPrefix "--metrics-bind-address=" .) | splitList ":" | first }}
{{- if not (or (eq $host "localhost") (hasPrefix "127." $host) (eq . "--metrics-bind-address=0")) }}
{{- fail (printf "controllerManager.manager.args has %s: with metricsService.enabled the metrics Service reaches the operator's authenticated listener on 8443, so the plain listener must stay on loopback. Use --metrics-bind-address=127.0.0.1:8080 (the default)." .) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (eq .Values.webhook.certificateMode "cert-manager") .Values.webhook.clientConfigURL }}
{{- fail "webhook.clientConfigURL is for an operator outside the cluster; cert-manager certificates name the in-cluster Service. Use certificateMode auto or manual with it." }}
{{- end }}
{{- end }}

{{/* The metrics Service's name: in the serving certificate's SANs (the operator reads it from
     METRICS_SERVICE_NAME) and the ServiceMonitor's serverName. */}}
{{- define "dynamo-operator.metricsServiceName" -}}
{{ include "dynamo-operator.fullname" . }}-metrics
{{- end }}

{{/* Operator replicas: the value when set; else 2 in cluster-wide mode (both serve the webhooks, which
     fail closed, so one may be drained or restarted while the other serves; one leads the controllers)
     and 1 in namespace-restricted mode (its namespace-scope marker Lease has a single holder). */}}
{{- define "dynamo-operator.replicas" -}}
{{- $r := .Values.controllerManager.replicas }}
{{- if kindIs "invalid" $r }}{{ ternary 1 2 .Values.namespaceRestriction.enabled }}{{ else }}{{ int $r }}{{ end }}
{{- end }}

{{/* Render-time validation of the replica count, included by the Deployment. */}}
{{- define "dynamo-operator.validateReplicas" -}}
{{- $replicas := int (include "dynamo-operator.replicas" .) }}
{{- if and (gt $replicas 1) .Values.namespaceRestriction.enabled }}
{{- fail (printf "controllerManager.replicas=%d: a namespace-restricted operator runs one replica (its namespace-scope marker Lease has one holder, and a replica stopping deletes it, handing the namespace to the cluster-wide operator meanwhile). Set controllerManager.replicas to 1 or leave it empty." $replicas) }}
{{- end }}
{{- if and (gt $replicas 1) (not .Values.controllerManager.leaderElection.enabled) }}
{{- fail (printf "controllerManager.replicas=%d needs controllerManager.leaderElection.enabled=true: without it every replica runs the controllers. Enable leader election or set controllerManager.replicas to 1." $replicas) }}
{{- end }}
{{- end }}

{{/* Values accepted although nothing here acts on them (the rule for inputs, docs/api-coverage.md:
     upstream accepts them, so an install written for upstream must not fail), one warning line each.
     The argument is the operator chart's values: its own NOTES.txt passes .Values, the umbrella's passes
     its dynamo-operator table, so both print the same text. */}}
{{- define "dynamo-operator.valueWarnings" -}}
{{- $debugger := .dynamo.internalImages.debugger }}
{{- if not (has $debugger (list "python:3.12-slim" "" nil)) }}
WARNING: dynamo.internalImages.debugger={{ $debugger }} is accepted but has no effect: this operator
  starts no debugger containers, so nothing runs the image. To debug a component's pod, run
  kubectl debug -it <pod> --image={{ $debugger }} --target=main
{{- end }}
{{- end -}}
