"""kubeVersion constraints must reach the same verdict as `helm install` (Masterminds semver rules)."""

import pytest
from dynamo_hooks.semver import Constraint, Version, VersionError, satisfies


@pytest.mark.parametrize(
    ("version", "constraint", "expected"),
    [
        ("v1.36.3", ">=1.30.0-0", True),
        ("v1.29.9", ">=1.30.0-0", False),
        ("v1.31.4-gke.1256000", ">=1.30.0-0", True),  # managed-cluster pre-release satisfies "-0" constraints
        ("v1.31.4-gke.1256000", ">=1.30.0", False),  # ... but not plain ones, as in helm
        ("v1.30.0", ">= 1.30.0-0 < 1.40.0-0", True),
        ("v1.40.1", ">=1.30.0-0, <1.40.0-0", False),
        ("v1.28.2", "~1.28.0", True),
        ("v1.29.0", "~1.28.0", False),
        ("v1.33.0", "^1.30", True),
        ("v2.0.0", "^1.30", False),
        ("v1.31.7", "1.31.x", True),
        ("v1.32.0", "1.31.x", False),
        ("v1.27.0", "<1.28 || >=1.30", True),
        ("v1.29.0", "<1.28 || >=1.30", False),
        ("v1.29.5", "1.28 - 1.30", True),
        ("v1.34.0+k3s1", ">=1.30.0-0", True),
        ("v1.30.0", "!=1.30.0", False),
    ],
)
def test_constraints(version: str, constraint: str, expected: bool) -> None:
    assert satisfies(version, constraint) is expected


def test_ordering_follows_semver_precedence() -> None:
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-rc.1", "1.0.0", "1.0.1"]
    parsed = [Version.parse(v) for v in ordered]
    assert parsed == sorted(reversed(parsed))


@pytest.mark.parametrize("bad", ["", "banana", ">=", "1.2.3 ||"])
def test_bad_constraints_raise(bad: str) -> None:
    with pytest.raises(VersionError):
        Constraint.parse(bad).allows(Version.parse("1.0.0"))
