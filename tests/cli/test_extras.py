"""The table of optional extras (issue 29.14) agrees with pyproject.toml; model cards need no
Hub library."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from parakit.cli.extras import EXTRA_MODULES, GROUP_EXTRAS, KEY_MODULES, extra_for

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"

#: distribution name -> import name, where they differ
IMPORT_NAMES = {
    "unidic-lite": "unidic_lite",
    "huggingface_hub": "huggingface_hub",
    "sentence-transformers": "sentence_transformers",
    "faiss-cpu": "faiss",
    "onnx-ir": "onnx_ir",
    "bert-score": "bert_score",
    "python-multipart": "multipart",
    "argon2-cffi": "argon2",
    "crowd-kit": "crowdkit",
    "markdown-it-py": "markdown_it",
    "scikit-posthocs": "scikit_posthocs",
}


def _extras() -> dict[str, set[str]]:
    table = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    out: dict[str, set[str]] = {}
    for extra, requirements in table.items():
        if extra in ("all", "dev", "docs"):
            continue
        names = set()
        for requirement in requirements:
            dist = re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)
            if requirement.startswith("dask"):
                names |= {"dask", "distributed"}
            names.add(IMPORT_NAMES.get(dist, dist.replace("-", "_")))
        out[extra] = names
    return out


def test_the_table_is_pyprojects():
    assert {k: set(v) for k, v in EXTRA_MODULES.items()} == _extras()
    for extras in GROUP_EXTRAS.values():
        assert set(extras) <= set(EXTRA_MODULES)
    for extra, modules in KEY_MODULES.items():
        assert set(modules) <= set(EXTRA_MODULES[extra]), extra


def test_extra_for_prefers_the_groups_extra():
    assert extra_for("statsmodels.api", prefer=("analysis",)) == "analysis"
    assert extra_for("statsmodels") == "models"
    assert extra_for("torch", prefer=("generate",)) == "models"
    assert extra_for("parakit.models") is None and extra_for("numpy") is None


def test_card_front_matter_reads_as_the_hub_writes_it(tmp_path):
    """The card's YAML is written without huggingface_hub; the Hub reads it back the same."""
    from parakit.models.card import front_matter, write_model_card

    data = {
        "language": ["en", "fi"],
        "license": "apache-2.0",
        "library_name": None,
        "pipeline_tag": "text-classification",
        "base_model": "org/model-1.5",
        "tags": ["parakit", "paraphrase", "x: y", "yes"],
    }
    text = front_matter(data)
    assert text.splitlines()[0] == "base_model: org/model-1.5"
    hub = pytest.importorskip("huggingface_hub")
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(text) == yaml.safe_load(hub.ModelCardData(**data).to_yaml())
    path = write_model_card(tmp_path, title="t", model_type="tfidf", language="en,fi")
    card = hub.ModelCard(path.read_text())
    assert card.data.language == ["en", "fi"] and card.data.tags[-1] == "tfidf"


def test_card_names_a_local_base_model_without_its_path(tmp_path):
    """Issue 29.16: a card names the folder a model started from, not where it sat."""
    from parakit.models.card import write_model_card

    base = tmp_path / "models" / "my-encoder"
    base.mkdir(parents=True)
    path = write_model_card(tmp_path, title="t", model_type="bi-encoder", base_model=str(base))
    text = path.read_text()
    assert "It starts from `my-encoder`." in text and str(tmp_path) not in text
