"""Every ``Example:`` in a docstring of ``src/parakit`` runs and prints what it shows: the API
reference renders them, so a wrong one misleads (two had been wrong since they were written)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import parakit

#: modules that cannot be imported on their own: alembic runs its env with a context, and
#: ``python -m parakit`` runs the CLI when imported
NOT_IMPORTABLE = ("parakit.annotate.migrations", "parakit.__main__")


def _modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(parakit.__path__, "parakit.")]
    return sorted(n for n in names if not n.startswith(NOT_IMPORTABLE))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
