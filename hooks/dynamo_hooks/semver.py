"""Semantic versions and the constraint syntax Helm uses for a chart's `kubeVersion`.

Helm evaluates `kubeVersion` with Masterminds/semver; preflight must reach the same verdict as `helm install`,
including its pre-release rule: managed clusters report versions such as `v1.31.4-gke.1256000`, which are
pre-releases in semver terms and only satisfy a comparator that itself carries a pre-release (hence the
customary `>=1.30.0-0`). Supported: `=`, `!=`, `>`, `>=`, `<`, `<=`, `=<`, `=>`, `~`, `^`, wildcards
(`1.30.x`, `1.*`), hyphen ranges (`1.28 - 1.31`), AND by space or comma, OR by `||`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

_VERSION_RE = re.compile(
    r"^v?(?P<major>0|[1-9]\d*|[xX*])(?:\.(?P<minor>\d+|[xX*]))?(?:\.(?P<patch>\d+|[xX*]))?"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+(?P<build>[0-9A-Za-z.-]+))?$"
)


class VersionError(ValueError):
    """A version or constraint string that cannot be parsed."""


@total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Version:
        match = _VERSION_RE.match(text.strip())
        if not match or any(match.group(k) in ("x", "X", "*") for k in ("major", "minor", "patch")):
            raise VersionError(f"not a semantic version: {text!r}")
        pre = tuple(match.group("pre").split(".")) if match.group("pre") else ()
        return cls(
            int(match.group("major")), int(match.group("minor") or 0), int(match.group("patch") or 0), pre
        )

    def _key(self) -> tuple:
        # A release sorts after all of its pre-releases; numeric identifiers sort before alphanumeric ones.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}.{self.patch}"
        return f"{base}-{'.'.join(self.prerelease)}" if self.prerelease else base


@dataclass(frozen=True)
class _Comparator:
    op: str
    version: Version

    def allows(self, v: Version) -> bool:
        # Masterminds rule: a pre-release version only satisfies comparators that carry a pre-release.
        if v.prerelease and not self.version.prerelease:
            return False
        return {
            "=": v == self.version,
            "!=": v != self.version,
            ">": v > self.version,
            ">=": v >= self.version,
            "<": v < self.version,
            "<=": v <= self.version,
        }[self.op]


def _expand(op: str, text: str) -> list[_Comparator]:
    """Turn one comparator (possibly `~`, `^` or wildcard) into plain comparators."""
    match = _VERSION_RE.match(text)
    if not match:
        raise VersionError(f"not a version in constraint: {text!r}")
    parts = [match.group("major"), match.group("minor"), match.group("patch")]
    pre = tuple(match.group("pre").split(".")) if match.group("pre") else ()
    wild = [p is None or p in ("x", "X", "*") for p in parts]
    nums = [0 if w else int(p) for p, w in zip(parts, wild, strict=True)]
    low = Version(nums[0], nums[1], nums[2], pre)
    if wild[0]:
        return [] if op in ("", "=", ">=", "<=", "~", "^") else [_Comparator("<", Version(0, 0, 0, ("0",)))]
    # Upper bound (exclusive) of the range the wildcard or operator spans; "-0" keeps pre-releases out of it.
    if op == "^":
        if nums[0] > 0 or wild[1]:
            high = Version(nums[0] + 1, 0, 0, ("0",))
        elif nums[1] > 0 or wild[2]:
            high = Version(0, nums[1] + 1, 0, ("0",))
        else:
            high = Version(0, 0, nums[2] + 1, ("0",))
        return [_Comparator(">=", low), _Comparator("<", high)]
    if op == "~" or (op in ("", "=") and (wild[1] or wild[2])):
        high = Version(nums[0] + 1, 0, 0, ("0",)) if wild[1] else Version(nums[0], nums[1] + 1, 0, ("0",))
        return [_Comparator(">=", low), _Comparator("<", high)]
    if wild[1] or wild[2]:
        step = Version(nums[0] + 1, 0, 0) if wild[1] else Version(nums[0], nums[1] + 1, 0)
        if op == ">":
            return [_Comparator(">=", step)]
        if op == "<=":
            return [_Comparator("<", step)]
        if op == "!=":
            return [_Comparator("<", low), _Comparator(">=", step)]  # approximated as outside the range
        return [_Comparator(op, low)]
    return [_Comparator("=" if op == "" else op, low)]


_OP_RE = re.compile(r"^(=>|>=|=<|<=|!=|>|<|=|~>|~|\^)?\s*(\S+)$")


@dataclass(frozen=True)
class Constraint:
    """A parsed constraint: OR of AND-groups of comparators."""

    text: str
    groups: tuple[tuple[_Comparator, ...], ...]

    @classmethod
    def parse(cls, text: str) -> Constraint:
        groups: list[tuple[_Comparator, ...]] = []
        for raw_group in text.split("||"):
            group_text = re.sub(r"\s*-\s+", " - ", raw_group.strip())
            group_text = re.sub(r"(>=|<=|=>|=<|!=|>|<|=|~>|~|\^)\s+", r"\1", group_text)
            tokens = [t for t in re.split(r"[\s,]+", group_text) if t]
            comparators: list[_Comparator] = []
            i = 0
            while i < len(tokens):
                if i + 2 < len(tokens) and tokens[i + 1] == "-":  # hyphen range "A - B"
                    comparators += _expand(">=", tokens[i])
                    comparators += _expand("<=", tokens[i + 2])
                    i += 3
                    continue
                match = _OP_RE.match(tokens[i])
                if not match:
                    raise VersionError(f"cannot parse constraint {text!r} at {tokens[i]!r}")
                op = {"=>": ">=", "=<": "<=", "~>": "~"}.get(match.group(1) or "", match.group(1) or "")
                comparators += _expand(op, match.group(2))
                i += 1
            if not tokens:
                raise VersionError(f"empty constraint group in {text!r}")
            groups.append(tuple(comparators))
        return cls(text, tuple(groups))

    def allows(self, version: Version) -> bool:
        return any(all(c.allows(version) for c in group) for group in self.groups)


def satisfies(version: str, constraint: str) -> bool:
    """True when `version` (e.g. `v1.31.4-gke.1`) satisfies `constraint` (e.g. `>=1.30.0-0`)."""
    return Constraint.parse(constraint).allows(Version.parse(version))
