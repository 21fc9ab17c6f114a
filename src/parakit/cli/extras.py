"""Which optional extra provides which module, so that a command run on a smaller install says
what to install (E090) instead of ending in an internal error, and ``--help`` marks the
groups whose extra is missing.

:data:`EXTRA_MODULES` is the ``[project.optional-dependencies]`` table of ``pyproject.toml`` in
import names (``tests/cli/test_extras.py`` checks that the two agree).

Example:
    >>> extra_for("sqlalchemy")
    'annotate'
    >>> extra_for("matplotlib", prefer=("analysis",)), extra_for("matplotlib")
    ('analysis', 'models')
    >>> extra_for("numpy") is None
    True
"""

from __future__ import annotations

import importlib.util

from parakit.errors import Errors, MissingExtraError

#: extra -> the top-level modules its packages install (import names, not distribution names)
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "ja": ("fugashi", "unidic_lite"),
    "build": ("srt", "openai", "wordfreq", "httpx"),
    "datasets": ("datasets", "pyarrow", "huggingface_hub"),
    "models": (
        "torch",
        "transformers",
        "sentence_transformers",
        "faiss",
        "sentencepiece",
        "accelerate",
        "onnx",
        "onnxruntime",
        "onnx_ir",
        "matplotlib",
        "statsmodels",
        "gensim",
    ),
    "scale": ("dask", "distributed"),
    "static": ("model2vec", "skeletoken"),
    "kenlm": ("kenlm",),
    "generate": ("bert_score", "krippendorff", "httpx", "openai"),
    "annotate": (
        "sqlalchemy",
        "alembic",
        "fastapi",
        "pydantic_settings",
        "uvicorn",
        "jinja2",
        "multipart",
        "itsdangerous",
        "argon2",
        "psycopg",
        "httpx",
        "krippendorff",
        "statsmodels",
        "crowdkit",
        "markdown_it",
    ),
    "analysis": ("matplotlib", "statsmodels", "scikit_posthocs", "simplemma", "libvoikko"),
}

#: command group -> the extras most of its commands need (preferred when a module is in several)
GROUP_EXTRAS: dict[str, tuple[str, ...]] = {
    "build": ("build",),
    "annotate": ("annotate",),
    "models": ("models",),
    "identify": ("models",),
    "embed": ("models",),
    "mine": ("models",),
    "generate": ("models", "generate"),
    "report": ("analysis",),
    "release": ("datasets",),
}

#: extra -> the modules whose absence ``--help`` marks (the group cannot do its main work)
KEY_MODULES: dict[str, tuple[str, ...]] = {
    "build": ("srt", "openai", "wordfreq"),
    "annotate": ("sqlalchemy", "fastapi", "alembic"),
    "models": ("torch", "transformers", "sentence_transformers"),
    "generate": ("bert_score",),
    "analysis": ("matplotlib", "statsmodels", "simplemma"),
    "datasets": ("datasets", "huggingface_hub"),
}


def extra_for(module: str, prefer: tuple[str, ...] = ()) -> str | None:
    """The extra that installs ``module`` (its top-level package): the first of ``prefer``
    that does when it is in several, else the first in :data:`EXTRA_MODULES`; None for a
    module of no extra."""
    top = module.split(".")[0]
    extras = [name for name, modules in EXTRA_MODULES.items() if top in modules]
    if not extras:
        return None
    return next((e for e in prefer if e in extras), extras[0])


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_extras(group: str | None) -> list[str]:
    """The extras of command group ``group`` with a key module missing (none: ``[]``)."""
    return [
        extra
        for extra in GROUP_EXTRAS.get(group or "", ())
        if any(not installed(m) for m in KEY_MODULES.get(extra, ()))
    ]


def install_line(extras: list[str]) -> str:
    """``pip install 'parakit[a,b]'``."""
    return f"pip install 'parakit[{','.join(extras)}]'"


def missing_extra_error(err: BaseException, group: str | None) -> MissingExtraError | None:
    """A :class:`MissingExtraError` for an error raised because an extra's module is missing
    (the error itself or one it was raised from), else None."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name = getattr(current, "name", None)
        if isinstance(current, ModuleNotFoundError) and name:
            extra = extra_for(name, prefer=GROUP_EXTRAS.get(group or "", ()))
            if extra is not None:
                top = name.split(".")[0]
                where = f"'parakit {group}'" if group else "this command"
                return MissingExtraError(
                    Errors.E090_needs_optional_extra.format(
                        where=where, top=top, extra=extra, install_line_extra=install_line([extra])
                    )
                )
        current = current.__cause__ or current.__context__
    return None


__all__ = [
    "EXTRA_MODULES",
    "GROUP_EXTRAS",
    "extra_for",
    "install_line",
    "installed",
    "missing_extra_error",
    "missing_extras",
]
