"""Garbage OperatorConfiguration files: the operator refuses every one with a ``ConfigError`` that names the
file, the key and what to do, never a traceback (the message is all a crash-looping pod's log shows)."""

from __future__ import annotations

import copy

import pytest
import yaml
from dynamo_operator.api.config import DEFAULTS, ConfigError, load_operator_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
HEADER = {"apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1", "kind": "OperatorConfiguration"}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**33), 2**33), st.floats(allow_nan=False), st.text(max_size=10)
)
garbage = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3)
    ),
    max_leaves=5,
)


def _paths(doc: dict, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for key, value in doc.items():
        out.append((*prefix, key))
        if isinstance(value, dict):
            out.extend(_paths(value, (*prefix, key)))
    return out


KNOWN_PATHS = _paths(DEFAULTS)


@st.composite
def broken_configs(draw) -> dict:
    """A valid document with one to three keys replaced by garbage, misspelt, or added."""
    doc = {**HEADER, **copy.deepcopy(DEFAULTS)}
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(KNOWN_PATHS))
        parent = doc
        for key in path[:-1]:
            if not isinstance(parent.get(key), dict):
                parent[key] = {}
            parent = parent[key]
        how = draw(st.sampled_from(["replace", "misspell", "add"]))
        if how == "replace":
            parent[path[-1]] = draw(garbage)
        elif how == "misspell" and path[-1] in parent:
            parent[path[-1][:-1] + "x"] = parent.pop(path[-1])
        else:
            parent[draw(st.text(min_size=1, max_size=8))] = draw(garbage)
    return doc


def check(path, text: str) -> None:
    path.write_text(text)
    try:
        load_operator_config(path)
    except ConfigError as e:
        message = str(e)
        assert str(path) in message, message  # the file
        assert e.errors and all(field for field, _ in e.errors), message  # the key
        assert all(detail for _, detail in e.errors), message  # what is wrong / the fix
    # a document garbage did not break is fine; any other exception type fails the test


@FUZZ
@given(broken_configs())
def test_broken_configs_get_clear_errors(tmp_path_factory, doc: dict) -> None:
    check(tmp_path_factory.mktemp("cfg") / "config.yaml", yaml.safe_dump(doc))


@FUZZ
@given(garbage)
def test_any_yaml_document_gets_a_clear_error(tmp_path_factory, doc) -> None:
    check(tmp_path_factory.mktemp("cfg") / "config.yaml", yaml.safe_dump(doc))


@pytest.mark.parametrize(
    "text, key, hint",
    [
        ("leaderElecton: {enabled: true}\n", "leaderElecton", "did you mean 'leaderElection'"),
        ("server: {metrics: {port: http}}\n", "server.metrics.port", "got 'http'"),
        ("namespace: {scope: {leaseDuration: 30}}\n", "namespace.scope.leaseDuration", "got 30"),
        ("- a\n- b\n", "<file>", "must hold one mapping"),
        ("server: [\n", "<file>", "is not valid YAML"),
        (b"\xff\xfe\x00".decode("latin-1"), "<file>", ""),
    ],
)
def test_named_mistakes(tmp_path, text, key, hint) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_operator_config(path)
    message = str(info.value)
    assert str(path) in message and key in message and hint in message, message
