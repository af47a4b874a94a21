"""Field errors in the apimachinery style, accumulated per request (``field.ErrorList``'s role).

Every error names its field path, what is wrong and what to do: ``<path>: <Type>: <value>: <detail>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.api.fieldpaths import Path, format_path, show

NO_VALUE = object()

# apimachinery field.ErrorType strings and the Status cause types that go with them
REQUIRED = "Required value"
INVALID = "Invalid value"
FORBIDDEN = "Forbidden"
DUPLICATE = "Duplicate value"
NOT_FOUND = "Not found"
TOO_MANY = "Too many"
NOT_SUPPORTED = "Unsupported value"
CAUSE_TYPES = {
    REQUIRED: "FieldValueRequired",
    INVALID: "FieldValueInvalid",
    FORBIDDEN: "FieldValueForbidden",
    DUPLICATE: "FieldValueDuplicate",
    NOT_FOUND: "FieldValueNotFound",
    TOO_MANY: "FieldValueTooMany",
    NOT_SUPPORTED: "FieldValueNotSupported",
}


@dataclass
class FieldError:
    path: Path
    type: str
    detail: str
    value: Any = NO_VALUE

    @property
    def field(self) -> str:
        return format_path(self.path)

    def __str__(self) -> str:
        if self.value is NO_VALUE:
            return f"{self.field}: {self.type}: {self.detail}"
        return f"{self.field}: {self.type}: {show(self.value)}: {self.detail}"


@dataclass
class Result:
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return not self.errors


class ErrorList:
    """The errors and warnings of one request, in the order the rules found them."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []

    def add(self, path: Path, type_: str, detail: str, value: Any = NO_VALUE) -> None:
        self.errors.append(FieldError(tuple(path), type_, detail, value))

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def result(self) -> Result:
        return Result(self.errors, self.warnings)
