"""``python -m dynamo_coverage``: ``--write`` regenerates docs/api-coverage.md, ``--check`` reports stale or
unsound entries (exit 1), ``--prove`` holds every "acts" row to what the unit tier's tests really ran (the
coverage data ``make unit`` writes; exit 1), ``--draft`` suggests entries for rows that have none."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import check, doc, draft, proof
from .rows import all_rows, subchart_target


def _draft() -> None:
    rows = all_rows()
    cov = check.coverage(rows)
    current = None
    for key, row in sorted(rows.items(), key=lambda kv: (kv[1].section, kv[1].type_key)):
        if cov[key][0] != "missing":
            continue
        group = row.type_key or row.section
        if group != current:
            print(f'    "{group}": {{' if row.type_key else f"# {group}")
            current = group
        print(draft.api_entry(row) if row.type_key else draft.chart_entry(row))
    _ = subchart_target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate docs/api-coverage.md")
    parser.add_argument("--check", action="store_true", help="exit 1 on a stale table or unsound entry")
    parser.add_argument("--draft", action="store_true", help="suggest entries for rows without one")
    parser.add_argument("--prove", action="store_true", help="each acts row's test ran its code (exit 1)")
    parser.add_argument("--data", type=Path, default=proof.DATA, help="coverage data of the unit tier")
    args = parser.parse_args(argv)
    if args.prove:
        if not args.data.exists():
            print(f"no coverage data at {args.data}: run `make unit` first", file=sys.stderr)
            return 2
        found = proof.problems(args.data)
        for line in found:
            print(line, file=sys.stderr)
        said = f"coverage proof: {len(found)} problem(s): a named test that does not run the named code"
        print(said, file=sys.stderr)
        return 1 if found else 0
    if args.draft:
        _draft()
        return 0
    if args.write:
        doc.DOC.write_text(doc.render())
        print(f"wrote {doc.DOC}")
        return 0
    found = check.problems()
    if doc.DOC.read_text() != doc.render():
        found.append(f"{doc.DOC} is stale: run `make coverage-doc`")
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
