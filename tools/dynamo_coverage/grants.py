"""``python -m dynamo_coverage.grants``: the grant reference of docs/security.md, generated from the chart.

Every rule the chart renders, per identity (the operator in both modes, its hooks, the workloads' roles, the
Grove and KAI operators), is listed between the ``GENERATED`` markers of docs/security.md; ``--write``
regenerates them and tests/unit/test_security_doc.py fails while they differ from what ``helm template``
renders, so the document can neither miss a grant the chart has nor name one it does not (issue 30). The
prose tables above them say why each grant exists; the same test checks they name exactly the rendered
resources and verbs.

Needs the pinned helm on PATH (``make security-doc`` puts .tools/bin there).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "charts" / "platform"
DOC = REPO_ROOT / "docs" / "security.md"
BEGIN = "<!-- BEGIN GENERATED: grants (python -m dynamo_coverage.grants --write) -->"
END = "<!-- END GENERATED: grants -->"
RELEASE, NAMESPACE = "rel", "dynamo-system"
# The two renders every grant comes from: the CI values of each mode (Grove and KAI on in the first).
MODES = {
    "cluster-wide": "cluster-wide-values.yaml",
    "namespace-restricted": "namespace-restricted-values.yaml",
}
RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


@dataclass(frozen=True)
class Rule:
    """One rule of one role, where it applies."""

    role: str  # "ClusterRole <name>" or "Role <namespace>/<name>"
    groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    names: tuple[str, ...]


def render(mode: str) -> list[dict]:
    """``helm template`` of the chart (hooks included) with the mode's CI values."""
    helm = shutil.which("helm")
    if helm is None:
        raise SystemExit("helm is not on PATH: run `make security-doc` (it puts the pinned tools there)")
    args = [helm, "template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    args += ["--values", str(CHART / "ci" / MODES[mode])]
    out = subprocess.run(args, capture_output=True, text=True, timeout=180, check=True).stdout
    return [d for d in yaml.safe_load_all(out) if isinstance(d, dict) and d.get("kind") in RBAC_KINDS]


def _role_label(doc: dict) -> str:
    md = doc["metadata"]
    return f"Role {md['namespace']}/{md['name']}" if doc["kind"] == "Role" else f"ClusterRole {md['name']}"


def _rules(role: dict) -> list[Rule]:
    return [
        Rule(
            _role_label(role),
            tuple(r.get("apiGroups") or ()),
            tuple(r.get("resources") or ()),
            tuple(r.get("verbs") or ()),
            tuple(r.get("resourceNames") or ()),
        )
        for r in role.get("rules") or []
    ]


def identities(docs: list[dict]) -> dict[str, list[Rule]]:
    """Rules per identity: each ServiceAccount a binding names (by its ``<release>-`` less name), then the
    roles no chart binding binds (the workloads' ClusterRoles the operator binds, the metrics reader)."""
    roles = {
        (d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d
        for d in docs
        if "Binding" not in d["kind"]
    }
    out: dict[str, list[Rule]] = {}
    bound: set[tuple] = set()
    for b in (d for d in docs if d["kind"].endswith("Binding")):
        ref = b["roleRef"]
        key = (ref["kind"], b["metadata"].get("namespace") if ref["kind"] == "Role" else None, ref["name"])
        for s in b.get("subjects") or []:
            if s.get("kind") == "ServiceAccount" and key in roles:
                who = f"ServiceAccount {s['name'].removeprefix(RELEASE + '-')}"
                out.setdefault(who, []).extend(r for r in _rules(roles[key]) if r not in out.get(who, []))
                bound.add(key)
    for key, role in sorted(roles.items(), key=lambda kv: str(kv[0])):
        if key not in bound:
            out.setdefault("bound by the operator or by you", []).extend(_rules(role))
    return out


def _cell(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{v}`" if v else '`""`' for v in values) or "-"


def section() -> str:
    """The generated part of docs/security.md (markers included)."""
    lines = [BEGIN, ""]
    for mode in MODES:
        for who, rules in sorted(identities(render(mode)).items()):
            lines += [
                f"#### {who} ({mode})",
                "",
                "| Role | API groups | Resources | Verbs | Names |",
                "|---|---|---|---|---|",
            ]
            for r in rules:
                role = r.role.replace(f"{RELEASE}-", "<release>-")
                names = tuple(n.replace(f"{RELEASE}-", "<release>-") for n in r.names)
                cells = (_cell(r.groups), _cell(r.resources), _cell(r.verbs), _cell(names))
                lines.append(f"| {role} | " + " | ".join(cells) + " |")
            lines.append("")
    lines.append(END)
    return "\n".join(lines)


def updated(text: str) -> str:
    """``text`` (docs/security.md) with its generated part replaced."""
    head, sep, rest = text.partition(BEGIN)
    if not sep or END not in rest:
        raise SystemExit(f"{DOC}: the {BEGIN!r} and {END!r} markers are missing")
    return head + section() + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="regenerate the grant reference of docs/security.md"
    )
    args = parser.parse_args(argv)
    text = DOC.read_text()
    new = updated(text)
    if args.write:
        DOC.write_text(new)
        print(f"wrote {DOC}")
        return 0
    print("up to date" if new == text else "stale: run `make security-doc`")
    return 0 if new == text else 1


if __name__ == "__main__":
    raise SystemExit(main())
