"""v1alpha1 GPU memory service and failover settings that the v1beta1 form cannot carry, judged as written.

The converted kinds are validated in v1beta1 (``__init__``), where ``render.gms.problems`` judges
``experimental.gpuMemoryService`` / ``experimental.failover``. Two v1alpha1 shapes never get there:
a failover with ``numShadows`` other than 1 (v1beta1 allows exactly 1, so conversion keeps it aside), and
``extraClientPods`` on a GPU memory service that is not enabled (conversion drops a disabled service).
Both would silently do nothing; they are refused here, with v1alpha1 paths.
"""

from __future__ import annotations

from .field import FORBIDDEN, INVALID, ErrorList, Path
from .shared import d

_EXTRA_CLIENT_PODS = (
    "is reserved for inter-pod GMS client pods, which are not wired yet; remove extraClientPods (helper "
    "containers go into extraPodSpec.containers and extraClientContainers)"
)


def _check_service(c: ErrorList, svc: dict, base: Path) -> None:
    failover = d(svc.get("failover"))
    shadows = failover.get("numShadows")
    if failover.get("enabled") and shadows is not None and shadows != 1:
        c.add(
            (*base, "failover", "numShadows"),
            INVALID,
            "intra-pod failover runs exactly one active and one standby engine, and inter-pod failover "
            "(which takes more shadows) is not supported by this operator; set numShadows to 1 or omit it",
            shadows,
        )
    gms = d(svc.get("gpuMemoryService"))
    if gms.get("extraClientPods") and not gms.get("enabled"):
        c.add((*base, "gpuMemoryService", "extraClientPods"), FORBIDDEN, _EXTRA_CLIENT_PODS)


def check_alpha_gms(c: ErrorList, kind: str, obj: dict) -> None:
    """The v1alpha1 object's services (DGD ``spec.services``) or its spec (DCD)."""
    spec = d(obj.get("spec"))
    if kind == "DynamoGraphDeployment":
        for name, svc in d(spec.get("services")).items():
            _check_service(c, d(svc), ("spec", "services", ("key", name)))
    elif kind == "DynamoComponentDeployment":
        _check_service(c, spec, ("spec",))
