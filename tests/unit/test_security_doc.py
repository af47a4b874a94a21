"""docs/security.md against the chart it describes (issue 30: it listed grants as absent that the chart had).

The grant reference at its end is generated from ``helm template`` (``make security-doc``); the permission
tables of "The operator's permissions", written by hand with the reason for each grant, must name exactly
the (resource, verb) cells the chart renders for the operator in any mode or opt-in variant: a rendered cell
missing from them, or a cell they name that no variant renders, fails here.

Needs the pinned helm on PATH (``make pytest`` puts .tools/bin there); no cluster.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from dynamo_coverage import grants
from support import yamlc

pytestmark = pytest.mark.tools  # helm template

OPERATOR_SA = f"{grants.RELEASE}-dynamo-operator-controller-manager"
# Every render that changes the operator's grants: the two modes, and the opt-ins with roles of their own.
VARIANTS = {
    "cluster-wide": [],
    "namespace-restricted": [],
    "no-install-hooks": ["dynamo-operator.installHooks.enabled=false"],
    "mpi-network-policy": ["dynamo-operator.dynamo.mpiRun.networkPolicy.enabled=true"],
}
SECTION = ("## The operator's permissions", "## The hooks' permissions")


def _render(variant: str) -> list[dict]:
    helm = shutil.which("helm")
    if helm is None:
        pytest.fail("helm is not on PATH: run the tests through `make pytest` (it builds the pinned tools)")
    mode = "namespace-restricted" if variant == "namespace-restricted" else "cluster-wide"
    args = [helm, "template", grants.RELEASE, str(grants.CHART), "--namespace", grants.NAMESPACE]
    args += ["--values", str(grants.CHART / "ci" / grants.MODES[mode])]
    for s in VARIANTS[variant]:
        args += ["--set", s]
    out = subprocess.run(args, capture_output=True, text=True, timeout=180, check=True).stdout
    return [d for d in yamlc.load_all(out) if isinstance(d, dict) and d.get("kind") in grants.RBAC_KINDS]


def rendered_cells() -> set[tuple[str, str]]:
    """(resource, verb) of every rule any variant binds to the operator's ServiceAccount."""
    cells = set()
    for variant in VARIANTS:
        for rule in grants.identities(_render(variant)).get(
            f"ServiceAccount {OPERATOR_SA}".replace(f"{grants.RELEASE}-", "", 1), []
        ):
            cells |= {(r, v) for r in rule.resources for v in rule.verbs}
    return cells


def _row_cells(header: list[str], row: list[str], previous: list[str]) -> tuple[list[str], set]:
    """The resources a table row names (before ``**named**``; "the same": the previous row's) and its
    (resource, verb) cells."""
    cell = row[header.index("Resource")]
    resources = (
        previous if cell.startswith("the same") else re.findall(r"`([^`]+)`", cell.split("**named**")[0])
    )
    verbs = [v.strip() for v in row[header.index("Verbs")].split(",") if v.strip()]
    return resources, {(r, v) for r in resources for v in verbs}


def documented_cells(text: str) -> set[tuple[str, str]]:
    """(resource, verb) of every row of every table with Resource and Verbs columns in the section."""
    start, end = text.index(SECTION[0]), text.index(SECTION[1])
    cells: set[tuple[str, str]] = set()
    header: list[str] = []
    previous: list[str] = []
    for line in text[start:end].splitlines():
        if not line.startswith("|"):
            header = []
            continue
        row = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = row
        elif "Resource" in header and "Verbs" in header and not set(line) <= set("|-: "):
            previous, found = _row_cells(header, row, previous)
            cells |= found
    return cells


def test_the_grant_reference_is_generated_from_the_chart() -> None:
    text = grants.DOC.read_text()
    assert grants.updated(text) == text, (
        "docs/security.md's grant reference is stale: run `make security-doc`"
    )


def test_the_operators_permission_tables_name_exactly_the_rendered_grants() -> None:
    documented, rendered = documented_cells(grants.DOC.read_text()), rendered_cells()
    assert rendered, "no rule bound to the operator rendered"
    missing = sorted(rendered - documented)
    assert not missing, f"granted by the chart, missing from docs/security.md's tables: {missing}"
    absent = sorted(documented - rendered)
    assert not absent, f"named in docs/security.md's tables, rendered by no variant of the chart: {absent}"
