"""The ``parakit`` command line: the only package that imports across stages.

:mod:`parakit.cli.app` builds the root app and maps every error to one line on stderr;
:mod:`parakit.cli.stages` is the table of command groups and demo steps; each
``parakit.cli.<group>`` module holds one command group; :mod:`parakit.cli.options` holds the
options and parsers every group shares.
"""

from parakit.cli.app import build_app, main

__all__ = ["build_app", "main"]
