"""DGD status on the Grove pathway, read back from what Grove creates (pure).

Grove turns the PodCliqueSet into PodCliques (single-node components) and PodCliqueScalingGroups
(multinode components) named ``<pcs>-0-<lower component>``. A component is ready when its PodClique has
``readyReplicas`` (or its scaling group ``availableReplicas``) at the desired count. Without a running
Grove operator (the local kwok cluster) nothing is created: the status says exactly that, naming the
PodCliqueSet and the missing object, instead of waiting silently or claiming readiness.
"""

from __future__ import annotations

from dynamo_operator.render import grove as rgrove

from . import status as st

_i = st._i  # same lenient integer reading as the Deployment status


def pcs_observed(pcs: dict | None) -> bool:
    """Grove has reconciled the PodCliqueSet's current generation."""
    if pcs is None:
        return False
    seen = (pcs.get("status") or {}).get("observedGeneration")
    return seen is not None and _i(seen) >= _i((pcs.get("metadata") or {}).get("generation"))


def component_readiness(
    kind: str, name: str, obj: dict | None, desired: int, pcs: dict | None
) -> st.Readiness:
    """Readiness of one component from its PodClique / PodCliqueScalingGroup (None: not created)."""
    md = (pcs or {}).get("metadata") or {}
    pcs_ref = f"PodCliqueSet {md.get('namespace')}/{md.get('name')}"
    if obj is None:
        if pcs is None:
            return st.Readiness(False, st.NOT_CREATED, f"{pcs_ref} not created yet")
        if (pcs.get("status") or {}).get("observedGeneration") is None:
            return st.Readiness(
                False,
                st.ORCHESTRATOR_MISSING,
                f"{kind} {name} does not exist: {pcs_ref} was accepted but no Grove operator has reconciled "
                "it (no status.observedGeneration); install or start Grove (grove.enabled=true)",
            )
        return st.Readiness(False, st.NOT_CREATED, f"{kind} {name} not created by Grove yet")
    if not pcs_observed(pcs):
        return st.Readiness(False, st.UPDATING, f"Grove has not observed generation of {pcs_ref} yet")
    s = obj.get("status") or {}
    field = "availableReplicas" if kind == rgrove.PCSG_KIND else "readyReplicas"
    have = _i(s.get(field))
    unit = "replica groups available" if kind == rgrove.PCSG_KIND else "replicas ready"
    msg = f"{kind} {name}: {have}/{desired} {unit}"
    if desired == 0 or have >= desired:
        return st.Readiness(True, "", msg)
    return st.Readiness(False, st.PODS_NOT_READY, msg)


def replica_status(kind: str, name: str, runtime_namespace: str | None, obj: dict | None) -> dict:
    """``ComponentReplicaStatus`` of a PodClique (ready count) or PodCliqueScalingGroup (available count);
    ``scheduledReplicas`` is Grove's own count, in the same units (pods of a clique, groups of a scaling
    group), once Grove has reported it."""
    reported = ((obj or {}).get("status") or {}).get("scheduledReplicas")
    out = st.replica_status(kind, name, runtime_namespace, obj, None if reported is None else _i(reported))
    out.pop("readyReplicas" if kind == rgrove.PCSG_KIND else "availableReplicas")
    return out
