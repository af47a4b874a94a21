"""Chart values as `helm install` would compute them: chart defaults, then `-f` files, then `--set` flags.

Preflight must judge the values the install will actually use, so this reproduces Helm's precedence and the
common subset of its `--set` syntax (helm's `strvals` package): dotted keys, `\\.` and `\\,` escapes, list
indices (`a[0].b=x`), lists in braces (`a={x,y}`), several assignments separated by commas, and typing of
`true`/`false`/`null`/integers (other scalars stay strings, as in Helm; `--set-string` keeps everything a
string). A `null` value removes the key, as Helm does.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

Values = dict[str, Any]


class ValuesError(ValueError):
    """A values file or a `--set` expression that cannot be used."""


def deep_merge(base: Values, override: Values) -> Values:
    """Merge `override` into a copy of `base`: maps merge key by key, everything else replaces."""
    result = copy.deepcopy(base)
    for key, value in override.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def load_values_file(path: str | Path) -> Values:
    """Read one YAML values file; an empty file is an empty map."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValuesError(f"cannot read values file {path}: {exc.strerror or exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValuesError(f"values file {path} is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValuesError(f"values file {path} must hold a map at the top level, found {type(data).__name__}")
    return data


def _split_unescaped(text: str, sep: str) -> list[str]:
    """Split on `sep` outside `{...}` and not preceded by a backslash; escapes are kept for the next stage."""
    parts: list[str] = []
    buf: list[str] = []
    depth = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            buf.append(text[i : i + 2])
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        if ch == sep and depth == 0:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def typed_scalar(text: str) -> Any:
    """Helm's `--set` typing: booleans, null and integers are typed; everything else is a string."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text == "null":
        return None
    if re.fullmatch(r"-?(0|[1-9]\d*)", text):
        return int(text)
    return text


_SEGMENT_RE = re.compile(r"^(?P<name>.*?)(?P<indices>(\[\d+\])*)$")


def _key_path(key: str) -> list[str | int]:
    path: list[str | int] = []
    for raw in _split_unescaped(key, "."):
        match = _SEGMENT_RE.match(raw)
        assert match is not None  # the pattern matches every string
        name = _unescape(match.group("name"))
        if name:
            path.append(name)
        elif not match.group("indices"):
            raise ValuesError(f"empty key segment in --set key {key!r}")
        path.extend(int(i) for i in re.findall(r"\[(\d+)\]", match.group("indices")))
    if not path or not isinstance(path[0], str):
        raise ValuesError(f"--set key {key!r} must start with a name")
    return path


def _dotted(path: list[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _assign(target: Values, path: list[str | int], value: Any, expression: str) -> None:
    node: Any = target
    for i, step in enumerate(path):
        last = i == len(path) - 1
        nxt = None if last else path[i + 1]
        empty: Any = [] if isinstance(nxt, int) else {}
        if isinstance(step, int):
            if not isinstance(node, list):
                raise ValuesError(
                    f"--set {expression!r}: {_dotted(path[:i])} is already a map, so [{step}] cannot index "
                    "it; set it either as a list ([n]) or as a map (.key), not both"
                )
            while len(node) <= step:
                node.append(None)
            if last:
                node[step] = value
            else:
                if not isinstance(node[step], (dict, list)):
                    node[step] = empty
                node = node[step]
        else:
            if not isinstance(node, dict):
                raise ValuesError(
                    f"--set {expression!r}: {_dotted(path[:i])} is already a list, so it cannot take the key "
                    f"{step!r}; set it either as a list ([n]) or as a map (.key), not both"
                )
            if last:
                if value is None:
                    node[step] = None  # kept as a tombstone so deep_merge removes it from the defaults
                else:
                    node[step] = value
            else:
                if not isinstance(node.get(step), (dict, list)):
                    node[step] = empty
                node = node[step]


def parse_set(expression: str, *, as_string: bool = False) -> Values:
    """Parse one `--set` argument (which may hold several comma-separated assignments) into a values map."""
    result: Values = {}
    for assignment in _split_unescaped(expression, ","):
        if not assignment.strip():
            continue
        key, sep, raw = assignment.partition("=")
        if not sep:
            raise ValuesError(f"--set {expression!r}: {assignment!r} has no '=' (expected key=value)")
        raw_value = raw
        value: Any
        if raw_value.startswith("{") and raw_value.endswith("}"):
            inner = raw_value[1:-1]
            items = [_unescape(v) for v in _split_unescaped(inner, ",")] if inner else []
            value = items if as_string else [typed_scalar(v) for v in items]
        else:
            text = _unescape(raw_value)
            value = text if as_string else typed_scalar(text)
        _assign(result, _key_path(key.strip()), value, expression)
    return result


def compute_values(
    chart_values: Values,
    values_files: Sequence[str | Path] = (),
    set_values: Sequence[str] = (),
    set_string_values: Sequence[str] = (),
) -> Values:
    """Chart defaults ← each `-f` file in order ← each `--set` ← each `--set-string` (Helm's order)."""
    values = copy.deepcopy(chart_values)
    for path in values_files:
        values = deep_merge(values, load_values_file(path))
    for expr in set_values:
        values = deep_merge(values, parse_set(expr))
    for expr in set_string_values:
        values = deep_merge(values, parse_set(expr, as_string=True))
    return values


def lookup(values: Values, dotted: str, default: Any = None) -> Any:
    """Read `a.b.c` from nested maps; keys with dashes (`dynamo-operator`) work, keys with dots do not."""
    node: Any = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return default if node is None else node


def truthy(value: Any) -> bool:
    """Whether a switch is on. Also treats the strings "false"/"0"/"" as off: a `--set-string x=false` means
    off to the person typing it, even though Helm's template `if` would see a non-empty string."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "off")
    return bool(value)
