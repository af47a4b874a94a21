"""Pod templates that ask for more than a workload needs: admission warns (or, configured, denies).

The operator renders a DGD author's pod template as it is, so a DynamoGraphDeployment is as powerful as the
pods it describes. This rule names, in an AdmissionReview warning (``kubectl`` prints them), every setting in
a DynamoGraphDeployment's or DynamoComponentDeployment's pod templates that reaches past the pod:

* ``privileged``: a privileged container (``securityContext.privileged: true``);
* ``hostPath``: a hostPath volume;
* ``hostNetwork``, ``hostPID``, ``hostIPC``: the node's namespaces;
* ``addedCapabilities``: ``securityContext.capabilities.add`` beyond ``NET_BIND_SERVICE`` (which the
  restricted Pod Security profile allows) and ``allowedCapabilities``;
* ``serviceAccountName``: a ServiceAccount other than ``default`` and the one the operator gives the
  component (``planner-serviceaccount`` for a planner, ``epp-serviceaccount`` for an EPP), or
  ``allowedServiceAccounts``: the pod would act with that account's permissions.

Configuration (``security.workloads.podTemplates``, docs/security.md): ``allow`` lists the settings that pass
without a word; ``action: Deny`` refuses a request that *adds* such a setting (one the old object already had
is only warned about, so objects admitted before the switch stay updatable). Warnings never block, and Pod
Security admission of the namespace stays the enforcement point for the pods themselves.

With ``security.workloads.restrictedSecurityContext`` on, a pod template that sets its own pod
``securityContext`` is told that the operator injects nothing into it (the defaults document's rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dynamo_operator.api.fieldpaths import to_alpha_path
from dynamo_operator.render.names import EPP_SERVICE_ACCOUNT, PLANNER_SERVICE_ACCOUNT
from dynamo_operator.render.notices import components

from .field import FORBIDDEN, ErrorList, Path, format_path
from .pod_policy import ALWAYS_ALLOWED_CAPABILITIES, CONFIG_KEY, PodTemplatePolicy, cap
from .shared import Context, d, lst

KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment")
SETTINGS = (
    "privileged",
    "hostPath",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "addedCapabilities",
    "serviceAccountName",
)
_OPERATOR_ACCOUNTS = {"planner": PLANNER_SERVICE_ACCOUNT, "epp": EPP_SERVICE_ACCOUNT}
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
_WHY = {
    "privileged": "a privileged container has every device and capability of its node",
    "hostPath": "a hostPath volume reads or writes the node's own files",
    "hostNetwork": "the pod shares its node's network namespace (every host port and interface)",
    "hostPID": "the pod sees and can signal every process of its node",
    "hostIPC": "the pod shares its node's IPC namespace (shared memory of other pods and the host)",
    "addedCapabilities": "added capabilities widen what the container may do to its node",
    "serviceAccountName": "the pod acts with that ServiceAccount's permissions",
}


@dataclass(frozen=True)
class Finding:
    """One setting of one pod template; ``key`` identifies it across versions of the object (component
    name, setting, container or volume name), so an UPDATE can tell a new one from one already there."""

    path: Path  # v1beta1
    setting: str
    value: Any
    key: tuple


def _container_findings(
    out: list[Finding], base: Path, name: Any, pod: dict, policy: PodTemplatePolicy
) -> None:
    for key in _CONTAINER_LISTS:
        containers = pod.get(key)
        if not isinstance(containers, list):
            continue
        for j, ctr in enumerate(containers):
            # a container without a securityContext object has nothing to report (the common case)
            sc = ctr.get("securityContext") if isinstance(ctr, dict) else None
            if not isinstance(sc, dict) or not sc:
                continue
            cname = ctr.get("name") or j
            path = (*base, "podTemplate", "spec", key, j, "securityContext")
            if sc.get("privileged") is True:
                out.append(Finding((*path, "privileged"), "privileged", True, (name, "privileged", cname)))
            added = sorted(
                {cap(c) for c in lst(d(sc.get("capabilities")).get("add"))}
                - ALWAYS_ALLOWED_CAPABILITIES
                - policy.allowed_capabilities
            )
            if added:
                where = (*path, "capabilities", "add")
                out.append(
                    Finding(where, "addedCapabilities", added, (name, "addedCapabilities", cname, *added))
                )


def _pod_findings(out: list[Finding], base: Path, comp: dict, policy: PodTemplatePolicy) -> None:
    """Append the findings of one component's pod template to ``out``, in the order: host namespaces,
    hostPath volumes, containers, service accounts. Plain loops, not generators: admission walks every
    component of every review (a profile of the benchmark's reviews had this rule first)."""
    name = comp.get("name")
    pod = d(d(comp.get("podTemplate")).get("spec"))
    if not pod:
        return
    spec_path = (*base, "podTemplate", "spec")
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(field) is True:
            out.append(Finding((*spec_path, field), field, True, (name, field)))
    volumes = pod.get("volumes")
    if isinstance(volumes, list):
        for j, vol in enumerate(volumes):
            if isinstance(vol, dict) and vol.get("hostPath") is not None:
                host = d(vol.get("hostPath")).get("path")
                out.append(
                    Finding(
                        (*spec_path, "volumes", j, "hostPath"), "hostPath", host, (name, "hostPath", host)
                    )
                )
    _container_findings(out, base, name, pod, policy)
    for field in ("serviceAccountName", "serviceAccount"):  # serviceAccount: the deprecated alias
        account = pod.get(field)
        if isinstance(account, str) and account and account not in policy.allowed_service_accounts:
            own = _OPERATOR_ACCOUNTS.get(str(comp.get("type")))
            if account != "default" and account != own:
                out.append(
                    Finding((*spec_path, field), "serviceAccountName", account, (name, field, account))
                )


def findings(kind: str, beta: Any, policy: PodTemplatePolicy) -> list[Finding]:
    """The settings of a (v1beta1) DGD or DCD's pod templates this rule reports, minus ``policy.allow``."""
    if kind not in KINDS or not isinstance(beta, dict):
        return []
    out: list[Finding] = []
    for base, comp in components(kind, beta):
        _pod_findings(out, base, comp, policy)
    if policy.allow:
        out = [f for f in out if f.setting not in policy.allow]
    return out


def _message(f: Finding) -> str:
    return (
        f"{_WHY[f.setting]}; remove it if the workload does not need it, or allow it in the operator "
        f"configuration ({CONFIG_KEY}.{_allow_key(f.setting)})"
    )


def _allow_key(setting: str) -> str:
    if setting == "addedCapabilities":
        return "allowedCapabilities"
    if setting == "serviceAccountName":
        return "allowedServiceAccounts"
    return f"allow: [{setting}]"


def _opt_out_warnings(kind: str, beta: dict) -> list[tuple[Path, str]]:
    out = []
    for base, comp in components(kind, beta):
        if d(d(comp.get("podTemplate")).get("spec")).get("securityContext") is not None:
            out.append(
                (
                    (*base, "podTemplate", "spec", "securityContext"),
                    "is set, so the operator injects no security settings into these pods "
                    "(security.workloads.restrictedSecurityContext applies only to templates without "
                    "one); under an enforced restricted Pod Security level set runAsNonRoot and "
                    "seccompProfile here and allowPrivilegeEscalation: false and capabilities.drop: [ALL] "
                    "on every container",
                )
            )
    return out


def check_pod_templates(
    c: ErrorList, kind: str, version: str, beta: dict, obj: dict, beta_old: dict | None, ctx: Context
) -> None:
    """Warn about (or deny) the pod template settings of a DGD/DCD; paths in the version the user wrote
    (``obj``: the request's object, ``beta``: its v1beta1 form).

    The operator's own writes are not checked: the DCDs it writes carry the pod templates of a DGD that
    passed this check at its own admission (or was admitted before ``Deny`` and is grandfathered), and
    refusing them would leave such a graph half-deployed."""
    if kind not in KINDS or (ctx.username is not None and ctx.username in ctx.operator_usernames):
        return
    policy = ctx.pod_templates if isinstance(ctx.pod_templates, PodTemplatePolicy) else PodTemplatePolicy()
    old_keys = {f.key for f in findings(kind, beta_old, policy)} if beta_old is not None else set()

    def shown(path: Path) -> Path:
        if version == "v1beta1":
            return path
        try:
            return to_alpha_path(kind, path, beta, obj)
        except Exception:  # an unmappable path stays in v1beta1 terms, as for the other rules
            return path

    for f in findings(kind, beta, policy):
        if policy.action == "Deny" and f.key not in old_keys:
            c.add(shown(f.path), FORBIDDEN, _message(f), f.value)
        else:
            c.warn(f"{format_path(shown(f.path))}: {_message(f)}")
    if policy.restricted:
        for path, text in _opt_out_warnings(kind, beta):
            c.warn(f"{format_path(shown(path))} {text}")


__all__ = ["CONFIG_KEY", "SETTINGS", "Finding", "PodTemplatePolicy", "check_pod_templates", "findings"]
