"""Moved to ``support.fakewatch``; this name stays only so tests written against the old path still import.
Delete once no test says ``from fakewatch import``."""

from support.fakewatch import FakeWatch

__all__ = ["FakeWatch"]
