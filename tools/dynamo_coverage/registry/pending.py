"""Rows owned by branches not yet merged into main (issue 21): each names its branch. At merge the lead
deletes that branch's rows here, runs ``make coverage-doc`` and adds the real entries ``--draft`` suggests;
the coverage test fails while a pending row also has a real entry, names a field that is gone, or names an
owner that is not a branch in flight."""

from __future__ import annotations

from ..status import Pending

PENDING: dict[str, Pending] = {
    "chart:operator:dynamo.enableRestrictedSecurityContext": Pending(
        "harden2", "security.workloads.restrictedSecurityContext"
    ),
    "chart:operator:dynamo.virtualServiceSupportsHTTPS": Pending("p2ingress", "VirtualService HTTPS"),
    "config.IngressConfiguration.controllerClassName": Pending(
        "p2ingress", "Ingress / VirtualService / PVCs"
    ),
    "config.IngressConfiguration.controllerTLSSecretName": Pending(
        "p2ingress", "Ingress / VirtualService / PVCs"
    ),
    "config.IngressConfiguration.hostSuffix": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "config.IngressConfiguration.virtualServiceGateway": Pending(
        "p2ingress", "Ingress / VirtualService / PVCs"
    ),
    "config.MPIConfiguration.sshSecretNamespace": Pending(
        "p2ingress", "the MPI SSH Secret copied where the pods are"
    ),
    "v1alpha1.DynamoCheckpointStatus.identityHash": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.DynamoCheckpointStatus.podSnapshotName": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.IngressSpec.host": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.IngressSpec.hostPrefix": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.IngressSpec.hostSuffix": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.IngressSpec.ingressControllerClassName": Pending(
        "p2ingress", "Ingress / VirtualService / PVCs"
    ),
    "v1alpha1.IngressSpec.useVirtualService": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.IngressSpec.virtualServiceGateway": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.IngressTLSSpec.secretName": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.PVC.create": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.PVC.size": Pending("p2ingress", "spec.pvcs[] create: true"),
    "v1alpha1.PVC.storageClass": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.PVC.volumeAccessMode": Pending("p2ingress", "Ingress / VirtualService / PVCs"),
    "v1alpha1.PodSnapshotContentSource.nodeName": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.PodSnapshotStatus.boundPodSnapshotContentName": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointConfig.checkpointRef": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointConfig.deletionPolicy": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointConfig.startupPolicy": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointConfig.targetContainerName": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointJobConfig.gmsClientContainers": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointStatus.checkpointID": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointStatus.checkpointName": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointStatus.identityHash": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1alpha1.ServiceCheckpointStatus.ready": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.ComponentCheckpointConfig.deletionPolicy": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.ComponentCheckpointConfig.startupPolicy": Pending("p2ckpt", "WaitForCheckpoint"),
    "v1beta1.ComponentCheckpointJobConfig.gmsClientContainers": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.ComponentCheckpointStatus.checkpointName": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.ComponentCheckpointStatus.identityHash": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.ComponentCheckpointStatus.ready": Pending("p2ckpt", "status.checkpoints"),
    "v1beta1.DynamoCheckpointIdentity.dtype": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.DynamoCheckpointIdentity.dynamoVersion": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.DynamoCheckpointIdentity.extraParameters": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.DynamoCheckpointIdentity.maxModelLen": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.DynamoCheckpointIdentity.pipelineParallelSize": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
    "v1beta1.DynamoCheckpointIdentity.tensorParallelSize": Pending(
        "p2ckpt", "component checkpoint lifecycle / checkpoint status"
    ),
}
