"""Structured logging: one JSON object per line (ts, level, logger, msg, then key/values).

Standard-library ``logging`` only (no structlog): the key/values ride on the record's ``kv`` attribute, so
third-party libraries' plain log calls still come out as JSON lines.
``get_logger(name).bind(controller=...)`` returns a logger that adds its bound key/values to every line, the
way logr's ``WithValues`` does in controller-runtime.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import sys
from typing import Any

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": _dt.datetime.fromtimestamp(record.created, _dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for k, v in (getattr(record, "kv", None) or {}).items():
            out.setdefault(k, v)
        if record.exc_info:
            out["error"] = str(record.exc_info[1])
            out["stacktrace"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = _dt.datetime.fromtimestamp(record.created, _dt.UTC).isoformat(timespec="milliseconds")
        kv = " ".join(f"{k}={v}" for k, v in (getattr(record, "kv", None) or {}).items())
        line = f"{ts} {record.levelname:<5} {record.name} {record.getMessage()} {kv}".rstrip()
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def setup_logging(level: str = "info", fmt: str = "json", stream: Any = None) -> None:
    """Configure the root logger once (idempotent: replaces our own handler on a second call)."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_dynamo_runtime", False):
            root.removeHandler(h)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler._dynamo_runtime = True  # type: ignore[attr-defined]
    handler.setFormatter(TextFormatter() if fmt == "text" else JSONFormatter())
    root.addHandler(handler)
    root.setLevel(LEVELS.get(str(level).lower(), logging.INFO))
    # urllib3 retries and the kubernetes client are noisy at debug level
    logging.getLogger("urllib3").setLevel(max(root.level, logging.WARNING))


class KVLogger:
    """A thin wrapper: ``log.info("msg", namespace=ns, name=n)``."""

    def __init__(self, logger_name: str, bound: dict[str, Any] | None = None):
        self._log = logging.getLogger(logger_name)
        self._bound = dict(bound or {})

    @property
    def name(self) -> str:
        return self._log.name

    def bind(self, **kv: Any) -> KVLogger:
        return KVLogger(self._log.name, {**self._bound, **kv})

    def child(self, suffix: str, **kv: Any) -> KVLogger:
        return KVLogger(f"{self._log.name}.{suffix}", {**self._bound, **kv})

    def _emit(self, level: int, msg: str, exc_info: Any, kv: dict) -> None:
        if self._log.isEnabledFor(level):
            self._log.log(level, msg, exc_info=exc_info, extra={"kv": {**self._bound, **kv}}, stacklevel=3)

    def debug(self, msg: str, **kv: Any) -> None:
        self._emit(logging.DEBUG, msg, None, kv)

    def info(self, msg: str, **kv: Any) -> None:
        self._emit(logging.INFO, msg, None, kv)

    def warning(self, msg: str, **kv: Any) -> None:
        self._emit(logging.WARNING, msg, None, kv)

    def error(self, msg: str, exc_info: Any = None, **kv: Any) -> None:
        self._emit(logging.ERROR, msg, exc_info, kv)

    def exception(self, msg: str, **kv: Any) -> None:
        self._emit(logging.ERROR, msg, True, kv)


def get_logger(logger_name: str, **kv: Any) -> KVLogger:
    return KVLogger(logger_name, kv)
