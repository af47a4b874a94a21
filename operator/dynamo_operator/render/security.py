"""The restricted Pod Security profile's settings on the pods the operator renders
(``security.workloads.restrictedSecurityContext``; Helm ``dynamo.enableRestrictedSecurityContext``).

Why one module: every pod the operator renders (a component's pod on the Deployment, LeaderWorkerSet and
Grove pathways, with the sidecars and init containers the operator adds; the DGDR profiling Job; the
DynamoCheckpoint Job) passes through :func:`harden_pod_spec`, so what "restricted" means is written once.

What it sets, each only where the pod template leaves the field unset (a value the author wrote is never
changed, even one the profile forbids: the API server's Pod Security admission then names it):

* pod ``securityContext``: ``runAsNonRoot: true``, ``seccompProfile: {type: RuntimeDefault}`` (next to the
  documented ``fsGroup: 1000``);
* every container, init container and ephemeral container: ``allowPrivilegeEscalation: false``,
  ``capabilities.drop: [ALL]``. ``allowPrivilegeEscalation`` is left out of a container that is
  ``privileged`` or adds ``SYS_ADMIN``: the API server refuses that combination outright, and such a
  container is not restricted anyway (admission warns about it, ``webhooks/validation/pod_privileges``).

The documented rule (defaults document, "Overriding Security Context"): *when you provide any securityContext
object in extraPodSpec, the operator will not inject any defaults; this gives you complete control, including
the ability to run as root*. So a pod template with a pod-level ``securityContext`` of its own gets nothing
from here either, at pod or container level: dropping every capability from a container the author chose to
run as root would break it (a root sshd cannot chroot or change user without capabilities). Admission warns
when the switch is on and a template opts out this way.

``runAsUser`` is not set: the profile does not require it, and a fixed UID would change images that run as a
non-root user of their own (the EPP image's 65532). The kubelet verifies ``runAsNonRoot`` when it starts a
container: an image whose user is root, or a name rather than a number, is refused there
(``CreateContainerConfigError``); set ``runAsUser`` on the container for those.
"""

from __future__ import annotations

from typing import Any

from .context import RenderContext

POD_DEFAULTS: dict[str, Any] = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
DROP_ALL = ["ALL"]
_ESCALATING_CAPABILITIES = frozenset({"SYS_ADMIN", "CAP_SYS_ADMIN"})
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def restricted(ctx: RenderContext) -> bool:
    """Whether the operator configuration asks for the restricted settings."""
    return bool(ctx.config("security", "workloads", "restrictedSecurityContext", default=False))


def author_opted_out(user_pod_spec: dict | None) -> bool:
    """A pod-level ``securityContext`` in the author's pod template (any object, ``{}`` included) means
    the author keeps complete control: no injected settings."""
    return isinstance(user_pod_spec, dict) and user_pod_spec.get("securityContext") is not None


def harden_container(container: dict) -> None:
    """``allowPrivilegeEscalation: false`` and ``capabilities.drop: [ALL]`` where unset, in place."""
    sc = container.get("securityContext")
    sc = dict(sc) if isinstance(sc, dict) else {}
    caps = sc.get("capabilities")
    caps = dict(caps) if isinstance(caps, dict) else {}
    added = {str(c).upper() for c in caps.get("add") or []}
    escalating = sc.get("privileged") is True or bool(added & _ESCALATING_CAPABILITIES)
    if "allowPrivilegeEscalation" not in sc and not escalating:
        sc["allowPrivilegeEscalation"] = False
    if "drop" not in caps:
        caps["drop"] = list(DROP_ALL)
    sc["capabilities"] = caps
    container["securityContext"] = sc


def harden_pod_spec(pod_spec: dict, user_pod_spec: dict | None) -> None:
    """The restricted settings on ``pod_spec`` (rendered, in place), unless the author's pod template
    ``user_pod_spec`` (None: the operator wrote the whole pod) has a pod-level securityContext."""
    if author_opted_out(user_pod_spec):
        return
    sc = pod_spec.get("securityContext")
    sc = dict(sc) if isinstance(sc, dict) else {}
    for key, value in POD_DEFAULTS.items():
        sc.setdefault(key, dict(value) if isinstance(value, dict) else value)
    pod_spec["securityContext"] = sc
    for key in CONTAINER_LISTS:
        for container in pod_spec.get(key) or []:
            if isinstance(container, dict):
                harden_container(container)


def harden_job(job: dict, enabled: bool, user_pod_spec: dict | None = None) -> dict:
    """A rendered Job with its pod template hardened when ``enabled`` (the controllers' one call);
    ``user_pod_spec`` is the author's pod spec the Job runs (a DynamoCheckpoint's), None when the operator
    wrote the pod (the DGDR profiling Job). Returns ``job``."""
    if enabled:
        pod = ((job.get("spec") or {}).get("template") or {}).get("spec")
        if isinstance(pod, dict):
            harden_pod_spec(pod, user_pod_spec)
    return job


__all__ = [
    "POD_DEFAULTS",
    "author_opted_out",
    "harden_container",
    "harden_job",
    "harden_pod_spec",
    "restricted",
]
