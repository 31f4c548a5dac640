"""`SharedMethods`: one `__repr__`, `__eq__` and `__hash__` for frozen dataclasses declared with
`repr=False, eq=False`, doing what `dataclass` would generate for each.

`dataclass` compiles every method it generates on its own: six for a frozen class (`__init__`,
`__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`), ~1.3 ms a class on this machine.
The event vocabulary and the wires' records (~60 classes) are imported before a process's first
answer; sharing these three halves what their classes cost (docs/performance.md, "Fewer imports
before the first answer"). What they do is `dataclass`'s: the repr `Name(field=value, ...)` of the
fields shown in reprs; equal only to an instance of the very same class whose compared fields are
equal (else `NotImplemented`); the hash of the hashed fields (`hash=None` follows `compare`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

_Names = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


class SharedMethods:
    """Base of a frozen dataclass declared `repr=False, eq=False` (no slots of its own)."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _field_names(type(self))[0])
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        compared = _field_names(type(self))[1]
        return tuple(getattr(self, name) for name in compared) == tuple(
            getattr(other, name) for name in compared
        )

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in _field_names(type(self))[2]))


def _field_names(kind: type) -> _Names:
    """The names of a class's fields that its repr shows, that equality compares and that its hash
    covers, in declaration order; found once per class."""
    found = _FIELD_NAMES.get(kind)
    if found is None:
        fields: tuple[Any, ...] = dataclasses.fields(kind)
        found = _FIELD_NAMES[kind] = (
            tuple(f.name for f in fields if f.repr),
            tuple(f.name for f in fields if f.compare),
            tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)),
        )
    return found


_FIELD_NAMES: dict[type, _Names] = {}
