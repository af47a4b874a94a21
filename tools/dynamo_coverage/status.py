"""What a row can be: it acts, it is refused, it is accepted with a warning that it has no effect, the
seed keeps it stored only, or its owner is still implementing it (``Pending``, listed so the lead fills it
in at merge)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _tuple(value: str | tuple[str, ...]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@dataclass(frozen=True)
class Acts:
    """The row is read by ``code`` and proven by ``tests``.

    ``code``: ``module:qualname`` below ``dynamo_operator`` (``render.pod:build_pod_template``), a module
    of the hooks or the plugin with its package (``dynamo_hooks.mpi:ensure``), or a chart template
    (``tpl:operator/templates/_config.tpl``, relative to ``charts/platform/components``; ``tpl:platform/...``
    for the umbrella chart). ``tests``: ``tests/...py::test_name`` or ``helm:<chart>/tests/<file>::<it>``.
    ``via``: the row it feeds (a v1alpha1 field converted to its v1beta1 field, a chart value written into
    an OperatorConfiguration key); that row must be covered too.
    """

    code: tuple[str, ...]
    tests: tuple[str, ...]
    via: str | None = None
    note: str = ""
    whole: bool = False  # a struct field read as a whole (hashed, copied): covers its type's rows


@dataclass(frozen=True)
class Refused:
    """The row is refused with a message saying it is not supported and what to use instead.

    ``where``: ``admission`` (``sample`` is a dotted path -> value set on the kind's minimal object, checked
    with the validating webhook's ``validate``), ``config`` (``sample`` is an OperatorConfiguration fragment,
    checked with ``parse_operator_config``) or ``install`` (``sample`` is ``--set`` values, checked with
    ``helm template``). ``message``: a fragment the refusal must contain. ``code``: where the rule lives.
    """

    where: str
    sample: dict[str, Any]
    message: str
    code: tuple[str, ...] = ()
    kind: str = ""
    version: str = ""
    note: str = ""


@dataclass(frozen=True)
class Warned:
    """Accepted (upstream accepts it), but it has no effect here, and a warning says so where its author
    looks (the rule for inputs, docs/api-coverage.md).

    ``code``: where the warning is produced; ``tests``: the tests that show it, held to the coverage proof
    as an ``Acts`` row's are (a named unit test runs the code; a helm test sets the value and renders the
    template). ``sample`` (with ``message``, ``kind``, ``version``): a dotted path -> value set on the kind's
    minimal object, as a refusal's: admission must admit it with a warning containing ``message``, and
    ``render.notices.warnings`` (the one source of kubectl's, ``render``'s and the Event's text) must give
    the same warning.
    """

    code: tuple[str, ...]
    tests: tuple[str, ...]
    note: str = ""
    sample: dict[str, Any] = field(default_factory=dict, hash=False)
    message: str = ""
    kind: str = ""
    version: str = ""


@dataclass(frozen=True)
class StorageOnly:
    """Kept and round-tripped but not acted on, because the seed says so: ``quote`` must appear in the
    field's description or its type's (the models carry the reference's text: a type kept only for older
    releases, a status the controller does not write yet)."""

    quote: str


@dataclass(frozen=True)
class Converted:
    """A v1alpha1 field the conversion carries into the v1beta1 object (checked by ``converted``: setting it
    changes the v1beta1 form outside the annotations); ``via``: the v1beta1 row that acts on it;
    ``context``: what it needs beside it to be carried (``spec.gpuMemoryService.enabled``), as for
    ``Rendered``."""

    via: str
    note: str = ""
    context: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Rendered:
    """The field acts on what the controllers render: setting it on the kind's minimal object changes
    ``render_all``'s output (checked by ``converted.rendered_problems``); ``code`` names where.

    ``context``: what the field needs beside it to act at all (``spec.ingress.enabled`` for an ingress
    host, ``spec.pvcs.create`` for a claim's size): dotted JSON paths from the kind's root (a list or a
    map of components stands for its first entry) set on *both* objects compared, so the difference is
    still the field's alone (a path naming the field itself is its value before the sample replaces it);
    ``config:a.b`` sets an OperatorConfiguration key instead. Without it a field behind a switch looks
    inert.
    """

    code: str
    note: str = ""
    context: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Unresolved:
    """No evidence yet that the row acts, is refused or is stored only because the seed says so: listed,
    shown and counted so it is not silently left out; the coverage test fails when one is added."""

    why: str


@dataclass(frozen=True)
class Pending:
    """Another helper implements this row now; the lead writes its real entry at merge (the test fails
    once a real entry exists beside it, or the field is gone)."""

    owner: str
    note: str = ""


Status = Acts | Refused | Warned | StorageOnly | Converted | Rendered | Unresolved | Pending


def acts(
    code: str | tuple[str, ...],
    test: str | tuple[str, ...],
    via: str | None = None,
    note: str = "",
    *,
    whole: bool = False,
) -> Acts:
    return Acts(_tuple(code), _tuple(test), via, note, whole)


def refused(
    where: str,
    sample: dict[str, Any],
    message: str,
    code: str | tuple[str, ...] = (),
    *,
    kind: str = "",
    version: str = "",
    note: str = "",
) -> Refused:
    return Refused(where, sample, message, _tuple(code), kind, version, note)


def warned(
    code: str | tuple[str, ...],
    test: str | tuple[str, ...],
    note: str = "",
    *,
    sample: dict[str, Any] | None = None,
    message: str = "",
    kind: str = "",
    version: str = "",
) -> Warned:
    return Warned(_tuple(code), _tuple(test), note, dict(sample or {}), message, kind, version)


__all__ = [
    "Acts",
    "Converted",
    "Pending",
    "Refused",
    "Rendered",
    "Status",
    "StorageOnly",
    "Unresolved",
    "Warned",
    "acts",
    "refused",
    "warned",
]
