"""Reading a review a value at a time: what a JSON body costs to parse, and a ConversionReview whose objects
are parsed, converted and encoded one by one.

``json.loads`` of a 16 MiB page builds every object at once (about seven times the text for real graphs,
thirty for pathological shapes) and holds the GIL from its first byte to its last: a second on a busy
machine, during which the server's loop answers nobody, admissions and readiness probes included. Here
the envelope is walked member by member and each element of ``request.objects`` is decoded on its own
(``JSONDecoder.raw_decode``), handed to the converter, encoded and dropped before the next: one object's
tree at a time, and the GIL free between objects. It applies when ``desiredAPIVersion`` comes before
``objects`` (the API server's field order); otherwise the objects are parsed whole, as before. Either way
the answer is the one ``json.loads`` and a whole conversion would give (``tests/unit/test_webhooks_memory``
compares them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from json.decoder import scanstring
from typing import Any

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")
_NAME = "property name enclosed in double quotes"

# convert_one(object, desiredAPIVersion, parse cost of its text): the converted object, or an exception
ConvertOne = Callable[[Any, str, int], Any]


def parse_cost(text: bytes | bytearray | str, start: int = 0, end: int | None = None) -> int:
    """An upper bound of the memory ``json.loads`` of ``text[start:end]`` takes, from counts of the text
    alone (C speed, no parse): the decoded copy (up to 4 bytes a character), a dict per ``{`` (184 bytes up
    to 5 keys), a list per ``[``, a string object per pair of quotes, a pointer and a small object per
    ``,``. Measured at 1.1-3x the real size over DGD pages, string lists and numbers, never below it; quotes
    and braces inside strings count too (an overestimate)."""
    end = len(text) if end is None else end
    quote, brace, bracket, comma = ('"', "{", "[", ",") if isinstance(text, str) else (b'"', b"{", b"[", b",")
    chars = 4 * (end - start) + 28 * text.count(quote, start, end) + 32 * text.count(comma, start, end)  # type: ignore[arg-type]
    return chars + 184 * text.count(brace, start, end) + 64 * text.count(bracket, start, end)  # type: ignore[arg-type]


def decode(body: bytes | bytearray) -> str:
    """The body's text, as ``json.loads`` decodes it (UTF-8, -16 or -32 by its first bytes)."""
    return body.decode(json.detect_encoding(body), "surrogatepass") if body else ""


class Converted(list):
    """The encoded answers of a streamed ``objects`` array (a list, so the envelope checks read it as the
    objects), with the first conversion failure, after which the rest were only parsed."""

    error: Exception | None = None


class _Scan:
    """A cursor over a JSON text: structure by hand, every value through the C decoder."""

    def __init__(self, text: str):
        self.text, self.i = text, 0

    def peek(self) -> str:
        self.i = _WS.match(self.text, self.i).end()  # type: ignore[union-attr]
        return self.text[self.i : self.i + 1]

    def take(self, char: str, what: str) -> None:
        if self.peek() != char:
            raise json.JSONDecodeError(f"Expecting {what}", self.text, self.i)
        self.i += 1

    def value(self) -> Any:
        self.peek()
        value, self.i = _DECODER.raw_decode(self.text, self.i)
        return value

    def members(self) -> Iterator[str]:
        """The object here, member by member: yields each key, the caller reads its value."""
        self.take("{", "'{'")
        if self.peek() == "}":
            self.i += 1
            return
        while True:
            if self.peek() != '"':
                raise json.JSONDecodeError(f"Expecting {_NAME}", self.text, self.i)
            key, self.i = scanstring(self.text, self.i + 1)
            self.take(":", "':' delimiter")
            yield key
            if self.peek() != ",":
                self.take("}", "',' delimiter")
                return
            self.i += 1

    def elements(self) -> Iterator[int]:
        """The array here, element by element: yields where each begins, the caller reads it."""
        self.take("[", "'['")
        if self.peek() == "]":
            self.i += 1
            return
        while True:
            yield self.i
            if self.peek() != ",":
                self.take("]", "',' delimiter")
                return
            self.i += 1

    def done(self) -> None:
        if self.peek():
            raise json.JSONDecodeError("Extra data", self.text, self.i)


def read_conversion_review(text: str, convert_one: ConvertOne) -> Any:
    """The review in ``text`` as ``json.loads`` would give it, except that ``request.objects``, when it
    follows a string ``desiredAPIVersion``, is a :class:`Converted` of each object's encoded answer.
    ValueError when ``text`` is not JSON."""
    scan = _Scan(text)
    if scan.peek() != "{":
        review = scan.value()
    else:
        review = {}
        for key in scan.members():
            review[key] = (
                _request(scan, convert_one) if key == "request" and scan.peek() == "{" else scan.value()
            )
    scan.done()
    return review


def _request(scan: _Scan, convert_one: ConvertOne) -> dict:
    req: dict = {}
    for key in scan.members():
        desired = req.get("desiredAPIVersion")
        if key == "objects" and isinstance(desired, str) and scan.peek() == "[":
            req[key] = _objects(scan, desired, convert_one)
        else:
            req[key] = scan.value()
    return req


def _objects(scan: _Scan, desired: str, convert_one: ConvertOne) -> Converted:
    out = Converted()
    for start in scan.elements():
        obj = scan.value()
        if out.error is not None:
            continue  # parsed only: a syntax error further on is still a bad request
        try:
            converted = convert_one(obj, desired, parse_cost(scan.text, start, scan.i))
            out.append(json.dumps(converted, separators=(",", ":")).encode())
        except Exception as e:
            out.error = e
            out.clear()
        del obj
    return out
