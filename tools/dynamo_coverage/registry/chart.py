"""Registry entries (see the package docstring): drafted with ``python -m dynamo_coverage --draft`` and
held to the strict checks of ``check`` (the code names the field and its context, the test names the
field); an ``acts`` without a test is shown as untested."""

from __future__ import annotations

from ..status import Converted, Rendered, Status, StorageOnly, Unresolved, acts, refused, warned  # noqa: F401

VALUES: dict[str, dict[str, Status]] = {
    "etcd": {
        "affinity": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the etcd pods",
        ),
        "auth.client.enableAuthentication": acts(
            "tpl:etcd/templates/_helpers.tpl",
            "helm:etcd/tests/etcd_test.yaml::client certificates serve https, verify clients and mount the server certificate",
        ),
        "auth.client.existingSecret": acts(
            "tpl:etcd/templates/_helpers.tpl",
            "helm:etcd/tests/etcd_test.yaml::an existing certificate Secret (without RBAC) is mounted and nothing is generated",
        ),
        "auth.client.secureTransport": acts(
            "tpl:etcd/templates/_helpers.tpl",
            "helm:etcd/tests/etcd_test.yaml::client certificates serve https, verify clients and mount the server certificate",
        ),
        "auth.rbac.create": acts(
            "tpl:etcd/templates/_helpers.tpl",
            "helm:etcd/tests/etcd_test.yaml::without RBAC generates a CA, the server certificate and the workloads' shared client certificate",
        ),
        "autoCompactionRetention": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/storage_test.yaml::quotaBackendBytes, autoCompactionRetention and extraEnv reach etcd's environment",
        ),
        "containerSecurityContext": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::podSecurityContext and containerSecurityContext reach the etcd pod and container",
        ),
        "enabled": acts(
            "tpl:platform/Chart.yaml",
            "tests/unit/test_chart_values.py::test_each_bundled_store_alone_gives_only_its_address",
        ),
        "exports": acts("tpl:platform/Chart.yaml", ()),
        "extraEnv": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/storage_test.yaml::quotaBackendBytes, autoCompactionRetention and extraEnv reach etcd's environment",
        ),
        "fullnameOverride": acts(
            "tpl:etcd/templates/_helpers.tpl",
            "helm:etcd/tests/pod_values_test.yaml::fullnameOverride names the StatefulSet, its Services and the peer addresses",
        ),
        "image.pullPolicy": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::image.repository and image.pullPolicy reach the etcd container",
        ),
        "image.repository": acts(
            "tpl:etcd/templates/_helpers.tpl",
            "helm:etcd/tests/pod_values_test.yaml::image.repository and image.pullPolicy reach the etcd container",
        ),
        "image.tag": acts(
            "tpl:etcd/templates/_helpers.tpl", "helm:etcd/tests/etcd_test.yaml::a digest in the tag is kept"
        ),
        "imagePullSecrets": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the etcd pods",
        ),
        "livenessProbe.enabled": acts(
            "tpl:etcd/templates/statefulset.yaml", "helm:etcd/tests/etcd_test.yaml::probes can be turned off"
        ),
        "nameOverride": acts(
            "tpl:etcd/templates/_helpers.tpl",
            "helm:etcd/tests/pod_values_test.yaml::nameOverride replaces the chart name in the names and the name label",
        ),
        "networkPolicy.enabled": acts(
            "tpl:etcd/templates/networkpolicy.yaml",
            "helm:etcd/tests/etcd_test.yaml::the NetworkPolicy admits clients only from Dynamo pods, the operator, the test pod and members",
        ),
        "networkPolicy.extraIngress": acts(
            "tpl:etcd/templates/networkpolicy.yaml",
            "helm:etcd/tests/etcd_test.yaml::extra ingress rules are appended",
        ),
        "networkPolicy.ingressNSMatchLabels": acts(
            "tpl:etcd/templates/networkpolicy.yaml",
            "helm:etcd/tests/etcd_test.yaml::the NetworkPolicy admits clients only from Dynamo pods, the operator, the test pod and members",
        ),
        "nodeSelector": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the etcd pods",
        ),
        "pdb.create": acts(
            "tpl:etcd/templates/_helpers.tpl", "helm:etcd/tests/etcd_test.yaml::PDB keeps a quorum of three"
        ),
        "persistence.enabled": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/etcd_test.yaml::persistence off uses an emptyDir",
        ),
        "persistence.mountPath": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::persistence.mountPath moves the data volume and etcd's data directory",
        ),
        "persistence.size": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/storage_test.yaml::persistence.size and persistence.storageClass shape the data claim",
        ),
        "persistence.storageClass": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/storage_test.yaml::persistence.size and persistence.storageClass shape the data claim",
        ),
        "podSecurityContext": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::podSecurityContext and containerSecurityContext reach the etcd pod and container",
        ),
        "quotaBackendBytes": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/storage_test.yaml::quotaBackendBytes, autoCompactionRetention and extraEnv reach etcd's environment",
        ),
        "readinessProbe.enabled": acts(
            "tpl:etcd/templates/statefulset.yaml", "helm:etcd/tests/etcd_test.yaml::probes can be turned off"
        ),
        "replicaCount": acts(
            "tpl:etcd/templates/pdb.yaml", "helm:etcd/tests/etcd_test.yaml::PDB keeps a quorum of three"
        ),
        "resources": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::resources reach the etcd container",
        ),
        "service.type": acts(
            "tpl:etcd/templates/service.yaml",
            "helm:etcd/tests/pod_values_test.yaml::service.type is the client Service's type, not the headless one's",
        ),
        "tolerations": acts(
            "tpl:etcd/templates/statefulset.yaml",
            "helm:etcd/tests/pod_values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the etcd pods",
        ),
    },
    "grove": {
        "affinity": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the Grove pods",
        ),
        "config.controllers.podCliqueConcurrentSyncs": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "config.controllers.podCliqueScalingGroupConcurrentSyncs": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "config.controllers.podCliqueSetConcurrentSyncs": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "config.leaderElection.enabled": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "config.logFormat": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "config.logLevel": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "config.server.healthProbePort": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "config.server.metricsPort": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "config.server.webhookPort": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::config keys land in the Grove OperatorConfiguration file and the container ports",
        ),
        "containerSecurityContext": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::podSecurityContext, containerSecurityContext and resources reach the Grove pod and container",
        ),
        "enabled": acts(
            "tpl:platform/Chart.yaml",
            "tests/unit/test_chart_values.py::test_grove_and_kai_scheduler_enabled_each_render_their_operator_only_when_true",
        ),
        "fullnameOverride": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::fullnameOverride names the operator, its ConfigMap, certificate Secret and RBAC subject",
        ),
        "image.pullPolicy": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::image.repository, image.tag and image.pullPolicy reach the Grove container",
        ),
        "image.repository": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::image.repository, image.tag and image.pullPolicy reach the Grove container",
        ),
        "image.tag": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::image.repository, image.tag and image.pullPolicy reach the Grove container",
        ),
        "imagePullSecrets": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the Grove pods",
        ),
        "nameOverride": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::nameOverride replaces the operator name in the names and the name label",
        ),
        "nodeSelector": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the Grove pods",
        ),
        "pdb.enabled": acts(
            "tpl:grove/templates/_helpers.tpl",
            "helm:grove/tests/values_test.yaml::pdb.enabled false leaves several replicas without a PodDisruptionBudget",
        ),
        "rbac.webhookConfigurations.validating": acts(
            "tpl:grove/templates/rbac.yaml",
            "helm:grove/tests/values_test.yaml::rbac.webhookConfigurations names the only webhook configurations Grove may update",
        ),
        "rbac.webhookConfigurations.mutating": acts(
            "tpl:grove/templates/rbac.yaml",
            "helm:grove/tests/values_test.yaml::rbac.webhookConfigurations names the only webhook configurations Grove may update",
        ),
        "admissionPolicies": acts(
            "tpl:grove/templates/rbac.yaml",
            "helm:grove/tests/values_test.yaml::admissionPolicies false renders no policy",
        ),
        "podSecurityContext": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::podSecurityContext, containerSecurityContext and resources reach the Grove pod and container",
        ),
        "replicaCount": acts(
            "tpl:grove/templates/operator.yaml", "helm:grove/tests/grove_test.yaml::PDB with several replicas"
        ),
        "resources": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::podSecurityContext, containerSecurityContext and resources reach the Grove pod and container",
        ),
        "tolerations": acts(
            "tpl:grove/templates/operator.yaml",
            "helm:grove/tests/values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the Grove pods",
        ),
    },
    "kai-scheduler": {
        "containerSecurityContext": acts(
            "tpl:kai-scheduler/templates/operator.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::operator.resources, podSecurityContext and containerSecurityContext reach the KAI pod and container",
        ),
        "enabled": acts(
            "tpl:platform/Chart.yaml",
            "tests/unit/test_chart_values.py::test_grove_and_kai_scheduler_enabled_each_render_their_operator_only_when_true",
        ),
        "fullnameOverride": acts(
            "tpl:kai-scheduler/templates/_helpers.tpl",
            "helm:kai-scheduler/tests/values_test.yaml::fullnameOverride names the operator, its ServiceAccount and RBAC subject",
        ),
        "nameOverride": acts(
            "tpl:kai-scheduler/templates/_helpers.tpl",
            "helm:kai-scheduler/tests/values_test.yaml::nameOverride replaces the operator name in the names and the name label",
        ),
        "operator.leaderElection": acts(
            "tpl:kai-scheduler/templates/operator.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::operator.leaderElection false drops --leader-elect",
        ),
        "operator.replicaCount": acts(
            "tpl:kai-scheduler/templates/operator.yaml",
            "helm:kai-scheduler/tests/kai_test.yaml::PDB with several replicas",
        ),
        "operator.resources": acts(
            "tpl:kai-scheduler/templates/operator.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::operator.resources, podSecurityContext and containerSecurityContext reach the KAI pod and container",
        ),
        "pdb.enabled": acts(
            "tpl:kai-scheduler/templates/operator.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::pdb.enabled false leaves several replicas without a PodDisruptionBudget",
        ),
        "rbac.webhookConfigurations.validating": acts(
            "tpl:kai-scheduler/templates/rbac.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::rbac names the webhook configurations, TLS Secrets and CRDs the KAI operator keeps, and its policy allows creating only those",
        ),
        "rbac.webhookConfigurations.mutating": acts(
            "tpl:kai-scheduler/templates/rbac.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::rbac names the webhook configurations, TLS Secrets and CRDs the KAI operator keeps, and its policy allows creating only those",
        ),
        "rbac.webhookSecrets": acts(
            "tpl:kai-scheduler/templates/rbac.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::rbac names the webhook configurations, TLS Secrets and CRDs the KAI operator keeps, and its policy allows creating only those",
        ),
        "rbac.customResourceDefinitions": acts(
            "tpl:kai-scheduler/templates/rbac.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::rbac names the webhook configurations, TLS Secrets and CRDs the KAI operator keeps, and its policy allows creating only those",
        ),
        "admissionPolicies": acts(
            "tpl:kai-scheduler/templates/rbac.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::admissionPolicies false renders no policy",
        ),
        "podSecurityContext": acts(
            "tpl:kai-scheduler/templates/operator.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::operator.resources, podSecurityContext and containerSecurityContext reach the KAI pod and container",
        ),
        "queues.create": acts(
            "tpl:kai-scheduler/templates/queues.yaml",
            "helm:kai-scheduler/tests/values_test.yaml::queues.create false creates no Queue even where the API exists",
        ),
        "queues.default": acts(
            "tpl:kai-scheduler/templates/queues.yaml",
            "helm:kai-scheduler/tests/kai_test.yaml::queues.parent and queues.default name the two queues, the default one under the parent",
        ),
        "queues.parent": acts(
            "tpl:kai-scheduler/templates/queues.yaml",
            "helm:kai-scheduler/tests/kai_test.yaml::queues.parent and queues.default name the two queues, the default one under the parent",
        ),
    },
    "nats": {
        "affinity": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the NATS pods",
        ),
        "auth.enabled": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/nats_test.yaml::user/password authentication reads the generated Secret through the environment",
        ),
        "auth.existingSecret": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/nats_test.yaml::token authentication from an existing Secret generates nothing",
        ),
        "auth.method": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/nats_test.yaml::token authentication from an existing Secret generates nothing",
        ),
        "auth.reloader.image.pullPolicy": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::auth.reloader image and resources reach the accounts reloader",
        ),
        "auth.reloader.image.repository": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::auth.reloader image and resources reach the accounts reloader",
        ),
        "auth.reloader.image.tag": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::auth.reloader image and resources reach the accounts reloader",
        ),
        "auth.reloader.resources": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::auth.reloader image and resources reach the accounts reloader",
        ),
        "config.cluster.enabled": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/nats_test.yaml::cluster mode runs the route mesh",
        ),
        "config.cluster.port": acts(
            (
                "tpl:nats/templates/_helpers.tpl",
                "tpl:nats/templates/statefulset.yaml",
            ),
            "helm:nats/tests/config_test.yaml::config.cluster.replicas and config.cluster.port size the route mesh",
        ),
        "config.cluster.replicas": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/config_test.yaml::config.cluster.replicas and config.cluster.port size the route mesh",
        ),
        "config.jetstream.enabled": acts(
            (
                "tpl:nats/templates/_helpers.tpl",
                "tpl:nats/templates/statefulset.yaml",
            ),
            "helm:nats/tests/config_test.yaml::config.jetstream.enabled false runs NATS without JetStream or its store",
        ),
        "config.jetstream.fileStore.dir": acts(
            (
                "tpl:nats/templates/_helpers.tpl",
                "tpl:nats/templates/statefulset.yaml",
            ),
            "helm:nats/tests/config_test.yaml::config.jetstream.fileStore.dir is where the store is kept and mounted",
        ),
        "config.jetstream.fileStore.enabled": acts(
            (
                "tpl:nats/templates/_helpers.tpl",
                "tpl:nats/templates/statefulset.yaml",
            ),
            "helm:nats/tests/config_test.yaml::config.jetstream.fileStore.enabled false keeps JetStream in memory, with no store on disk",
        ),
        "config.jetstream.fileStore.maxSize": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/jetstream_test.yaml::config.jetstream.fileStore.maxSize and memoryStore.maxSize cap the stores",
        ),
        "config.jetstream.fileStore.pvc.enabled": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/nats_test.yaml::persistence off uses an emptyDir",
        ),
        "config.jetstream.fileStore.pvc.size": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/jetstream_test.yaml::config.jetstream.fileStore.pvc.size and storageClassName shape the claim and the store's limit",
        ),
        "config.jetstream.fileStore.pvc.storageClassName": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/jetstream_test.yaml::config.jetstream.fileStore.pvc.size and storageClassName shape the claim and the store's limit",
        ),
        "config.jetstream.memoryStore.enabled": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/jetstream_test.yaml::config.jetstream.fileStore.maxSize and memoryStore.maxSize cap the stores",
        ),
        "config.jetstream.memoryStore.maxSize": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/jetstream_test.yaml::config.jetstream.fileStore.maxSize and memoryStore.maxSize cap the stores",
        ),
        "config.merge": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/values_test.yaml::config.merge adds top-level nats-server settings",
        ),
        "config.monitor.enabled": acts(
            (
                "tpl:nats/templates/_helpers.tpl",
                "tpl:nats/templates/statefulset.yaml",
            ),
            "helm:nats/tests/config_test.yaml::config.monitor.enabled false turns the endpoint off and probes the client port",
        ),
        "config.monitor.port": acts(
            (
                "tpl:nats/templates/_helpers.tpl",
                "tpl:nats/templates/statefulset.yaml",
            ),
            "helm:nats/tests/config_test.yaml::config.monitor.port moves the monitoring endpoint the probes use",
        ),
        "config.nats.port": acts(
            (
                "tpl:nats/templates/_helpers.tpl",
                "tpl:nats/templates/statefulset.yaml",
                "tpl:nats/templates/service.yaml",
            ),
            "helm:nats/tests/config_test.yaml::config.nats.port moves the client port of the server, its container and both Services",
        ),
        "config.nats.tls.enabled": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/nats_test.yaml::TLS with client verification mounts the server certificate and generates the workloads' Secret",
        ),
        "config.nats.tls.secretName": acts(
            (
                "tpl:nats/templates/_helpers.tpl",
                "tpl:nats/templates/secrets.yaml",
            ),
            "helm:nats/tests/config_test.yaml::config.nats.tls.secretName serves a certificate of the user's",
        ),
        "config.nats.tls.verifyClients": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/nats_test.yaml::TLS with client verification mounts the server certificate and generates the workloads' Secret",
        ),
        "container.env": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/config_test.yaml::container.env and container.resources reach the NATS container",
        ),
        "container.image.pullPolicy": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::container.image repository, tag and pullPolicy reach the NATS container",
        ),
        "container.image.repository": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::container.image repository, tag and pullPolicy reach the NATS container",
        ),
        "container.image.tag": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::container.image repository, tag and pullPolicy reach the NATS container",
        ),
        "container.resources": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/config_test.yaml::container.env and container.resources reach the NATS container",
        ),
        "containerSecurityContext": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::podSecurityContext and containerSecurityContext reach the NATS pod and container",
        ),
        "enabled": acts(
            "tpl:platform/Chart.yaml",
            "tests/unit/test_chart_values.py::test_each_bundled_store_alone_gives_only_its_address",
        ),
        "exports": acts("tpl:platform/Chart.yaml", ()),
        "fullnameOverride": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/values_test.yaml::fullnameOverride names the StatefulSet, its Services and its ConfigMap",
        ),
        "imagePullSecrets": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the NATS pods",
        ),
        "nameOverride": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/values_test.yaml::nameOverride replaces the chart name in the names and the name label",
        ),
        "networkPolicy.enabled": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/nats_test.yaml::the NetworkPolicy admits clients only from Dynamo pods, the operator and the test pod",
        ),
        "networkPolicy.extraIngress": acts(
            "tpl:nats/templates/networkpolicy.yaml",
            "helm:nats/tests/values_test.yaml::networkPolicy.ingressNSMatchLabels limits the client namespaces and extraIngress rules are appended",
        ),
        "networkPolicy.ingressNSMatchLabels": acts(
            "tpl:nats/templates/networkpolicy.yaml",
            "helm:nats/tests/values_test.yaml::networkPolicy.ingressNSMatchLabels limits the client namespaces and extraIngress rules are appended",
        ),
        "nodeSelector": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the NATS pods",
        ),
        "podDisruptionBudget.enabled": acts(
            "tpl:nats/templates/_helpers.tpl", "helm:nats/tests/nats_test.yaml::PDB can be turned off"
        ),
        "podSecurityContext": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::podSecurityContext and containerSecurityContext reach the NATS pod and container",
        ),
        "podTemplate.annotations": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::podTemplate labels and annotations are added to the NATS pods beside the selector labels",
        ),
        "podTemplate.labels": acts(
            "tpl:nats/templates/_helpers.tpl",
            "helm:nats/tests/values_test.yaml::podTemplate labels and annotations are added to the NATS pods beside the selector labels",
        ),
        "service.type": acts(
            "tpl:nats/templates/service.yaml",
            "helm:nats/tests/values_test.yaml::service.type sets the client Service's type, not the headless one's",
        ),
        "tolerations": acts(
            "tpl:nats/templates/statefulset.yaml",
            "helm:nats/tests/values_test.yaml::imagePullSecrets, nodeSelector, tolerations and affinity place the NATS pods",
        ),
    },
    "operator": {
        "bundled.etcd": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::discoveryBackend etcd without etcd fails naming the settings",
        ),
        **{
            f"bundled.etcdImage.{key}": acts(
                "tpl:operator/templates/_infrastructure.tpl",
                "helm:operator/tests/hardening_test.yaml::the etcd-proxy sidecar's image follows the bundled etcd's image unless proxyImage is set",
            )
            for key in ("repository", "tag")
        },
        "bundled.nats": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::discoveryBackend etcd without etcd fails naming the settings",
        ),
        "checkpoint.cleanupImage": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries checkpointing, the cleanup image and the checkpoint claim the operator creates",
            via="config.CheckpointConfiguration.cleanupImage",
        ),
        "checkpoint.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries checkpointing, the cleanup image and the checkpoint claim the operator creates",
            via="config.CheckpointConfiguration.enabled",
        ),
        "checkpoint.storage.pvc.accessMode": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries checkpointing, the cleanup image and the checkpoint claim the operator creates",
            via="config.CheckpointPVCConfig.accessMode",
        ),
        "checkpoint.storage.pvc.basePath": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries checkpointing, the cleanup image and the checkpoint claim the operator creates",
            via="config.CheckpointPVCConfig.basePath",
        ),
        "checkpoint.storage.pvc.create": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries checkpointing, the cleanup image and the checkpoint claim the operator creates",
            via="config.CheckpointPVCConfig.create",
        ),
        "checkpoint.storage.pvc.pvcName": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries checkpointing, the cleanup image and the checkpoint claim the operator creates",
            via="config.CheckpointPVCConfig.pvcName",
        ),
        "checkpoint.storage.pvc.size": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries checkpointing, the cleanup image and the checkpoint claim the operator creates",
            via="config.CheckpointPVCConfig.size",
        ),
        "checkpoint.storage.pvc.storageClassName": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries checkpointing, the cleanup image and the checkpoint claim the operator creates",
            via="config.CheckpointPVCConfig.storageClassName",
        ),
        "controllerManager.affinity": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::keeps a user's affinity instead of the default spread",
        ),
        "controllerManager.leaderElection.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/deployment_test.yaml::refuses several replicas without leader election",
        ),
        "controllerManager.leaderElection.id": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::refuses a custom leader election id in cluster-wide mode",
        ),
        "controllerManager.leaderElection.namespace": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/rbac_test.yaml::leader election namespace follows the value, and the target namespace when restricted",
        ),
        "controllerManager.manager.args": acts(
            (
                "tpl:operator/templates/deployment.yaml",
                "tpl:operator/templates/_helpers.tpl",
            ),
            "helm:operator/tests/values_test.yaml::controllerManager.manager.args are the operator's flags after its configuration",
        ),
        "controllerManager.manager.containerSecurityContext": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/values_test.yaml::controllerManager podSecurityContext and manager containerSecurityContext reach the operator and the hook Jobs",
        ),
        "controllerManager.manager.env": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/values_test.yaml::controllerManager.manager.env is added to the operator's own environment",
        ),
        "controllerManager.manager.image.pullPolicy": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/deployment_test.yaml::honours image overrides",
        ),
        "controllerManager.manager.image.repository": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::honours image overrides",
        ),
        "controllerManager.manager.image.tag": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::honours image overrides",
        ),
        "controllerManager.manager.resources.limits": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/user_values_test.yaml::the manager pod takes the user's labels, annotations, priority class and resources",
        ),
        "controllerManager.manager.resources.requests": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/user_values_test.yaml::the manager pod takes the user's labels, annotations, priority class and resources",
        ),
        "controllerManager.nodeSelector": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/values_test.yaml::controllerManager.nodeSelector places the operator and its install hook Jobs",
        ),
        "controllerManager.podAnnotations": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/user_values_test.yaml::the manager pod takes the user's labels, annotations, priority class and resources",
        ),
        "controllerManager.podLabels": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/user_values_test.yaml::the manager pod takes the user's labels, annotations, priority class and resources",
        ),
        "controllerManager.podSecurityContext": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/values_test.yaml::controllerManager podSecurityContext and manager containerSecurityContext reach the operator and the hook Jobs",
        ),
        "controllerManager.priorityClassName": acts(
            "tpl:operator/templates/deployment.yaml",
            "helm:operator/tests/user_values_test.yaml::the manager pod takes the user's labels, annotations, priority class and resources",
        ),
        "controllerManager.replicas": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::refuses several replicas in namespace-restricted mode, naming the field",
        ),
        "controllerManager.serviceAccount.annotations": acts(
            "tpl:operator/templates/serviceaccount.yaml",
            "helm:operator/tests/rbac_test.yaml::ServiceAccount carries its annotations",
        ),
        "controllerManager.tolerations": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::schedules with tolerations, affinity and pull secrets",
        ),
        "dgdr.profilerImage": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/user_values_test.yaml::dgdr.profilerImage is the profiler a request that names none gets",
        ),
        "discoveryBackend": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/deployment_test.yaml::discoveryBackend etcd without etcd fails naming the settings",
        ),
        "dynamo.dockerRegistry.existingSecretName": acts(
            (
                "tpl:operator/templates/_helpers.tpl",
                "tpl:operator/templates/registry-secret.yaml",
            ),
            "helm:operator/tests/observability_test.yaml::no registry Secret with an existing one",
        ),
        "dynamo.dockerRegistry.password": acts(
            "tpl:operator/templates/registry-secret.yaml",
            "helm:operator/tests/observability_test.yaml::registry Secret from credentials",
        ),
        "dynamo.dockerRegistry.secure": refused(
            "install",
            {"dynamo-operator.dynamo.dockerRegistry.secure": "false"},
            "dynamo.dockerRegistry.secure=false is not supported",
            ("tpl:operator/templates/_helpers.tpl",),
        ),
        "dynamo.dockerRegistry.server": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/observability_test.yaml::registry Secret from credentials",
        ),
        "dynamo.dockerRegistry.useKubernetesSecret": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::refuses registry credentials without a password or secret",
        ),
        "dynamo.dockerRegistry.username": acts(
            "tpl:operator/templates/registry-secret.yaml",
            "helm:operator/tests/observability_test.yaml::registry Secret from credentials",
        ),
        "dynamo.enableRestrictedSecurityContext": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/deployment_test.yaml::passes the restricted security context option through the configuration, not an env var",
        ),
        "dynamo.groveTerminationDelay": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "dynamo.ingress.allowedAnnotations": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries the ingress policy on graph authors' ingress",
            via="config.IngressConfiguration.allowedAnnotations",
        ),
        "dynamo.ingress.allowedHostSuffixes": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries the ingress policy on graph authors' ingress",
            via="config.IngressConfiguration.allowedHostSuffixes",
        ),
        "dynamo.ingress.className": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "dynamo.ingress.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "dynamo.ingress.tlsSecretName": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "dynamo.ingressHostSuffix": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "dynamo.internalImages.debugger": warned(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/notes_test.yaml::warn that a debugger image has no effect",
            "any image reference is accepted (a mirror); this operator starts no debugger containers",
        ),
        "dynamo.istio.allowedGateways": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries the ingress policy on graph authors' ingress",
            via="config.IngressConfiguration.allowedGateways",
        ),
        "dynamo.istio.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "dynamo.istio.gateway": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "dynamo.metrics.prometheusEndpoint": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "dynamo.mpiRun.copyToGraphNamespaces": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/mpi_secret_rbac_test.yaml::nothing without the switch",
        ),
        "dynamo.mpiRun.networkPolicy.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/hardening_test.yaml::the sshd NetworkPolicies can be turned off, and their grant with them",
        ),
        "dynamo.mpiRun.secretName": acts(
            (
                "tpl:operator/templates/_config.tpl",
                "tpl:operator/templates/mpi-secret-rbac.yaml",
            ),
            "helm:operator/tests/mpi_secret_rbac_test.yaml::follows the Secret's name",
        ),
        "dynamo.mpiRun.sshKeygen.enabled": acts(
            "tpl:operator/templates/install-hooks.yaml",
            "helm:operator/tests/install_hooks_test.yaml::no certificate step outside auto mode, no MPI step without keygen",
        ),
        "dynamo.podTemplateChecks.action": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::passes the workload hardening values to security.workloads",
        ),
        "dynamo.podTemplateChecks.allow": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::passes the workload hardening values to security.workloads",
        ),
        "dynamo.podTemplateChecks.allowedCapabilities": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::passes the workload hardening values to security.workloads",
        ),
        "dynamo.podTemplateChecks.allowedServiceAccounts": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::passes the workload hardening values to security.workloads",
        ),
        "dynamo.virtualServiceSupportsHTTPS": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries virtualServiceSupportsHTTPS and the MPI Secret copy switch",
        ),
        "enabled": acts(
            "tpl:platform/Chart.yaml",
            "helm:platform/tests/platform_test.yaml::the operator can be disabled (no operator checks in the test pod)",
        ),
        "etcdAddr": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/operator_config_test.yaml::uses natsAddr and etcdAddr when set",
        ),
        "etcdAuth.method": acts(
            "tpl:operator/templates/_infrastructure.tpl",
            "helm:operator/tests/hardening_test.yaml::credentials of the bundled NATS and etcd default to the Secrets their subcharts generate",
        ),
        "etcdAuth.adminSecretName": acts(
            "tpl:operator/templates/_infrastructure.tpl",
            "helm:operator/tests/hardening_test.yaml::namespaceCertificate with an external etcd names the admin Secret the user made",
        ),
        "etcdAuth.proxyImage": acts(
            "tpl:operator/templates/_infrastructure.tpl",
            "helm:operator/tests/hardening_test.yaml::namespaceCertificate with an external etcd names the admin Secret the user made",
        ),
        "etcdAuth.secretName": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/hardening_test.yaml::credentials of the bundled NATS and etcd default to the Secrets their subcharts generate",
        ),
        "fullnameOverride": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/values_test.yaml::fullnameOverride names the Deployment, its ServiceAccount, configuration and hook Jobs",
        ),
        "gpuDiscovery.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/values_test.yaml::gpuDiscovery.enabled false turns the operator's GPU discovery off",
        ),
        "imagePullSecretDiscovery.enabled": acts(
            ("tpl:operator/templates/_config.tpl", "tpl:operator/templates/_rbac.tpl"),
            (
                "helm:operator/tests/operator_config_test.yaml::image pull secret discovery can be turned off",
                "helm:operator/tests/rbac_test.yaml::image pull secret discovery off reads no Secret, so no Secret list or watch is granted",
            ),
        ),
        "grafanaDashboard.annotations": acts(
            "tpl:operator/templates/grafana-dashboard.yaml",
            "helm:operator/tests/observability_test.yaml::grafanaDashboard.labels and annotations reach the dashboard ConfigMap",
        ),
        "grafanaDashboard.enabled": acts(
            "tpl:operator/templates/grafana-dashboard.yaml",
            "helm:operator/tests/observability_test.yaml::dashboard can be turned off",
        ),
        "grafanaDashboard.labels": acts(
            "tpl:operator/templates/grafana-dashboard.yaml",
            "helm:operator/tests/observability_test.yaml::grafanaDashboard.labels and annotations reach the dashboard ConfigMap",
        ),
        "imagePullSecrets": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::schedules with tolerations, affinity and pull secrets",
        ),
        "installHooks.activeDeadlineSeconds": acts(
            "tpl:operator/templates/install-hooks.yaml",
            "helm:operator/tests/values_test.yaml::installHooks backoffLimit, activeDeadlineSeconds and resources reach every hook Job",
        ),
        "installHooks.backoffLimit": acts(
            "tpl:operator/templates/install-hooks.yaml",
            "helm:operator/tests/values_test.yaml::installHooks backoffLimit, activeDeadlineSeconds and resources reach every hook Job",
        ),
        "installHooks.checkConflicts": acts(
            "tpl:operator/templates/install-hooks.yaml",
            "helm:operator/tests/values_test.yaml::installHooks.checkConflicts false drops the conflict step and its cluster RBAC",
        ),
        "installHooks.cleanupOnUninstall": acts(
            "tpl:operator/templates/uninstall-hooks.yaml",
            "helm:operator/tests/uninstall_hooks_test.yaml::can be turned off",
        ),
        "installHooks.enabled": acts(
            "tpl:operator/templates/install-hooks.yaml",
            "helm:operator/tests/install_hooks_test.yaml::nothing when hooks are off",
        ),
        "installHooks.keepSecretsOnUninstall": acts(
            "tpl:operator/templates/uninstall-hooks.yaml",
            "helm:operator/tests/uninstall_hooks_test.yaml::restricted mode names the marker's namespace; keepSecretsOnUninstall keeps the Secrets",
        ),
        "installHooks.resources.limits": acts(
            "tpl:operator/templates/install-hooks.yaml",
            "helm:operator/tests/values_test.yaml::installHooks backoffLimit, activeDeadlineSeconds and resources reach every hook Job",
        ),
        "installHooks.resources.requests": acts(
            "tpl:operator/templates/install-hooks.yaml",
            "helm:operator/tests/values_test.yaml::installHooks backoffLimit, activeDeadlineSeconds and resources reach every hook Job",
        ),
        "kubernetesClusterDomain": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/values_test.yaml::kubernetesClusterDomain names the bundled NATS and etcd addresses and the serving certificate's DNS names",
        ),
        "logging.format": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/user_values_test.yaml::logging.level and logging.format reach the OperatorConfiguration",
        ),
        "logging.level": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/user_values_test.yaml::logging.level and logging.format reach the OperatorConfiguration",
        ),
        "metricsService.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/deployment_test.yaml::no metrics Service name without the metrics Service",
        ),
        "metricsService.secure": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/deployment_test.yaml::insecure metrics are served to the Service as plain HTTP on 8443",
        ),
        "metricsService.type": acts(
            "tpl:operator/templates/services.yaml",
            "helm:operator/tests/values_test.yaml::metricsService.type sets the metrics Service's type",
        ),
        "modelExpressURL": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::carries ingress, istio, model express, prometheus and grove settings",
        ),
        "nameOverride": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/values_test.yaml::nameOverride replaces the chart name in the names and the name label",
        ),
        "namespaceRestriction.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/deployment_test.yaml::runs one replica by default in namespace-restricted mode, recreated on upgrade",
        ),
        "namespaceRestriction.hybrid": acts(
            ("tpl:operator/templates/install-hooks.yaml", "dynamo_hooks.conflicts:_verdict"),
            (
                "helm:operator/tests/install_hooks_test.yaml::check-conflicts allows the hybrid layout when the "
                "release asks for it",
                "tests/unit/test_hooks_conflicts.py::test_the_hybrid_layout_is_allowed_with_its_value",
            ),
        ),
        "namespaceRestriction.lease.duration": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::writes the namespace-restricted section and no cluster RBAC role names",
        ),
        "namespaceRestriction.lease.renewInterval": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/operator_config_test.yaml::writes the namespace-restricted section and no cluster RBAC role names",
        ),
        "namespaceRestriction.targetNamespace": acts(
            (
                "tpl:operator/templates/_config.tpl",
                "tpl:operator/templates/networkpolicy-rbac.yaml",
            ),
            (
                "helm:operator/tests/operator_config_test.yaml::writes the namespace-restricted section and no cluster RBAC role names",
                "helm:operator/tests/hardening_test.yaml::namespace-restricted, the grant is a Role in the target namespace",
            ),
        ),
        "natsAddr": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/operator_config_test.yaml::uses natsAddr and etcdAddr when set",
        ),
        "natsAuth.method": acts(
            "tpl:operator/templates/_infrastructure.tpl",
            "helm:operator/tests/hardening_test.yaml::credentials of the bundled NATS and etcd default to the Secrets their subcharts generate",
        ),
        "natsAuth.secretName": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/hardening_test.yaml::credentials of the bundled NATS and etcd default to the Secrets their subcharts generate",
        ),
        "natsTLS.clientCertificate": acts(
            "tpl:operator/templates/_infrastructure.tpl",
            "helm:operator/tests/hardening_test.yaml::credentials of the bundled NATS and etcd default to the Secrets their subcharts generate",
        ),
        "natsTLS.enabled": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/hardening_test.yaml::credentials of the bundled NATS and etcd default to the Secrets their subcharts generate",
        ),
        "natsTLS.secretName": acts(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/hardening_test.yaml::credentials of the bundled NATS and etcd default to the Secrets their subcharts generate",
        ),
        "networkPolicy.webhook.enabled": acts(
            "tpl:operator/templates/networkpolicy.yaml",
            "helm:operator/tests/hardening_test.yaml::the webhook NetworkPolicy needs the API server's addresses",
        ),
        "networkPolicy.webhook.from": acts(
            "tpl:operator/templates/networkpolicy.yaml",
            "helm:operator/tests/hardening_test.yaml::the webhook NetworkPolicy restricts 9443 and leaves metrics and health open",
        ),
        "security.admissionPolicies": acts(
            "tpl:operator/templates/admission-policies.yaml",
            "helm:operator/tests/admission_policies_test.yaml::nothing with the switch off",
        ),
        "security.enableHTTP2": warned(
            "tpl:operator/templates/_config.tpl",
            "helm:operator/tests/values_test.yaml::security.enableHTTP2 reaches the OperatorConfiguration",
            "written into the OperatorConfiguration's security.enableHTTP2, which the operator accepts with a "
            "warning (config.SecurityConfiguration.enableHTTP2)",
        ),
        "serviceMonitor.enabled": acts(
            "tpl:operator/templates/servicemonitor.yaml",
            "helm:operator/tests/observability_test.yaml::ServiceMonitor forced on and off",
        ),
        "serviceMonitor.interval": acts(
            "tpl:operator/templates/servicemonitor.yaml",
            "helm:operator/tests/values_test.yaml::serviceMonitor.interval sets the scrape interval",
        ),
        "serviceMonitor.labels": acts(
            "tpl:operator/templates/servicemonitor.yaml",
            "helm:operator/tests/values_test.yaml::serviceMonitor.labels label the ServiceMonitor, beside the chart's own",
        ),
        "serviceMonitor.tlsConfig": acts(
            "tpl:operator/templates/servicemonitor.yaml",
            "helm:operator/tests/observability_test.yaml::ServiceMonitor takes a tlsConfig of the user's",
        ),
        "webhook.caBundle": acts(
            "tpl:operator/templates/webhook-configuration.yaml",
            "helm:operator/tests/webhook_test.yaml::manual mode with a caBundle sets it and drops the injection label",
        ),
        "webhook.certManager.certificate.duration": acts(
            "tpl:operator/templates/webhook-certificates.yaml",
            "helm:operator/tests/values_test.yaml::webhook.certManager durations reach the serving and root CA Certificates",
        ),
        "webhook.certManager.certificate.renewBefore": acts(
            "tpl:operator/templates/webhook-certificates.yaml",
            "helm:operator/tests/values_test.yaml::webhook.certManager renewBefore values reach the serving and root CA Certificates",
        ),
        "webhook.certManager.certificate.rootCA.duration": acts(
            "tpl:operator/templates/webhook-certificates.yaml",
            "helm:operator/tests/values_test.yaml::webhook.certManager durations reach the serving and root CA Certificates",
        ),
        "webhook.certManager.certificate.rootCA.renewBefore": acts(
            "tpl:operator/templates/webhook-certificates.yaml",
            "helm:operator/tests/values_test.yaml::webhook.certManager renewBefore values reach the serving and root CA Certificates",
        ),
        "webhook.certManager.issuerRef": acts(
            "tpl:operator/templates/webhook-certificates.yaml",
            "helm:operator/tests/webhook_test.yaml::cert-manager mode with an external issuer renders only the certificate",
        ),
        "webhook.certificateMode": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::refuses cert-manager with an out-of-cluster clientConfig URL",
        ),
        "webhook.certificateSecret.name": acts(
            (
                "tpl:operator/templates/_config.tpl",
                "tpl:operator/templates/deployment.yaml",
            ),
            "helm:operator/tests/values_test.yaml::webhook.certificateSecret.name is the Secret the operator serves from and the configuration names",
        ),
        "webhook.clientConfigURL": acts(
            "tpl:operator/templates/_helpers.tpl",
            "helm:operator/tests/deployment_test.yaml::refuses cert-manager with an out-of-cluster clientConfig URL",
        ),
        "webhook.failurePolicy": acts(
            "tpl:operator/templates/webhook-configuration.yaml",
            "helm:operator/tests/webhook_test.yaml::failure policy and timeout come from values",
        ),
        "webhook.service.publishNotReadyAddresses": acts(
            "tpl:operator/templates/services.yaml",
            "helm:operator/tests/values_test.yaml::webhook.service.publishNotReadyAddresses sets the webhook Service's field",
        ),
        "webhook.timeoutSeconds": acts(
            "tpl:operator/templates/webhook-configuration.yaml",
            "helm:operator/tests/webhook_test.yaml::failure policy and timeout come from values",
        ),
    },
    "platform": {
        "tests.image": acts(
            "tpl:platform/templates/tests/test-connection.yaml",
            "helm:platform/tests/platform_test.yaml::tests.image is the helm test pod's image (a mirror for air-gapped clusters)",
        ),
        "tests.imagePullPolicy": acts(
            "tpl:platform/templates/tests/test-connection.yaml",
            "helm:platform/tests/platform_test.yaml::tests.nodeSelector, tests.tolerations and tests.imagePullPolicy place the helm test pod and pull its image",
        ),
        "tests.nodeSelector": acts(
            "tpl:platform/templates/tests/test-connection.yaml",
            "helm:platform/tests/platform_test.yaml::tests.nodeSelector, tests.tolerations and tests.imagePullPolicy place the helm test pod and pull its image",
        ),
        "tests.tolerations": acts(
            "tpl:platform/templates/tests/test-connection.yaml",
            "helm:platform/tests/platform_test.yaml::tests.nodeSelector, tests.tolerations and tests.imagePullPolicy place the helm test pod and pull its image",
        ),
    },
}
