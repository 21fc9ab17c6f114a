"""Model names on the command line: the offline aliases work wherever a model is named, and
training shows a progress bar."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from parakit.cli import main
from parakit.examples import example_path
from parakit.offline import resolve_model

EXAMPLE = str(example_path())


def test_resolve_model_alias_and_paths(minilm_path, tmp_path):
    assert resolve_model("offline-minilm") == str(minilm_path)
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2").startswith("sentence-")
    assert resolve_model(str(tmp_path)) == str(tmp_path)


def test_offline_minilm_in_identify_and_mine(minilm_path, tmp_path, capsys):
    model = tmp_path / "clf"
    argv = ["identify", "train", EXAMPLE, "--binary", "-m", "embedding-lr"]
    assert main([*argv, "-p", "model_name_or_path=offline-minilm", "-o", str(model)]) == 0
    assert main(["identify", "predict", str(model), EXAMPLE, "-o", str(tmp_path / "p.jsonl")]) == 0
    sentences = tmp_path / "s.txt"
    sentences.write_text("A cat sat on the mat.\nOn the mat sat a cat.\nStocks fell today.\n")
    capsys.readouterr()
    index = tmp_path / "index"
    assert main(["mine", "index", str(sentences), "-o", str(index), "-m", "offline-minilm"]) == 0
    assert json.loads(capsys.readouterr().out)["ntotal"] == 3


def test_the_earlier_encoder_spelling_trains_the_same_model(minilm_path, tmp_path, capsys):
    """``-p encoder=...`` (the documented spelling before ``model_name_or_path``) still
    trains, with a warning the command line shows, the model ``-p model_name_or_path=...``
    trains; a name that is no parameter is still refused."""
    from parakit.errors import ParakitFutureWarning
    from parakit.io import read
    from parakit.models.base import MODEL_FILE, load_model

    argv = ["identify", "train", EXAMPLE, "--binary", "-m", "embedding-lr"]
    with pytest.warns(ParakitFutureWarning, match=r"encoder= is now called model_name_or_path="):
        assert main([*argv, "-p", "encoder=offline-minilm", "-o", str(tmp_path / "old")]) == 0
    new = ["-p", "model_name_or_path=offline-minilm", "-o", str(tmp_path / "new")]
    assert main([*argv, *new]) == 0
    old_meta, new_meta = (
        json.loads((tmp_path / name / MODEL_FILE).read_text()) for name in ("old", "new")
    )
    assert old_meta["params"]["model_name_or_path"] == "offline-minilm"
    assert old_meta["params"] == new_meta["params"] and "encoder" not in old_meta["params"]
    pairs = read(EXAMPLE).to_binary()
    np.testing.assert_allclose(
        load_model(tmp_path / "old").predict_proba(pairs),
        load_model(tmp_path / "new").predict_proba(pairs),
        atol=1e-6,
    )
    capsys.readouterr()
    code = main([*argv, "-p", "encoders=offline-minilm", "-o", str(tmp_path / "typo")])
    err = capsys.readouterr().err
    assert code == 2 and "[E712]" in err and "'encoders'" in err, err


def test_embed_train_shows_a_training_bar(tiny_model, tmp_path, capsys):
    pytest.importorskip("sentence_transformers")
    out = tmp_path / "bi"
    argv = ["embed", "train", EXAMPLE, "-o", str(out), "-m", str(tiny_model)]
    argv += ["--epochs", "1", "--max-seq-length", "32"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "it/s" in err or "s/it" in err  # the trainer's tqdm bar
    # -q: no bars, not even a library's own: tqdm reads TQDM_DISABLE when first imported, so
    # this is a fresh process, as a user runs it
    quiet = subprocess.run(
        [sys.executable, "-m", "parakit", *argv, "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert quiet.returncode == 0, quiet.stderr
    assert "it/s" not in quiet.stderr and "s/it" not in quiet.stderr
    assert main(["-q", *argv]) == 0
    capsys.readouterr()
    assert main(argv) == 0  # and a run after a quiet one (in one process) has its bars
    assert "it/s" in capsys.readouterr().err


def test_library_logs_only_with_verbose(tmp_path, capsys):
    """Normal output holds parakit's own lines, not other libraries' info logs (alembic)."""
    pytest.importorskip("alembic")
    assert main(["annotate", "init", str(tmp_path / "a.db")]) == 0
    captured = capsys.readouterr()
    assert "Running upgrade" not in captured.err + captured.out
    assert main(["-v", "annotate", "init", str(tmp_path / "b.db")]) == 0
    assert "Running upgrade" in capsys.readouterr().err


def test_embed_train_json_keeps_the_trainer_log_on_stderr(tiny_model, tmp_path, capsys):
    pytest.importorskip("sentence_transformers")
    argv = ["embed", "train", EXAMPLE, "-o", str(tmp_path / "bi"), "-m", str(tiny_model),
            "--epochs", "1", "--max-seq-length", "32", "--json"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)  # stdout is the one JSON object
    assert printed["saved"] == str(tmp_path / "bi") and isinstance(printed["history"], list)
    assert "train_runtime" in captured.err  # the trainer's closing log line, on stderr
