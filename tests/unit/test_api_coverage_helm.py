"""The coverage table's install refusals happen: each chart value marked "refused (install)" is run through
the pinned `helm template` and must fail with the quoted message (the unit tier cannot: it has no helm)."""

from __future__ import annotations

import pytest
from dynamo_coverage import check
from dynamo_coverage.registry import entries
from dynamo_coverage.rows import all_rows
from dynamo_coverage.status import Refused

pytestmark = pytest.mark.tools


def test_every_install_refusal_happens() -> None:
    rows, table = all_rows(), entries()
    install = {k: s for k, s in table.items() if isinstance(s, Refused) and s.where == "install"}
    assert install, "the registry lists no install refusal: this test would prove nothing"
    found = [f"{k}: {p}" for k, s in sorted(install.items()) for p in check.refusal_problems(rows[k], s)]
    assert not found, "install refusals that do not happen:\n  " + "\n  ".join(found)
