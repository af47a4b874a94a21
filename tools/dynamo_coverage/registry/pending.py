"""Rows owned by branches not yet merged into main (issue 21): each names its branch. At merge the lead
deletes that branch's rows here, runs ``make coverage-doc`` and adds the real entries ``--draft`` suggests;
the coverage test fails while a pending row also has a real entry, names a field that is gone, or names an
owner that is not a branch in flight."""

from __future__ import annotations

from ..status import Pending

PENDING: dict[str, Pending] = {
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
}
