"""docs/api-coverage.md, rendered from the rows and the registry (``python -m dynamo_coverage --write``)."""

from __future__ import annotations

import collections
import functools
from typing import Any

from . import index
from .check import coverage
from .registry import entries
from .rows import REPO, Row, all_rows
from .status import Acts, Converted, Pending, Refused, Rendered, StorageOnly, Unresolved, Warned

DOC = REPO / "docs" / "api-coverage.md"
_SCHEMA_KEYS = ("enum", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")

HEADER = """# API coverage

Regenerate with **`make coverage-doc`** (`python -m dynamo_coverage --write`); `python -m dynamo_coverage
--check` lists what is wrong, `--draft` suggests entries for rows that have none. Generated from the API
models (every field of every kind, both versions), the OperatorConfiguration and the charts' values (the
platform chart and its subcharts); the registry is `tools/dynamo_coverage/registry/`.
`tests/unit/test_api_coverage.py` fails when this file is stale, when a row has no entry, or when an entry's
evidence does not hold:

* **acts**: the named function exists and reads the field *and* is about its type: it names the field
  outside prose (a message telling the user to set it is not a reader of it) and a name the type is
  reached through or another field of its type, or it reads the field off the struct it is handed
  (`gms.get("deviceClassName")`); the named test exists and names the field (**untested** when none
  does); a chart value's template reads it, and not only into an env var that no operator code reads.
  **`make unit` proves what that reads** (`python -m dynamo_coverage --prove`, on the unit tier run under
  coverage with one context per test): every unit test an acts row names must have run a line of the
  body of a Python function the row names, and a row with Python code names at least one unit test
  (tests of the cluster tiers may stand beside it; they prove nothing here, the operator they drive runs
  in another process); a helm-unittest test must set the value (its `set`, its suite's, or a values file
  either names) and render a named template, or one that includes a named partial; code of a module that
  belongs to another kind (the request's, the model's, the checkpoint's) proves nothing about a field
  (a graph's component may act through the adapter and the checkpoint the graph creates); a field that
  only admission checks read is refused or warned, never acts. A row that fails is fixed (the test that
  runs its code, the code its test runs), not exempted. A v1alpha1 field marked *converted* is proven by
  converting a sample: setting it must change the v1beta1 object outside the annotations, and the
  v1beta1 field it lands in must act. A field marked *render shows* is proven by rendering a sample with
  and without it (beside the switch it needs, when it needs one: `spec.ingress.enabled`,
  `spec.pvcs[].create`). Both compare against the sample with the field's parents created, so that a
  status, a list item or a struct the sample alone creates does not pass for the field's effect.
* **refused**: the sample is run through the real check (admission `validate`, `parse_operator_config`,
  `helm template`) and must be refused with the quoted message.
* **warned**: accepted (upstream accepts it), but it has no effect here, and a warning says so where its
  author looks (the rule for inputs). The named code produces the warning and the named tests show it,
  held to `make unit`'s proof as an acts row's are; a row with a sample is also run through admission,
  which must admit it with the quoted warning, and through `render.notices`, which must give the same
  (what `dynamo-operator render` prints and the controllers record as an Event). An umbrella value passed
  to a subchart value that is warned about is warned too.
* **storage-only**: the quote must be in the field's description or its type's (the API reference's text);
  a v1alpha1 field converted to a storage-only v1beta1 field is storage-only too.
* **pending**: a branch not yet merged into main implements it (`registry/pending.py`; empty now
  that p2ingress, p2ckpt and harden2 have merged). At merge: delete that branch's rows from `PENDING`,
  run `make coverage-doc`, add what `python -m dynamo_coverage --draft` suggests, and review it.
* **unresolved**: no evidence yet (`registry/unresolved.py`, each with why); counted below, and the test
  fails when the count grows.

A field whose type is another API type has no row: its type's rows do. An umbrella chart value under a
subchart's key is passed to that subchart (Helm) and shown as such.

## The rule for inputs

Manifests written for upstream Dynamo work here unchanged, so an input is refused only when it

1. would do harm (a privileged pod template under `security.workloads.podTemplates.action: Deny`, a
   configuration-injecting Ingress annotation),
2. cannot act on this cluster (an API or integration the cluster does not serve, a Grove ClusterTopology
   without Grove, inter-pod GPU memory service on the Grove release this platform ships), or
3. contradicts itself so that no reading is right (two sources for one value, a failover asking for
   per-pod discovery, a required companion field missing).

Everything else acts. Where upstream accepts an input and ignores part of it, the operator accepts it too
and says which field has no effect and why, in one text from one place (`render/notices.py`): an
AdmissionReview warning (kubectl prints `Warning: <field>: <why>`), the same line on `dynamo-operator
render`'s stderr, and a `Warning` Event `FieldHasNoEffect` on the object, once per generation. Where
upstream fills in what a feature needs (failover's GPU memory service, its discovery mode and executor),
so does the operator. The two lists below are generated: the warnings from the notice rules, the
refusals from this table's **refused** rows, the fields refused whatever they hold (each message says
why). Combinations a rule refuses (a failover on a frontend, a policy with two sources) are not rows:
each feature's page lists them with the reason (gms-failover.md, multinode.md, ingress.md...).
"""


@functools.cache
def _validation_index() -> dict[str, set[str]]:
    return {
        ref: toks
        for ref, toks in index.code_index().items()
        if ref.startswith("webhooks.validation") or ref.startswith("api.config:_")
    }


def _schema_markers(row: Row) -> list[str]:
    if row.section.startswith("chart"):
        node = row.schema
        found = [k for k in _SCHEMA_KEYS if k in node]
        return [f"schema ({', '.join(found)})"] if found else []
    from dynamo_operator.api import crdgen

    info = _field_info(row)
    if info is None:
        return []
    try:
        schema = crdgen.schema_for_field(info)
    except TypeError:
        return []
    found = [k for k in (*_SCHEMA_KEYS, "x-kubernetes-validations") if k in schema]
    where = "CRD" if row.section == "api" else "model"
    return [f"{where} ({', '.join(found)})"] if found else []


def _field_info(row: Row) -> Any:
    from dynamo_operator.api import v1alpha1, v1beta1
    from dynamo_operator.api.config import types as config_types
    from dynamo_operator.api.meta import resolved_fields

    from . import rows as rows_mod

    module, _, name = row.type_key.partition(".")
    mods = {"v1alpha1": v1alpha1, "v1beta1": v1beta1, "config": config_types}
    candidates = [mods[module]] if module in mods else [v1beta1, v1alpha1, config_types]
    for mod in candidates:
        model = getattr(mod, name, None)
        if model is not None and rows_mod.type_key(model) == row.type_key:
            return resolved_fields(model).get(row.python)
    return None


def validated(row: Row) -> str:
    found = _schema_markers(row)
    if row.type_key:
        from .check import context, siblings

        about = context(row) | siblings(row)  # the rule names the field in its context, not just the word
        refs = sorted(
            r for r, toks in _validation_index().items() if row.json in toks and (not about or toks & about)
        )
        found += [f"`{r}`" for r in refs[:2]] + ([f"+{len(refs) - 2}"] if len(refs) > 2 else [])
    return ", ".join(found) or "-"


def _refs(refs: tuple[str, ...]) -> str:
    return ", ".join(f"`{r}`" for r in refs)


def status_cells(how: str, what: Any) -> tuple[str, str, str]:
    """(status, where it acts / why, tested where)."""
    if how == "subchart":
        passed = f"passed to the subchart as `{what.split(':', 2)[2]}` ({what.split(':')[1]})"
        target = entries().get(what)
        if isinstance(target, Warned):  # the umbrella row says what the subchart's row says
            return "warned", f"{passed}, which warns: {_refs(target.code)}", _refs(target.tests)
        return "acts", passed, "-"
    if how == "parent":
        return "covered", f"by `{what}` as a whole", "-"
    if isinstance(what, Acts):
        via = f" → `{what.via}`" if what.via else ""
        return "acts", _refs(what.code) + via, _refs(what.tests) or "**untested**"
    if isinstance(what, Converted) and isinstance(entries().get(what.via), StorageOnly):
        quote = entries()[what.via].quote
        return (
            "storage-only",
            f"converted to `{what.via}`, which the reference keeps stored only: “{quote}”",
            "-",
        )
    if isinstance(what, Converted):
        beside = f" beside {', '.join(f'`{k}`' for k in what.context)}" if what.context else ""
        checked = f"checked: set{beside}, it changes the v1beta1 object"
        return "acts", f"converted to `{what.via}` ({checked})", "coverage test"
    if isinstance(what, Rendered):
        beside = f" beside {', '.join(f'`{k}`' for k in what.context)}" if what.context else ""
        checked = f"checked: setting it{beside} changes what render shows"
        return "acts", f"`{what.code}` ({checked})", "coverage test"
    if isinstance(what, Warned):
        sample = ", ".join(f"`{k}`" for k in what.sample)
        said = f" {sample}: “{what.message}”" if what.sample else ""
        note = f" ({what.note})" if what.note else ""
        return (
            "warned",
            f"accepted, a warning says it has no effect:{said} {_refs(what.code)}{note}",
            (_refs(what.tests)),
        )
    if isinstance(what, Unresolved):
        return "unresolved", what.why, "-"
    if isinstance(what, Refused):
        sample = ", ".join(f"`{k}`" for k in what.sample)
        return (
            f"refused ({what.where})",
            f"{sample}: “{what.message}” {_refs(what.code)}".strip(),
            "run by the coverage test",
        )
    if isinstance(what, StorageOnly):
        return "storage-only", f"reference: “{what.quote}”", "-"
    if isinstance(what, Pending):
        return "pending", f"{what.owner}: {what.note}", "-"
    return "?", "", ""


def _table(rows: list[Row], cov: dict) -> list[str]:
    out = ["| field | validated | status | acts / refused / why | tested |", "|---|---|---|---|---|"]
    for row in rows:
        how, what = cov[row.key]
        if how == "struct":
            continue
        status, where, tested = status_cells(how, what)
        name = row.key.split(":", 2)[2] if row.section.startswith("chart") else row.json
        out.append(f"| `{name}` | {validated(row)} | {status} | {where} | {tested} |")
    return out


def summary(cov: dict) -> list[str]:
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    rows = all_rows()
    for key, (how, what) in cov.items():
        if how == "struct":
            continue
        status = status_cells(how, what)[0].split(" ")[0]
        counts[rows[key].section.split(":")[0]][status] += 1
    statuses = ("acts", "refused", "warned", "storage-only", "covered", "pending", "unresolved")
    out = ["| rows | " + " | ".join(statuses) + " | total |", "|---|" + "---|" * (len(statuses) + 1)]
    for section in ("api", "config", "chart"):
        c = counts[section]
        out.append(f"| {section} | " + " | ".join(str(c[s]) for s in statuses) + f" | {sum(c.values())} |")
    untested = sum(1 for how, what in cov.values() if isinstance(what, Acts) and not what.tests)
    owners = collections.Counter(what.owner for how, what in cov.values() if isinstance(what, Pending))
    out += ["", f"Acting rows without a test naming them: {untested}. Pending by branch: "]
    out[-1] += (", ".join(f"{o} {n}" for o, n in sorted(owners.items())) or "none") + "."
    return out


def warned_list() -> list[str]:
    """One line per notice rule (``render/notices.py``): the accepted inputs that are warned about."""
    import inspect

    from dynamo_operator.render import notices

    out = []
    for rule in notices.RULES:
        doc = " ".join((inspect.getdoc(rule) or "").split()).replace("``", "`")
        out.append(f"* `{rule.__module__.removeprefix('dynamo_operator.')}:{rule.__name__}`: {doc}")
    return out


def refused_list(rows: dict[str, Row], cov: dict) -> list[str]:
    """Every refused row: the field, where it is refused and the message that says why."""
    out = ["| field | refused at | message |", "|---|---|---|"]
    for key, (_, what) in sorted(cov.items()):
        if isinstance(what, Refused):
            row = rows[key]
            name = key.split(":", 2)[2] if row.section.startswith("chart") else key
            out.append(f"| `{name}` | {what.where} | “{what.message}” |")
    return out


def render() -> str:
    rows = all_rows()
    cov = coverage(rows)
    lines = [HEADER, "## Summary", "", *summary(cov), ""]
    lines += ["## Accepted with a warning", "", *warned_list(), ""]
    lines += ["## Refused", "", *refused_list(rows, cov), ""]
    by_type: dict[str, list[Row]] = collections.defaultdict(list)
    for row in rows.values():
        by_type[row.type_key or row.section].append(row)
    for title, section in (("API types", "api"), ("OperatorConfiguration", "config")):
        lines += [f"## {title}", ""]
        for tkey in sorted(k for k, rs in by_type.items() if rs[0].section == section):
            rs = by_type[tkey]
            if all(cov[r.key][0] == "struct" for r in rs):
                continue
            appears = sorted({w for r in rs for w in r.appears})
            lines += [f"### {tkey}", "", "Appears at: " + "; ".join(f"`{a}`" for a in appears[:6])]
            lines += ["", *_table(rs, cov), ""]
    lines += ["## Chart values", ""]
    for chart in sorted(k for k in by_type if k.startswith("chart:")):
        lines += [f"### {chart.split(':')[1]}", "", *_table(by_type[chart], cov), ""]
    return "\n".join(lines).rstrip() + "\n"
