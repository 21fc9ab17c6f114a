"""The one table of stages: which command groups and demo steps exist, in the order of the flow.

A stage package adds its commands by adding a module ``parakit.cli.<group>`` with a Typer
``app`` and a row to :data:`COMMAND_GROUPS` (another package: a ``parakit.commands`` entry
point naming a ``(module, package, help)`` tuple); a demo step is a module
``parakit.cli.demo.<step>`` with ``demo_step(workdir, pairs) -> str`` named in
:data:`DEMO_STEPS`. A group whose stage package (an optional extra) is not importable is left
out of the CLI.
"""

from __future__ import annotations

import importlib.util

from parakit.registry import Registry

#: (group name, module with a Typer ``app``, the stage package it needs, help), flow order.
COMMAND_GROUPS: tuple[tuple[str, str, str, str], ...] = (
    (
        "build",
        "parakit.cli.build",
        "parakit.build",
        "Corpus construction: align documents, make candidates, sample.",
    ),
    (
        "annotate",
        "parakit.cli.annotate",
        "parakit.annotate",
        "Annotation web tool, crowd import, agreement.",
    ),
    (
        "models",
        "parakit.cli.models",
        "parakit.offline",
        "Offline models (offline-minilm, offline-mpnet): list, install, locate.",
    ),
    (
        "identify",
        "parakit.cli.identify",
        "parakit.models",
        "Train, evaluate and apply paraphrase classifiers.",
    ),
    ("embed", "parakit.cli.embed", "parakit.models", "Train and evaluate paraphrase embeddings."),
    (
        "mine",
        "parakit.cli.mine",
        "parakit.mine",
        "Vector index, nearest-neighbour mining, tiles, growth.",
    ),
    (
        "generate",
        "parakit.cli.generate",
        "parakit.models",
        "Paraphrase generation and its evaluation.",
    ),
    (
        "report",
        "parakit.cli.report",
        "parakit.analysis",
        "Performance profiles and corpus reports.",
    ),
)
COMMAND_GROUPS += tuple((name, *group) for name, group in Registry("commands").items())

#: demo steps (modules of :mod:`parakit.cli.demo`), in the order of the flow
DEMO_STEPS: tuple[str, ...] = ("build", "annotate", "models", "mine", "evaluate", "analysis")


def module_available(name: str) -> bool:
    """Whether ``name`` can be imported (its parent packages may be missing too)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


__all__ = ["COMMAND_GROUPS", "DEMO_STEPS", "module_available"]
