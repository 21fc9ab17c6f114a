"""Griffe extension for the API reference: read parakit's docstrings as they are written.

The docstrings use ``Example:`` (Google style knows only ``Examples:``; anything else becomes an
admonition whose ``>>>`` lines are read as Markdown) and Sphinx roles such as ``:func:`read```
(printed literally by mkdocstrings). Both are translated here, when griffe loads the code, so
the source keeps its form and ``python -m doctest`` still reads it.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: ``Example:`` alone on its line (any indent) opens a Google "Examples" section.
_EXAMPLE = re.compile(r"^(\s*)Example:\s*$", flags=re.MULTILINE)
#: ``:func:`x``` and friends: keep the code span, drop the role.
_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj|const):`~?([^`]+)`")


class ParakitDocstrings(griffe.Extension):
    """Rewrite ``Example:`` to ``Examples:`` and Sphinx roles to code spans."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is None:
            return
        text = _EXAMPLE.sub(r"\1Examples:", docstring.value)
        docstring.value = _ROLE.sub(r"`\1`", text)
