"""The one error the renderer raises: it names the object, the field and the fix."""

from __future__ import annotations


class RenderError(ValueError):
    """Bad input. ``str(err)`` reads ``<Kind> <ns>/<name>: <field>: <problem>; fix: <fix>``."""

    def __init__(self, obj: dict | str, path: str, problem: str, fix: str = "") -> None:
        self.object_ref = obj if isinstance(obj, str) else object_ref(obj)
        self.path = path
        self.problem = problem
        self.fix = fix
        text = f"{self.object_ref}: {path}: {problem}"
        if fix:
            text += f"; fix: {fix}"
        super().__init__(text)


def object_ref(obj: dict) -> str:
    """``Kind namespace/name`` of a (possibly malformed) Kubernetes object dict."""
    if not isinstance(obj, dict):
        return "<not an object>"
    kind = obj.get("kind") or "<no kind>"
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") or "<no name>"
    ns = meta.get("namespace")
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def spec_path(path: tuple) -> str:
    """A path relative to a component spec, as a RenderError names it: ``spec.`` prefix, the main container
    (the only one the operator renders into) as ``containers[main]``."""
    out = "spec"
    for i, step in enumerate(path):
        if isinstance(step, int):
            out += "[main]" if path[i - 1 : i] == ("containers",) else f"[{step}]"
        else:
            out += f".{step}"
    return out
