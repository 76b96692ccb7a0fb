"""A column of a tracked source schema, and when two names are the same column: pure Python.

Kept apart from :mod:`.schema` (the evolution decision) so that :mod:`.schema_hints` can build
on it while :mod:`.schema` applies the hints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Field", "name_key"]


@dataclass(frozen=True)
class Field:
    """One top-level column: its name and Spark's JSON form of its type (None: unknown)."""

    name: str
    type: Any = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type}

    @staticmethod
    def from_json(value: Any) -> Field:
        return Field(str(value["name"]), value.get("type"))


def name_key(name: str) -> str:
    """What two names must share to be the same column up to case and whitespace."""
    return name.strip().lower()
