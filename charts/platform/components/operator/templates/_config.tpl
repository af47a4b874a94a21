{{/* The OperatorConfiguration file (operator.config.dynamo.nvidia.com/v1alpha1), also hashed into the
     Deployment's checksum/config annotation so a change rolls the operator. */}}
{{- define "dynamo-operator.operatorConfiguration" -}}
apiVersion: operator.config.dynamo.nvidia.com/v1alpha1
kind: OperatorConfiguration
server:
  metrics:
    # loopback only: the metrics Service reaches the operator's authenticated listener on 8443
    bindAddress: 127.0.0.1
    port: 8080
    secure: {{ .Values.metricsService.secure }}
  healthProbe:
    bindAddress: 0.0.0.0
    port: 8081
  webhook:
    host: 0.0.0.0
    port: 9443
    certDir: /tmp/k8s-webhook-server/serving-certs
    certProvisionMode: {{ include "dynamo-operator.certProvisionMode" . }}
    secretName: {{ .Values.webhook.certificateSecret.name }}
    serviceName: {{ include "dynamo-operator.webhookServiceName" . }}
leaderElection:
  enabled: {{ .Values.controllerManager.leaderElection.enabled }}
  id: {{ include "dynamo-operator.leaderElectionID" . }}
  namespace: {{ include "dynamo-operator.leaderElectionNamespace" . }}
{{- if .Values.namespaceRestriction.enabled }}
namespace:
  restricted: {{ include "dynamo-operator.targetNamespace" . }}
  scope:
    leaseDuration: {{ .Values.namespaceRestriction.lease.duration }}
    leaseRenewInterval: {{ .Values.namespaceRestriction.lease.renewInterval }}
{{- end }}
orchestrators:
  grove:
    terminationDelay: {{ .Values.dynamo.groveTerminationDelay }}
infrastructure:
  {{- with include "dynamo-operator.natsAddress" . }}
  natsAddress: {{ . | quote }}
  {{- end }}
  {{- with include "dynamo-operator.etcdAddress" . }}
  etcdAddress: {{ . | quote }}
  {{- end }}
  {{- with .Values.modelExpressURL }}
  modelExpressURL: {{ . | quote }}
  {{- end }}
  {{- with .Values.dynamo.metrics.prometheusEndpoint }}
  prometheusEndpoint: {{ . | quote }}
  {{- end }}
  {{- with include "dynamo-operator.infrastructureCredentials" . }}
  {{- . | trim | nindent 2 }}
  {{- end }}
ingress:
  {{- if and .Values.dynamo.istio.enabled .Values.dynamo.istio.gateway }}
  virtualServiceGateway: {{ .Values.dynamo.istio.gateway | quote }}
  {{- end }}
  {{- if .Values.dynamo.ingress.enabled }}
  controllerClassName: {{ .Values.dynamo.ingress.className | default "" | quote }}
  controllerTLSSecretName: {{ .Values.dynamo.ingress.tlsSecretName | default "" | quote }}
  {{- end }}
  hostSuffix: {{ .Values.dynamo.ingressHostSuffix | quote }}
  virtualServiceSupportsHTTPS: {{ .Values.dynamo.virtualServiceSupportsHTTPS }}
  # the ingress policy on graph authors' own ingress (render/ingress_policy.py)
  allowedAnnotations: {{ .Values.dynamo.ingress.allowedAnnotations | default list | toJson }}
  allowedHostSuffixes: {{ .Values.dynamo.ingress.allowedHostSuffixes | default list | toJson }}
  allowedGateways: {{ .Values.dynamo.istio.allowedGateways | default list | toJson }}
{{- if not .Values.namespaceRestriction.enabled }}
rbac:
  plannerClusterRoleName: {{ include "dynamo-operator.plannerClusterRole" . }}
  dgdrProfilingClusterRoleName: {{ include "dynamo-operator.profilingClusterRole" . }}
  eppClusterRoleName: {{ include "dynamo-operator.eppClusterRole" . }}
  discoveryClusterRoleName: {{ include "dynamo-operator.discoveryClusterRole" . }}
{{- else }}
rbac:
  # the chart's discovery Role in the target namespace (workload-rbac.yaml): a restricted operator binds no ClusterRole
  discoveryRoleName: {{ include "dynamo-operator.discoveryRole" . }}
{{- end }}
mpi:
  sshSecretName: {{ .Values.dynamo.mpiRun.secretName }}
  sshSecretNamespace: {{ .Release.Namespace }}
  sshNetworkPolicy: {{ .Values.dynamo.mpiRun.networkPolicy.enabled }}
  sshSecretCopy: {{ eq (include "dynamo-operator.mpiSecretCopy" .) "true" }}
images:
  # the profiling Job's output-copier runs the operator's own image (digest included when pinned)
  operator: {{ include "dynamo-operator.image" . | quote }}
  {{- with .Values.dgdr.profilerImage }}
  # a DynamoGraphDeploymentRequest's profiler when it names none
  profiler: {{ . | quote }}
  {{- end }}
{{- with .Values.checkpoint }}
checkpoint:
  enabled: {{ .enabled }}
  cleanupImage: {{ .cleanupImage | quote }}
  storage:
    type: pvc
    pvc:
      pvcName: {{ .storage.pvc.pvcName | quote }}
      basePath: {{ .storage.pvc.basePath | quote }}
      create: {{ .storage.pvc.create }}
      {{- with .storage.pvc.size }}
      size: {{ . | quote }}
      {{- end }}
      {{- with .storage.pvc.storageClassName }}
      storageClassName: {{ . | quote }}
      {{- end }}
      {{- with .storage.pvc.accessMode }}
      accessMode: {{ . | quote }}
      {{- end }}
{{- end }}
discovery:
  backend: {{ .Values.discoveryBackend }}
gpu:
  {{- /* a restricted operator has no Nodes grant (_rbac.tpl): it never tries, requests name their hardware */}}
  discoveryEnabled: {{ and .Values.gpuDiscovery.enabled (not .Values.namespaceRestriction.enabled) }}
logging:
  level: {{ .Values.logging.level }}
  format: {{ .Values.logging.format }}
security:
  enableHTTP2: {{ .Values.security.enableHTTP2 }}
  workloads:
    restrictedSecurityContext: {{ .Values.dynamo.enableRestrictedSecurityContext }}
    podTemplates:
      {{- with .Values.dynamo.podTemplateChecks }}
      action: {{ .action | default "Warn" }}
      allow: {{ .allow | default list | toJson }}
      allowedCapabilities: {{ .allowedCapabilities | default list | toJson }}
      allowedServiceAccounts: {{ .allowedServiceAccounts | default list | toJson }}
      {{- end }}
    imagePullSecretDiscovery: {{ .Values.imagePullSecretDiscovery.enabled }}
{{- end -}}
