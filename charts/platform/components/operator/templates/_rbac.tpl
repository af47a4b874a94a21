{{/*
Operator RBAC rules. Each rule names the reconciler (or runtime part) that needs it; keep them in step
with the operator's code (operator/dynamo_operator). Namespaced rules are granted cluster-wide by a
ClusterRole, or in the target namespace by a Role in namespace-restricted mode.
*/}}
{{- define "dynamo-operator.namespacedRules" -}}
# All Dynamo reconcilers (DGD, DCD, DGDR, DGDSA, DynamoModel, DynamoCheckpoint) watch and write their
# own kinds; DGD creates DCDs and DGDSAs, DGDR creates DGDs; workers publish DynamoWorkerMetadata.
- apiGroups: ["nvidia.com"]
  resources:
    - dynamographdeployments
    - dynamocomponentdeployments
    - dynamographdeploymentrequests
    - dynamographdeploymentscalingadapters
    - dynamomodels
    - dynamocheckpoints
    - dynamoworkermetadatas
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# Same reconcilers: status conditions.
- apiGroups: ["nvidia.com"]
  resources:
    - dynamographdeployments/status
    - dynamocomponentdeployments/status
    - dynamographdeploymentrequests/status
    - dynamographdeploymentscalingadapters/status
    - dynamomodels/status
    - dynamocheckpoints/status
  verbs: ["get", "update", "patch"]
# Same reconcilers: cleanup finalizers (ownerReferences with blockOwnerDeletion need this too).
- apiGroups: ["nvidia.com"]
  resources:
    - dynamographdeployments/finalizers
    - dynamocomponentdeployments/finalizers
    - dynamographdeploymentrequests/finalizers
    - dynamographdeploymentscalingadapters/finalizers
    - dynamomodels/finalizers
    - dynamocheckpoints/finalizers
  verbs: ["update"]
# DGDSA reconciler: the /scale subresource HPA, KEDA and the planner write through.
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeploymentscalingadapters/scale"]
  verbs: ["get", "update", "patch"]
# DCD reconciler: single-node components run as Deployments.
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DCD and DGD reconcilers: component and frontend Services.
- apiGroups: [""]
  resources: ["services"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DGDR (profiling output, planner profile data), DGD (EPP config, multinode leader script) and the
# DynamoModel reconciler.
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# MPI SSH key manager (create and replicate the key), image-pull-secret index (watches
# dockerconfigjson Secrets) and the webhook certificate controller (auto mode). No delete.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list", "watch", "create", "update", "patch"]
# DGD reconciler: planner-serviceaccount, epp-serviceaccount and discovery ServiceAccounts.
- apiGroups: [""]
  resources: ["serviceaccounts"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# Resource counter (managed pod metrics), DCD status (ready replicas) and restarts.
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "delete"]
# DGD reconciler (controllers/pvc.py): the claims of v1alpha1 spec.pvcs with create: true, created when
# missing and grown (patch) when their size grows; list/watch for its label-selected cache. Never
# deleted (their data outlives the graph), so no delete/update.
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "list", "watch", "create", "patch"]
# Every reconciler records Events.
- apiGroups: ["", "events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
# DGDR reconciler: profiling Jobs; DynamoCheckpoint reconciler: checkpoint and cleanup Jobs.
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DGDSA reconciler: HorizontalPodAutoscalers.
- apiGroups: ["autoscaling"]
  resources: ["horizontalpodautoscalers"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DCD reconciler (and the DGD reconciler on the Grove pathway): component Ingresses (render/ingress.py:
# a component's ingress, the configuration's ingress.* / dynamo.ingress.*); list/watch for the
# label-selected cache every operator starts (networking.k8s.io/v1 is always served).
- apiGroups: ["networking.k8s.io"]
  resources: ["ingresses"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# Same reconcilers: component VirtualServices (useVirtualService, dynamo.istio.gateway), cached and
# written only when networking.istio.io is served.
- apiGroups: ["networking.istio.io"]
  resources: ["virtualservices"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# EPP DestinationRules (service mesh).
- apiGroups: ["networking.istio.io"]
  resources: ["destinationrules"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DGD reconciler, Grove pathway: PodCliqueSets it owns ...
- apiGroups: ["grove.io"]
  resources: ["podcliquesets"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# ... and the cliques and scaling groups Grove creates (status and scaling).
- apiGroups: ["grove.io"]
  resources: ["podcliques", "podcliquescalinggroups"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["grove.io"]
  resources: ["podcliques/scale", "podcliquescalinggroups/scale"]
  verbs: ["get", "update", "patch"]
# DGD reconciler, LWS pathway: LeaderWorkerSets for multinode components.
- apiGroups: ["leaderworkerset.x-k8s.io"]
  resources: ["leaderworkersets"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DGD reconciler, LWS + Volcano pathway: gang PodGroups.
- apiGroups: ["scheduling.volcano.sh"]
  resources: ["podgroups"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DGD reconciler: InferencePools of EPP components.
- apiGroups: ["inference.networking.k8s.io"]
  resources: ["inferencepools"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DCD reconciler: DRA ResourceClaimTemplates (GPU memory service failover).
- apiGroups: ["resource.k8s.io"]
  resources: ["resourceclaimtemplates"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
# DGD reconciler (Kubernetes discovery backend): reads EndpointSlices of components.
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["get", "list", "watch"]
# DGD reconciler (Kubernetes discovery backend): per-graph discovery Role and RoleBinding, and the
# RoleBindings of planner-serviceaccount / epp-serviceaccount / dgdr-profiling-job.
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["roles", "rolebindings"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
{{- end }}

{{/* Cluster-scoped rules, granted by a ClusterRole in both modes. */}}
{{- define "dynamo-operator.clusterScopedRules" -}}
# Metrics endpoint authentication and authorization (secure serving).
- apiGroups: ["authentication.k8s.io"]
  resources: ["tokenreviews"]
  verbs: ["create"]
- apiGroups: ["authorization.k8s.io"]
  resources: ["subjectaccessreviews"]
  verbs: ["create"]
# Webhook certificate controller: finds its webhook configurations by label ...
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]
  verbs: ["get", "list", "watch"]
# ... and patches the caBundle of this release's two configurations only.
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]
  resourceNames:
    - {{ include "dynamo-operator.validatingName" . }}
    - {{ include "dynamo-operator.mutatingName" . }}
  verbs: ["update", "patch"]
{{- if or (not .Values.namespaceRestriction.enabled) .Values.gpuDiscovery.enabled }}
# GPU discovery (node allocatable nvidia.com/gpu and GPU product labels).
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get", "list", "watch"]
{{- end }}
# Kai-scheduler integration: checks the queue named by nvidia.com/kai-scheduler-queue exists.
- apiGroups: ["scheduling.run.ai"]
  resources: ["queues"]
  verbs: ["get", "list", "watch"]
# DRA feature detection: GPU DeviceClasses.
- apiGroups: ["resource.k8s.io"]
  resources: ["deviceclasses"]
  verbs: ["get", "list", "watch"]
{{- if not .Values.namespaceRestriction.enabled }}
# Namespace-scope marker leases of namespace-restricted operators in every namespace (the
# cluster-wide operator leaves those namespaces alone).
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get", "list", "watch"]
# Conversion webhook: reads the Dynamo CRDs ...
- apiGroups: ["apiextensions.k8s.io"]
  resources: ["customresourcedefinitions"]
  verbs: ["get", "list", "watch"]
# ... and patches caBundle and Service of the multi-version ones.
- apiGroups: ["apiextensions.k8s.io"]
  resources: ["customresourcedefinitions"]
  resourceNames:
    - dynamographdeployments.nvidia.com
    - dynamocomponentdeployments.nvidia.com
    - dynamographdeploymentrequests.nvidia.com
    - dynamographdeploymentscalingadapters.nvidia.com
  verbs: ["update", "patch"]
# DGD / DGDR reconcilers bind the planner, EPP and profiling ClusterRoles in workload namespaces.
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["clusterroles"]
  resourceNames:
    - {{ include "dynamo-operator.plannerClusterRole" . }}
    - {{ include "dynamo-operator.eppClusterRole" . }}
    - {{ include "dynamo-operator.profilingClusterRole" . }}
  verbs: ["get", "bind"]
{{- end }}
{{- end }}

{{/* Planner: scales graphs through their scaling adapters and reads metrics endpoints. */}}
{{- define "dynamo-operator.plannerRules" -}}
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeployments", "dynamographdeploymentscalingadapters", "dynamoworkermetadatas"]
  verbs: ["get", "list", "watch"]
# the planner scales components through their adapters' /scale (read, then write)
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeploymentscalingadapters/scale"]
  verbs: ["get", "update", "patch"]
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeploymentscalingadapters"]
  verbs: ["update", "patch"]
- apiGroups: [""]
  resources: ["pods", "services"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["get", "list", "watch"]
{{- end }}

{{/* EPP (endpoint picker): InferencePool members and worker metadata. */}}
{{- define "dynamo-operator.eppRules" -}}
- apiGroups: ["inference.networking.k8s.io"]
  resources: ["inferencepools"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["nvidia.com"]
  resources: ["dynamoworkermetadatas"]
  verbs: ["get", "list", "watch"]
{{- end }}

{{/* DGDR profiling Job: deploys trial graphs and writes its results to ConfigMaps. */}}
{{- define "dynamo-operator.profilingRules" -}}
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeployments"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeploymentrequests"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "patch"]
- apiGroups: [""]
  resources: ["pods", "pods/log", "services"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["", "events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end }}
