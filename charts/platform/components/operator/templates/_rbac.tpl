{{/*
Operator RBAC rules: least privilege, each rule naming the code that calls it (operator/dynamo_operator).
docs/security.md explains every grant; tests/integration/test_rbac_cluster.py runs the operator, the hooks
and the plugin under exactly these rules on a real API server with its audit log on, and fails when a
granted (group, resource, verb) is never used, or a call is refused. A grant comes back together with the
code that calls it.

Namespaced rules are granted cluster-wide by a ClusterRole, or in the target namespace by a Role in
namespace-restricted mode. Nothing here grants get on Secrets outside the release namespace, writes on
Secrets other than the webhook certificate by name, or anything on Nodes but a list (GPU discovery) and a
get (a worker's topology label).
*/}}
{{- define "dynamo-operator.namespacedRules" -}}
# controllers/dgd.py, dgdr.py (informer, cached_or_live get; DGDR creates the generated graph),
# dgd._store_hash and dgdsa._scale (merge patches of the graph).
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeployments"]
  verbs: ["get", "list", "watch", "create", "patch"]
# controllers/sync.py: a graph's DynamoComponentDeployments are its children (create, replace, delete).
- apiGroups: ["nvidia.com"]
  resources: ["dynamocomponentdeployments"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# controllers/dgdsa.py AdapterSync: a graph's scaling adapters (create the wanted, delete the unwanted).
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeploymentscalingadapters"]
  verbs: ["list", "watch", "create", "delete"]
# controllers/dynamomodel.py: the LoRA cleanup finalizer (lifecycle.set_finalizer, a merge patch).
- apiGroups: ["nvidia.com"]
  resources: ["dynamomodels"]
  verbs: ["list", "watch", "patch"]
# controllers/dgdr.py, checkpoint.py: informers (their writes are status and children) ...
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeploymentrequests", "dynamocheckpoints"]
  verbs: ["list", "watch"]
# ... and controllers/dgdr.py's v1beta1-only progress (phase, profilingPhase, deploymentInfo) kept in the
# request's nvidia.com/dgdr-status annotation (api/dgdr_conversion.py): a merge patch of that annotation.
- apiGroups: ["nvidia.com"]
  resources: ["dynamographdeploymentrequests"]
  verbs: ["patch"]
# controllers/dgd_checkpoints.py CheckpointSync: a graph's automatic DynamoCheckpoints (a component's
# checkpoint): get on a cache miss, created once, patched when deletionPolicy moves the owner reference,
# deleted when the component no longer renders them. controllers/checkpoint_storage.py CheckpointCleanup:
# patch of the artifact-cleanup finalizer (released once the cleanup Job ends).
- apiGroups: ["nvidia.com"]
  resources: ["dynamocheckpoints"]
  verbs: ["get", "create", "patch", "delete"]
# controllers/common.py StatusWriter and dgdsa.py: status is replaced through the status subresource.
- apiGroups: ["nvidia.com"]
  resources:
    - dynamographdeployments/status
    - dynamocomponentdeployments/status
    - dynamographdeploymentrequests/status
    - dynamographdeploymentscalingadapters/status
    - dynamomodels/status
    - dynamocheckpoints/status
  verbs: ["update"]
# Owners of children whose ownerReference sets blockOwnerDeletion (sync.owner_reference): the API server's
# OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift and hardened clusters) requires
# update on the owner's finalizers subresource. Graph -> DCDs, adapters, Services, ConfigMaps, PodCliqueSet;
# DCD -> Deployment, Service, ConfigMap, LeaderWorkerSet; DGDR -> profiling Job, graph; checkpoint -> Job.
- apiGroups: ["nvidia.com"]
  resources:
    - dynamographdeployments/finalizers
    - dynamocomponentdeployments/finalizers
    - dynamographdeploymentrequests/finalizers
    - dynamocheckpoints/finalizers
  verbs: ["update"]
# controllers/sync.py: single-node components run as Deployments, reached through Services; the graph's
# and components' ConfigMaps (EPP config, multinode scripts). dgdr.py reads the profiling output ConfigMap.
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
- apiGroups: [""]
  resources: ["services", "configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# controllers/sync.py (planner-serviceaccount, epp-serviceaccount) and dgdr.py (dgdr-profiling-job).
- apiGroups: [""]
  resources: ["serviceaccounts"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# controllers/dgdr.py: a DGDR's modelCache.pvcName must name an existing claim before profiling starts.
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get"]
# controllers/pvc.py (DGD reconciler), render/pvc.py: the claims of a graph's spec.pvcs with create: true,
# created when missing and grown (a merge patch of the storage request); cached by label (list/watch), a
# claim outside that cache (the user's) read by one get. Never updated or deleted: their data outlives the
# graph (docs/storage.md). controllers/checkpoint_storage.py CheckpointClaim (DGD, DCD and DynamoCheckpoint
# reconcilers): the namespace's checkpoint claim with checkpoint.storage.pvc.create, created when missing;
# CheckpointCleanup reads it (get) before starting a cleanup Job.
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "list", "watch", "create", "patch"]
# controllers/dynamomodel.py: a base model's endpoints are its worker pods (label-selected informer);
# controllers/component_pods.py: a component's scheduled pods (DGD/DCD status scheduledReplicas).
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
{{- if .Values.imagePullSecretDiscovery.enabled }}
# controllers/wiring.py pull_secrets: the image-pull-secret index (render/pullsecrets.py) watches
# kubernetes.io/dockerconfigjson Secrets through a field selector on type (and keeps their registry hosts
# only). RBAC cannot narrow a list by type, so this reads every Secret of the scope: docs/security.md,
# "Residual risks"; imagePullSecretDiscovery.enabled=false drops it.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["list", "watch"]
{{- end }}
# runtime/events.py: every reconciler records core/v1 Events (aggregated ones are patched);
# controllers/checkpoint.py lists one stalled checkpoint Job's FailedCreate Events (field-selected by the
# Job's uid) to say why it has no pod.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch", "list"]
# controllers/dgdr.py (profiling Job), checkpoint.py (checkpoint Job, deleted when superseded),
# checkpoint_storage.py (a deleted automatic checkpoint's cleanup Job: get while it runs, then deleted).
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "create", "delete"]
# controllers/__init__.py: planner/EPP/profiling/discovery RoleBindings are cached (label-selected) ...
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["rolebindings"]
  verbs: ["list", "watch"]
# ... and written by sync.py and dgdr.py: cluster-wide those of rbac.*ClusterRoleName in the configuration
# (bound ClusterRoles need the bind grant in clusterScopedRules); namespace-restricted only the graphs'
# discovery RoleBindings (rbac.discoveryRoleName), to the one Role it may bind (manager-rbac.yaml). The
# API server's escalation check refuses a binding to any other role whose rules the operator lacks.
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["rolebindings"]
  verbs: ["get", "create", "update", "delete"]
# controllers/sync.py, Grove pathway (only when grove.io is served): the graph's PodCliqueSet ...
- apiGroups: ["grove.io"]
  resources: ["podcliquesets"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# ... and the cliques and scaling groups Grove makes of it (status of the graph's components).
- apiGroups: ["grove.io"]
  resources: ["podcliques", "podcliquescalinggroups"]
  verbs: ["list", "watch"]
# controllers/sync.py, LeaderWorkerSet pathway (multinode components when LWS is served).
- apiGroups: ["leaderworkerset.x-k8s.io"]
  resources: ["leaderworkersets"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# controllers/dcd.py (dgd.py on the Grove pathway), render/gms.py: the DRA ResourceClaimTemplate of a GPU
# memory service component (only when resource.k8s.io is served); its spec is immutable, so a change is a
# delete and a create, never an update.
- apiGroups: ["resource.k8s.io"]
  resources: ["resourceclaimtemplates"]
  verbs: ["get", "list", "watch", "create", "delete"]
# controllers/dgd.py, render/epp.py: the InferencePool a graph's EPP component routes for (only when the
# Gateway API Inference Extension is served) ...
- apiGroups: ["inference.networking.k8s.io"]
  resources: ["inferencepools"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# ... and the DestinationRule of its EPP Service under serviceMesh.provider istio (only when Istio is served).
- apiGroups: ["networking.istio.io"]
  resources: ["destinationrules"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# controllers/sync.py from dcd.py (dgd.py on the Grove pathway), render/ingress.py: a component's Ingress
# (its ingress, the configuration's ingress.*); networking.k8s.io/v1 is always served, so every operator
# caches them (label-selected) ...
- apiGroups: ["networking.k8s.io"]
  resources: ["ingresses"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
# ... or its Istio VirtualService (ingress.useVirtualService, dynamo.istio.gateway; only when Istio is served).
- apiGroups: ["networking.istio.io"]
  resources: ["virtualservices"]
  verbs: ["get", "list", "watch", "create", "update", "delete"]
{{- end }}

{{/* Cluster-scoped rules, a ClusterRole in both modes. */}}
{{- define "dynamo-operator.clusterScopedRules" -}}
# runtime/servers.py: the metrics listener authenticates (TokenReview) and authorizes
# (SubjectAccessReview) each scrape. Reviews change nothing and cannot be limited by name.
- apiGroups: ["authentication.k8s.io"]
  resources: ["tokenreviews"]
  verbs: ["create"]
- apiGroups: ["authorization.k8s.io"]
  resources: ["subjectaccessreviews"]
  verbs: ["create"]
# webhooks/certs.py: finds its webhook configurations by label (list, and a watch that re-injects the
# caBundle at once) ...
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]
  verbs: ["list", "watch"]
# ... and replaces the caBundle of this release's two configurations only.
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]
  resourceNames:
    - {{ include "dynamo-operator.validatingName" . }}
    - {{ include "dynamo-operator.mutatingName" . }}
  verbs: ["update"]
{{- if not .Values.namespaceRestriction.enabled }}
# runtime/nsscope.py NamespaceExclusionWatcher: the namespace-scope markers of restricted operators in
# every namespace (a list/watch with the field selector metadata.name=<marker>, so limited by name).
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: ["dynamo-operator-namespace-scope"]
  verbs: ["list", "watch"]
# webhooks/certs.py: the conversion webhook's caBundle in the Dynamo CRDs (list; watch: a CRD re-applied
# without the bundle gets it back at once, CertManager.run_watcher), patched in the multi-version ones only
# (api/registry.py MULTI_VERSION_KINDS).
- apiGroups: ["apiextensions.k8s.io"]
  resources: ["customresourcedefinitions"]
  verbs: ["list", "watch"]
- apiGroups: ["apiextensions.k8s.io"]
  resources: ["customresourcedefinitions"]
  resourceNames:
    - dynamographdeployments.nvidia.com
    - dynamocomponentdeployments.nvidia.com
    - dynamographdeploymentrequests.nvidia.com
    - dynamographdeploymentscalingadapters.nvidia.com
  verbs: ["patch"]
{{- if .Values.gpuDiscovery.enabled }}
# controllers/dgdr.py discover_gpus (render/gpu.py): a DGDR without hardware.gpuSku/numGpusPerNode learns
# them from the GPU nodes' labels and allocatable GPUs (a list; Nodes carry no secrets). Cluster-wide only:
# a restricted operator gets no node access and asks for the hardware in the request (seed 002).
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["list"]
{{- end }}
# controllers/dcd.py, dgd.py (controllers/gms.py, Wiring.device_classes_watched): a GPU memory service
# component waits for the DeviceClass it claims from (an informer; cluster-scoped, no secrets in it).
- apiGroups: ["resource.k8s.io"]
  resources: ["deviceclasses"]
  verbs: ["list", "watch"]
# controllers/sync.py, dgdr.py: RoleBindings to the planner, EPP, profiling and discovery
# (render/discovery.py) ClusterRoles in workload namespaces (the API server's escalation check wants bind
# on exactly these; the operator holds none of their rules).
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["clusterroles"]
  resourceNames:
    - {{ include "dynamo-operator.plannerClusterRole" . }}
    - {{ include "dynamo-operator.eppClusterRole" . }}
    - {{ include "dynamo-operator.profilingClusterRole" . }}
    - {{ include "dynamo-operator.discoveryClusterRole" . }}
  verbs: ["bind"]
{{- end }}
{{- end }}

{{/*
The operator's own objects in the release namespace: the webhook certificate Secret (webhooks/certs.py,
auto mode), read and renewed by name, and the ConfigMap publishing its CA bundle. The install hook creates it before the operator starts
(ensure-webhook-certs); only without install hooks does the operator need create, which RBAC cannot
limit by name.
*/}}
{{- define "dynamo-operator.selfRules" -}}
{{- if eq .Values.webhook.certificateMode "auto" }}
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: [{{ .Values.webhook.certificateSecret.name | quote }}]
  verbs: ["get", "update"]
# webhooks/certs.py CertManager._publish_ca: the CA bundle alone in <secret>-ca, kept in step with every
# rotation for the ServiceMonitor (which never reads the Secret and its ca.key); a server-side apply, which
# the API server authorizes by name (create when missing, patch).
- apiGroups: [""]
  resources: ["configmaps"]
  resourceNames: [{{ printf "%s-ca" .Values.webhook.certificateSecret.name | quote }}]
  verbs: ["get", "create", "patch"]
{{- if not .Values.installHooks.enabled }}
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["create"]
{{- end }}
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

{{/* Kubernetes discovery of a graph's pods (render/discovery.py; the Dynamo runtime's
DYN_DISCOVERY_BACKEND=kubernetes): it watches the EndpointSlices of the graph's labelled Services and the
Pods, and each worker applies, updates and deletes its own DynamoWorkerMetadata. Bound per graph to
<dgd>-k8s-service-discovery in the graph's namespace. */}}
{{- define "dynamo-operator.discoveryRules" -}}
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["nvidia.com"]
  resources: ["dynamoworkermetadatas"]
  verbs: ["create", "get", "list", "watch", "update", "patch", "delete"]
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

{{/*
Cluster-wide operator only (manager-rbac.yaml): controllers/topology.py (spec.experimental.kvTransferPolicy,
render/kvtransfer.py) copies a scheduled worker pod's node topology label(s) onto it, a merge patch of the
pod's labels, reading the node and the Grove ClusterTopology the graph names by one get each. A
namespace-restricted operator reads no Node, so it gets none of these: its controller writes nothing and
says so in an Event on the pod (docs/multinode.md).
*/}}
{{- define "dynamo-operator.clusterWideRules" -}}
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["patch"]
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get"]
- apiGroups: ["grove.io"]
  resources: ["clustertopologies"]
  verbs: ["get"]
{{- end }}
