"""One shape for parakit's registries: readers, writers, models, label schemes, phenomena
sources, offline models, encoder backends, command groups.

A :class:`Registry` maps names to objects. An entry is the object itself or a ``"module:attr"``
string imported on first use (so ``torch`` stays unloaded until a model is asked for). Other
packages add entries with :meth:`Registry.register` or, without any import, with an entry point
in the group ``parakit.<kind>``, read on first lookup; a built-in or registered name wins::

    [project.entry-points."parakit.readers"]
    myformat = "mypackage.io:read_myformat"

Example:
    >>> from parakit.registry import Registry
    >>> codecs = Registry("codecs", {"b64": "base64:b64encode"})
    >>> codecs["b64"](b"hi")
    b'aGk='
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
from collections.abc import Iterator, MutableMapping
from typing import Any, TypeVar

from parakit.errors import ParakitError

T = TypeVar("T")


@functools.cache
def _entry_points() -> importlib.metadata.EntryPoints:
    """Every installed entry point, read once for all registries (a scan takes ~20 ms)."""
    return importlib.metadata.entry_points()


class Registry(MutableMapping[str, T]):
    """Names -> objects, extended by :meth:`register` and the ``parakit.<kind>`` entry points.

    Args:
        kind: the entry point group is ``parakit.<kind>`` (``readers``, ``models``...).
        entries: the built-in entries: objects or ``"module:attr"`` strings.
        what: how :meth:`lookup` names an entry in its error (``"model type"``).
        error: the error :meth:`lookup` raises for an unknown name, with ``code``.
    """

    def __init__(
        self,
        kind: str,
        entries: dict[str, T | str] | None = None,
        *,
        what: str | None = None,
        error: type[ParakitError] = ParakitError,
        code: str | None = None,
    ) -> None:
        self.group = f"parakit.{kind}"
        self.what = what or kind
        self.error, self.code = error, code
        self._entries: dict[str, Any] = dict(entries or {})
        self._found: dict[str, Any] | None = None  # entry points, read on first lookup

    def _table(self) -> dict[str, Any]:
        if self._found is None:
            points = _entry_points().select(group=self.group)
            self._found = {p.name: p.value for p in points if p.name not in self._entries}
        return self._found

    def refresh(self) -> None:
        """Read the entry points again (after installing a package in a running process)."""
        _entry_points.cache_clear()
        self._found = None

    def __getitem__(self, name: str) -> T:
        table = self._entries if name in self._entries else self._table()
        value = table[name]
        if isinstance(value, str):  # "module:attr", resolved once
            module, _, attr = value.partition(":")
            value = importlib.import_module(module)
            for part in filter(None, attr.split(".")):
                value = getattr(value, part)
            table[name] = value
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._table()

    def __setitem__(self, name: str, value: T | str) -> None:
        self._entries[name] = value

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self._entries, **self._table()})

    def __len__(self) -> int:
        return len({**self._entries, **self._table()})

    def register(self, name: str, target: Any = None) -> Any:
        """Add ``target`` (an object or ``"module:attr"``) as ``name``; without ``target``,
        a decorator that registers what it decorates."""
        if target is None:
            return lambda obj: self.register(name, obj)
        self._entries[name] = target
        return target

    def lookup(self, name: str) -> T:
        """The entry ``name``; an unknown name raises :attr:`error` listing the known ones."""
        if name not in self:
            raise self.error(
                f"unknown {self.what} {name!r}; choose one of {', '.join(sorted(self))}",
                code=self.code,
            )
        return self[name]
