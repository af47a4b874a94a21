"""Rows owned by branches not yet merged into main (issue 21): each names its branch. At merge the lead
deletes that branch's rows here, runs ``make coverage-doc`` and adds the real entries ``--draft`` suggests;
the coverage test fails while a pending row also has a real entry, names a field that is gone, or names an
owner that is not a branch in flight."""

from __future__ import annotations

from ..status import Pending

PENDING: dict[str, Pending] = {}
