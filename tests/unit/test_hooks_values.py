"""Values precedence and helm's --set syntax, as preflight must see the same values helm renders with."""

from pathlib import Path

import pytest
from dynamo_hooks.settings import CertMode, InstallSettings, OperatorMode
from dynamo_hooks.values import ValuesError, compute_values, deep_merge, lookup, parse_set


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("a.b=c", {"a": {"b": "c"}}),
        ("a=true,b=false,c=null", {"a": True, "b": False, "c": None}),
        ("n=42,z=0,o=007,f=1.5,neg=-3", {"n": 42, "z": 0, "o": "007", "f": "1.5", "neg": -3}),
        ("list={a,b,3}", {"list": ["a", "b", 3]}),
        ("empty={}", {"empty": []}),
        ("x[1].y=v", {"x": [None, {"y": "v"}]}),
        (r"nodeSelector.kubernetes\.io/os=linux", {"nodeSelector": {"kubernetes.io/os": "linux"}}),
        (r"msg=a\,b", {"msg": "a,b"}),
        (
            "dynamo-operator.namespaceRestriction.enabled=true",
            {"dynamo-operator": {"namespaceRestriction": {"enabled": True}}},
        ),
        ("url=nats://h:4222", {"url": "nats://h:4222"}),
    ],
)
def test_parse_set(expr: str, expected: dict) -> None:
    assert parse_set(expr) == expected


def test_set_string_keeps_strings() -> None:
    assert parse_set("a=true,b=1,l={1,2}", as_string=True) == {"a": "true", "b": "1", "l": ["1", "2"]}


def test_set_without_equals_is_a_usage_error() -> None:
    with pytest.raises(ValuesError, match="no '='"):
        parse_set("justakey")


def test_precedence_chart_then_files_then_set(tmp_path: Path) -> None:
    chart = {"nats": {"enabled": True, "port": 4222}, "etcd": {"enabled": True}}
    first = tmp_path / "a.yaml"
    first.write_text("nats:\n  port: 1\netcd:\n  enabled: false\n")
    second = tmp_path / "b.yaml"
    second.write_text("nats:\n  port: 2\n")
    values = compute_values(chart, [first, second], ["nats.port=3", "etcd=null"], ["nats.enabled=false"])
    assert values == {"nats": {"enabled": "false", "port": 3}}
    assert chart["nats"]["port"] == 4222  # inputs are not mutated


def test_values_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ValuesError, match=r"bad\.yaml"):
        compute_values({}, [bad])
    with pytest.raises(ValuesError, match="cannot read"):
        compute_values({}, [tmp_path / "missing.yaml"])


def test_deep_merge_and_lookup() -> None:
    merged = deep_merge({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}, "d": [1]})
    assert merged == {"a": {"b": 1, "c": 3}, "d": [1]}
    assert lookup(merged, "a.c") == 3
    assert lookup(merged, "a.zz", "dflt") == "dflt"


def test_settings_from_values() -> None:
    values = compute_values(
        {},
        set_values=[
            "dynamo-operator.namespaceRestriction.enabled=true",
            "dynamo-operator.webhook.certManager.enabled=true",
            "etcd.persistence.storageClass=fast",
            "grove.enabled=true",
            "dynamo-operator.orchestrators.lws.enabled=true",
        ],
    )
    s = InstallSettings.from_values(values, release_name="r", release_namespace="team-a")
    assert s.mode is OperatorMode.NAMESPACE_RESTRICTED
    assert s.target_namespace == "team-a" and s.leader_election_namespace == "team-a"
    assert s.cert_mode is CertMode.CERT_MANAGER
    etcd = next(p for p in s.persistence if p.component == "etcd")
    assert etcd.enabled and etcd.storage_class == "fast"
    apis = {a.name: a for a in s.optional_apis}
    assert apis["grove"].installed_by_chart and apis["lws"].required_by_operator
    assert not apis["kai-scheduler"].installed_by_chart

    cw = InstallSettings.from_values({}, release_name="r", release_namespace="dynamo-system")
    assert cw.mode is OperatorMode.CLUSTER_WIDE and cw.leader_election_namespace == "kube-system"
    assert cw.mpi_secret_name == "mpi-run-ssh-secret"
