"""Accepted, but part of it has no effect: the one source of the warnings that say so.

The rule for inputs (docs/api-coverage.md): refuse only what would do harm, what cannot act on this cluster,
or what contradicts itself so that no reading is right. Where upstream accepts an object and ignores part of
it, the operator accepts it too, and says which field has no effect and why. :func:`warnings` finds those
fields, from the object alone (no configuration, no cluster), so the three places that show them say the
same thing:

* admission returns them as AdmissionReview ``warnings`` (kubectl prints ``Warning: <text>``;
  ``webhooks.validation.validate``);
* ``dynamo-operator render`` prints them on stderr (``render/cli.py``);
* the controllers record each as a ``Warning`` Event on the object once per generation
  (``controllers/notices.py``).

A rule is a function ``(kind, v1beta1 object) -> notices`` (``Notice`` and the component walk in
``render/notice.py``, which a rule's own module imports); :data:`RULES` lists them, each beside the code that
ignores the field. A notice's path is a v1beta1 field path; :func:`warnings` prints it in the version
the object was written in (``api.fieldpaths.to_alpha_path``), as admission errors are. The controllers read
objects in v1beta1, so their Events name v1beta1 paths.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dynamo_operator.api import conversion
from dynamo_operator.api.fieldpaths import format_path, to_alpha_path
from dynamo_operator.api.jsontree import d

from . import ingress, kvtransfer, names
from .notice import KINDS, Notice, components

Rule = Callable[[str, dict], Iterable[Notice]]


def _epp_config(kind: str, beta: dict) -> Iterator[Notice]:
    """A non-epp component's ``eppConfig``: only an EPP component reads an EndpointPickerConfig
    (``render/epp.py``)."""
    for base, comp in components(kind, beta):
        if comp.get("type") != "epp" and comp.get("eppConfig") is not None:
            yield Notice(
                (*base, "eppConfig"),
                "has no effect unless type is epp (only an EPP component reads an EndpointPickerConfig); "
                "remove it, or set type: epp",
            )


def _epp_pool(kind: str, beta: dict) -> Iterator[Notice]:
    """An epp DynamoComponentDeployment on its own: a graph creates its EPP's InferencePool
    (``render/epp.py``), and a DCD alone has no graph."""
    if kind == names.DCD_KIND and d(beta.get("spec")).get("type") == "epp":
        yield Notice(
            ("spec", "type"),
            "an epp DynamoComponentDeployment on its own gets no InferencePool (a DynamoGraphDeployment "
            "creates <graph>-pool for its epp component); create the pool its -pool-name argument names",
        )


def _ingress_only(kind: str, beta: dict) -> Iterator[Notice]:
    """Ingress-only settings beside ``useVirtualService``: the VirtualService alone is rendered
    (``render/ingress.py``), as upstream does."""
    for base, own in ingress.alpha_ingresses(kind, beta, components(kind, beta)):
        for path, why in ingress.ingress_only_settings(own):
            yield Notice((*base, "ingress", *path), why)


RULES: tuple[Rule, ...] = (_epp_config, _epp_pool, kvtransfer.notices, _ingress_only)


def notices(kind: str, beta: dict) -> list[Notice]:
    """The notices of a v1beta1 DGD or DCD, each once, in rule order; none for other kinds."""
    if kind not in KINDS or not isinstance(beta, dict):
        return []
    out: list[Notice] = []
    for rule in RULES:
        out.extend(n for n in rule(kind, beta) if n not in out)
    return out


def warnings(obj: Any, beta: dict | None = None) -> list[str]:
    """``<path>: <text>`` for each notice of ``obj`` (a DGD or DCD as written, v1alpha1 or v1beta1), paths
    in the version it was written in; ``beta``: its v1beta1 form when the caller has it already. An object
    that cannot be read as its kind has no warnings (its errors say why)."""
    if not isinstance(obj, dict) or obj.get("kind") not in KINDS:
        return []
    kind = str(obj["kind"])
    alpha = str(obj.get("apiVersion", "")).endswith("/v1alpha1")
    try:
        beta = beta if beta is not None else (conversion.convert(obj, "v1beta1") if alpha else obj)
        found = notices(kind, beta)
    except Exception:  # malformed input: admission's errors name what is wrong
        return []
    out = []
    for n in found:
        path = n.path
        if alpha:
            try:
                path = to_alpha_path(kind, path, beta, obj)
            except Exception:  # an unmappable path stays in v1beta1 terms, as admission errors do
                path = n.path
        out.append(f"{format_path(path)}: {n.text}")
    return out


__all__ = ["KINDS", "RULES", "Notice", "Rule", "components", "notices", "warnings"]
