"""The helm-unittest suites pick a template's documents by what they are, not by where they are: a
``documentSelector`` (a name, a kind, a label) fails loudly ("document not found", "multiple indexes
found") when a template gains, loses or reorders a document, where a ``documentIndex`` goes on asserting
against whatever document now sits at that position. A template with one document needs neither."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]


def _suites() -> list[Path]:
    # charts/platform/charts/* are symlinks to the components: each suite once, by its real path
    found = {path.resolve() for path in (REPO_ROOT / "charts").glob("**/tests/*_test.yaml")}
    return sorted(found)


def _positional(suite: Path) -> list[str]:
    doc = yaml.safe_load(suite.read_text())
    where = []
    for test in doc.get("tests") or []:
        if "documentIndex" in test:
            where.append(f"{test['it']!r}")
        where += [
            f"{test['it']!r} asserts[{i}]"
            for i, assertion in enumerate(test.get("asserts") or [])
            if "documentIndex" in assertion
        ]
    return where


def test_the_suites_are_found():
    names = {path.name for path in _suites()}
    assert {"rbac_test.yaml", "etcd_test.yaml", "platform_test.yaml"} <= names


def test_no_suite_picks_a_document_by_position():
    positional = {}
    for suite in _suites():
        if where := _positional(suite):
            positional[str(suite.relative_to(REPO_ROOT))] = where
    assert not positional, (
        "documentIndex in a helm-unittest suite: name the document with a documentSelector instead"
        " (path: metadata.name or kind, value: ...), or drop it where the template renders one"
        f" document: {positional}"
    )


def _vacuous_negations(suite: Path) -> list[str]:
    doc = yaml.safe_load(suite.read_text())
    where = []
    for test in doc.get("tests") or []:
        for i, assertion in enumerate(test.get("asserts") or []):
            negated = assertion.get("not") and "containsDocument" in assertion
            if negated and not assertion["containsDocument"].get("any"):
                where.append(f"{test['it']!r} asserts[{i}]")
    return where


def test_a_negated_containsdocument_looks_at_every_document():
    """helm-unittest (v1.1) passes ``containsDocument`` with ``not: true`` as soon as one selected
    document differs from it, unless ``any: true``: without it, "renders no such Job" holds for any
    template that renders anything else."""
    vacuous = {}
    for suite in _suites():
        if where := _vacuous_negations(suite):
            vacuous[str(suite.relative_to(REPO_ROOT))] = where
    assert not vacuous, f"containsDocument with not: true needs any: true: {vacuous}"


def _repeats_its_selector(suite: Path) -> list[str]:
    doc = yaml.safe_load(suite.read_text())
    where = []
    for test in doc.get("tests") or []:
        for i, assertion in enumerate(test.get("asserts") or []):
            sel = assertion.get("documentSelector") or test.get("documentSelector") or {}
            if not sel or assertion.get("not"):
                continue
            kind = (assertion.get("isKind") or {}).get("of")
            equal = assertion.get("equal") or {}
            same_kind = sel.get("path") == "kind" and kind is not None and kind == sel.get("value")
            same_field = "path" in equal and (equal["path"], equal.get("value")) == (
                sel.get("path"),
                sel.get("value"),
            )
            if same_kind or same_field:
                where.append(f"{test['it']!r} asserts[{i}]")
    return where


def test_no_assertion_repeats_its_documents_selector():
    """An assertion that checks the very field and value its ``documentSelector`` picked the document by
    holds for every document it can ever see: it cannot fail. Check something else about the document."""
    repeats = {}
    for suite in _suites():
        if where := _repeats_its_selector(suite):
            repeats[str(suite.relative_to(REPO_ROOT))] = where
    assert not repeats, f"assertions that repeat their documentSelector (they cannot fail): {repeats}"


def test_the_repeat_check_finds_one(tmp_path):
    suite = tmp_path / "x_test.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "tests": [
                    {
                        "it": "t",
                        "documentSelector": {"path": "kind", "value": "Role"},
                        "asserts": [{"isKind": {"of": "Role"}}, {"equal": {"path": "kind", "value": "Role"}}],
                    }
                ]
            }
        )
    )
    assert _repeats_its_selector(suite) == ["'t' asserts[0]", "'t' asserts[1]"]
