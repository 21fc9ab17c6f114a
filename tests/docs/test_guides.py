"""Every code block of the guides in docs/ runs as written (issue 22), so a guide cannot drift
from the code.

A page's ```python and ```bash blocks run in order in one fresh working folder, with
``../shared/data`` beside it (the papers' corpora, as on our machines and in the README) and the
small inputs the page names made by the page's set-up below. Python blocks share one namespace
(a later block uses what an earlier one made) and are compiled with the page's name and line
numbers, so a traceback points at the Markdown line; bash blocks run with
``bash -e -o pipefail``. (pytest-examples does the same for Python, but its rewritten
tracebacks crash pytest's reporting on Python 3.11, and it has no bash.)

A block that cannot run here says so on the line before it, with the reason, which the reader
of the page does not see::

    <!-- docs-test: skip needs a GPU for hours -->
    <!-- docs-test: slow trains on the whole corpus (about a minute) -->   (only with -m slow)
    <!-- docs-test: raises LabelError -->      (the block ends in the error it shows)

A bare expression whose comment starts with a Python literal (``tokenize("a b")  # ['a', 'b']``)
must give that value; ``...`` inside the literal, or a comment after ``print()``, is read as an
illustration and not compared.

The README's blocks are run by tests/cli/test_readme.py; docs/benchmarks.md is a record of
measurements whose commands take minutes to hours on the whole corpora, not a guide.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
DATA = Path(os.environ.get("PARAKIT_DATA", ROOT.parent / "shared" / "data"))

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.M | re.S)
_MARK = re.compile(r"<!--\s*docs-test:\s*(\w+)\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    source: str
    action: str = "run"  # run | skip | slow | raises
    argument: str = ""  # the reason to skip, or the exception's class name


def blocks(page: Path) -> list[Block]:
    """The ```python and ```bash blocks of a page, with the marker on the line before each."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        language = match.group(1)
        if language not in ("python", "bash"):
            continue
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        block = Block(page.name, text.count("\n", 0, match.start()) + 1, language, match.group(2))
        marker = _MARK.search(before)
        if marker:
            block.action, block.argument = marker.group(1), marker.group(2)
        found.append(block)
    return found


PAGES = sorted(p for p in DOCS.glob("*.md") if blocks(p) and p.name != "benchmarks.md")
SLOW_PAGES = [p for p in PAGES if any(b.action == "slow" for b in blocks(p))]


def test_markers_are_known_and_give_a_reason():
    """A skipped block says why; no marker is misspelt (a typo would run or skip silently)."""
    marks = [b for p in PAGES for b in blocks(p) if b.action != "run"]
    assert marks, "no block is marked; the parser lost the markers"
    for block in marks:
        where = f"{block.page}:{block.line}"
        assert block.action in ("skip", "slow", "raises"), f"{where}: unknown {block.action!r}"
        assert len(block.argument) >= 10 or block.action == "raises", f"{where}: say why"
    # every marker in a page belongs to a block (one left above a paragraph does nothing)
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        n_marks = len(re.findall(r"<!--\s*docs-test:", text))
        assert n_marks == sum(b.action != "run" for b in blocks(page)), page.name


# --- the small inputs the pages name -------------------------------------------------------


def _jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")


SETUP: dict[str, Callable[[Path], dict]] = {}


#: pages whose set-up draws its inputs from the shared corpora
NEEDS_DATA: set[str] = set()


def setup(page: str, data: bool = False):
    """Register the set-up of a page: ``function(work) -> namespace`` writes its inputs."""

    def register(function: Callable[[Path], dict]):
        SETUP[page] = function
        if data:
            NEEDS_DATA.add(page)
        return function

    return register


# --- the runner ------------------------------------------------------------------------------


def _bash(block: Block, work: Path) -> None:
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PARAKIT_DATA": str(DATA),
    }
    run = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.source],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if run.returncode != 0:
        pytest.fail(
            f"docs/{block.page}:{block.line}: the bash block exits {run.returncode}\n"
            f"{block.source}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"
        )


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_guide_runs_as_written(page, tmp_path, monkeypatch):
    """The blocks of a page but those marked skip or slow."""
    _run_page(page, ("skip", "slow"), tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES, ids=[p.name for p in SLOW_PAGES])
def test_guide_runs_as_written_with_its_slow_blocks(page, tmp_path, monkeypatch):
    _run_page(page, ("skip",), tmp_path, monkeypatch)


def _shown_value(comment: str) -> tuple[bool, object]:
    """The value a comment shows, when it starts with a Python literal: ``# 0.5``,
    ``# ['Mr. Smith arrived.', 'He sat down!']``, ``# '4<is'`` (text after it is allowed)."""
    comment = comment.strip()
    ends = [len(comment)] + [m.start() for m in re.finditer(r"\s{2,}|\s\(|:\s|\s=\s", comment)]
    for end in sorted(set(ends), reverse=True):
        try:
            value = ast.literal_eval(comment[:end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        # "[..., ...]" and "{'read': [...]}" abbreviate: nothing to compare
        return "Ellipsis" not in repr(value), value
    return False, None


def _check_shown(actual: object, shown: object, text: str, where: str) -> None:
    if isinstance(shown, float) and not isinstance(actual, str):
        decimals = len(text.split(".", 1)[1]) if "." in text else 0
        tolerance = 0.5 * 10**-decimals
        assert abs(float(actual) - shown) <= tolerance, (
            f"{where}: {actual!r}, the page shows {shown}"
        )
        return
    if isinstance(actual, tuple) and isinstance(shown, list):
        actual = list(actual)
    assert actual == shown, f"{where}: {actual!r}, the page shows {shown!r}"


def _python(block: Block, namespace: dict) -> None:
    """Run a block; a bare expression whose comment shows a value must give that value."""
    source = "\n" * block.line + block.source  # so a traceback names the Markdown line
    tree = ast.parse(source)
    lines = source.split("\n")
    checks: dict[int, tuple[object, str]] = {}
    body = []
    for node in tree.body:
        # ast's column offsets count UTF-8 bytes
        rest = lines[node.end_lineno - 1].encode("utf-8")[node.end_col_offset :]
        comment = rest.decode("utf-8").strip()
        if isinstance(node, ast.Expr) and comment.startswith("#"):
            found, shown = _shown_value(comment[1:])
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "print"
            ):
                found = False  # a comment after print() describes the output, not a value
            if found:
                checks[node.lineno] = (shown, comment[1:].strip())
                node = ast.copy_location(
                    ast.Expr(
                        ast.Call(
                            ast.Name("__shown__", ast.Load()),
                            [node.value, ast.Constant(node.lineno)],
                            [],
                        )
                    ),
                    node,
                )
        body.append(node)
    tree.body = body
    ast.fix_missing_locations(tree)

    def shown(actual: object, line: int) -> None:
        value, text = checks[line]
        _check_shown(actual, value, text, f"docs/{block.page}:{line}")

    namespace["__shown__"] = shown
    exec(compile(tree, str(DOCS / block.page), "exec"), namespace)


def _run_page(page: Path, leave_out: tuple[str, ...], tmp_path, monkeypatch):
    text = page.read_text(encoding="utf-8")
    runnable = [b for b in blocks(page) if b.action not in leave_out]
    if not runnable:
        pytest.skip(f"docs/{page.name}: every block is marked {' or '.join(leave_out)}")
    if ("../shared/data" in text or page.name in NEEDS_DATA) and not DATA.exists():
        pytest.skip(f"docs/{page.name} reads the shared corpora: {DATA} not found (PARAKIT_DATA)")
    (tmp_path / "shared").mkdir()
    if DATA.exists():
        (tmp_path / "shared" / "data").symlink_to(DATA)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    namespace = {"__name__": "__main__", **(SETUP[page.name](work) if page.name in SETUP else {})}
    for block in runnable:
        started = time.perf_counter()
        if block.language == "bash":
            _bash(block, work)
        elif block.action == "raises":
            with pytest.raises(Exception) as raised:
                _python(block, namespace)
            assert type(raised.value).__name__ == block.argument, raised.value
        else:
            _python(block, namespace)
        print(
            f"docs/{page.name}:{block.line} {block.language} {time.perf_counter() - started:.1f} s"
        )


def _sample(pairs, n: int, seed: int = 0):
    """n pairs drawn with a seed (the corpora are ordered by topic), in file order."""
    import numpy as np

    from parakit.schema import PairSet

    pick = sorted(np.random.default_rng(seed).choice(len(pairs), n, replace=False).tolist())
    documents = list(pairs.documents.values())
    return PairSet(
        [pairs[i] for i in pick], scheme=pairs.scheme, name=pairs.name, documents=documents
    )


@setup("identification.md", data=True)
def _identification(work: Path) -> dict:
    from parakit.io import read, write
    from parakit.models.base import make_model

    expert = read(DATA / "multipit" / "expert-train.csv", format="multipit")
    clean, noisy = _sample(expert, 150, seed=1), _sample(expert, 150, seed=2)
    write(clean, work / "expert-train.jsonl")
    write(noisy, work / "crowd.jsonl")
    make_model("tfidf").fit(clean).save(work / "models" / "tfidf")
    turku = read(DATA / "turku" / "sv-test.json")
    return {
        "texts1": [p.text1 for p in clean],
        "texts2": [p.text2 for p in clean],
        "y": [int(p.label) for p in clean],
        "turku_pairs": turku,
        "clean": clean,
        "noisy": noisy,
    }


EXAMPLE = ROOT / "src" / "parakit" / "examples" / "corpus.jsonl"


def _example():
    """The bundled example corpus: 25 Turku-labelled pairs of 12 news documents."""
    from parakit.io import read

    return read(EXAMPLE)


@setup("text.md")
def _text(work: Path) -> dict:
    return {
        "texts1": ["The cat sat on the mat.", "It rained all day."],
        "texts2": ["A cat was sitting on the mat.", "The whole day was rainy."],
        "hyps": ["the cat sat on the mat", "it rained all day"],
        "ref_a1": "the cat was sitting on the mat",
        "ref_a2": "a cat sat on the mat",
        "ref_b1": "it was raining the whole day",
    }


@setup("splits.md")
def _splits(work: Path) -> dict:
    from parakit.io import write

    corpus = _example()
    write(corpus, work / "corpus.jsonl")
    # tweets: the example's pairs with a time each, two days apart
    dated = [p.replace(time=f"2026-03-{1 + n % 28:02d}T12:00:00") for n, p in enumerate(corpus)]
    documents = list(corpus.documents.values())
    write(corpus.__class__(dated, scheme=corpus.scheme, documents=documents), work / "tweets.jsonl")
    return {}


@setup("generation.md", data=True)
def _generation(work: Path) -> dict:
    # a multi-reference test set: sources of MultiPIT expert val with their paraphrases
    from parakit.io import read

    val = read(DATA / "multipit" / "expert-val.csv", format="multipit")
    refs: dict[str, list[str]] = {}
    for pair in val:
        if pair.label == "1" and len(refs) < 20:
            refs.setdefault(pair.text1, []).append(pair.text2)
    (work / "nmr.json").write_text(json.dumps(refs, ensure_ascii=False), encoding="utf-8")
    return {}


@setup("cli.md")
def _cli(work: Path) -> dict:
    # crowd votes in the MultiPIT layout, the number of yes votes in a column of its own
    (work / "crowd.csv").write_text(
        "sentence1,sentence2,n_yes\n"
        "A cat sat on the mat.,On the mat sat a cat.,5\n"
        "It rained all day.,The sun shone all day.,1\n",
        encoding="utf-8",
    )
    return {}


@setup("mining.md", data=True)
def _mining(work: Path) -> dict:
    import numpy as np

    from parakit.io import write

    rng = np.random.default_rng(0)

    def unit(n: int) -> np.ndarray:
        v = rng.normal(size=(n, 32)).astype("float32")
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    corpus = _example()
    write(corpus, work / "train.jsonl")  # Turku labels, for the embedding baseline
    write(_sample(corpus, 6, seed=3), work / "test.jsonl")  # the protected test pairs
    # two monthly batches of sentences grouped by topic: the example's statements
    sentences = [(p.group or p.id, t) for p in corpus for t in (p.text1, p.text2)]
    for month, part in (("2024-05", sentences[::2]), ("2024-06", sentences[1::2])):
        _jsonl(work / f"batch-{month}.jsonl", [{"text": t, "group": g} for g, t in part])
    # large-scale evaluation: sv-test pairs against opus-pb-dev sentences, a TF-IDF encoder
    # and an index of the distractors built with it
    from parakit.io import read
    from parakit.vectors.encode import TfidfEncoder
    from parakit.vectors.index import VectorIndex

    sv = _sample(read(DATA / "turku" / "sv-test.json"), 20)
    opus = _sample(read(DATA / "turku" / "opus-pb-dev.json"), 150)
    texts = [t for p in opus for t in (p.text1, p.text2)]
    statements = [t for p in sv for t in (p.text1, p.text2)]
    encoder = TfidfEncoder((2, 3), dense=True).fit(texts + statements)
    index = VectorIndex(kind="flat", metric="ip").build(lambda: iter([encoder.encode(texts)]))
    index.save(work / "distractor-index")
    # the slow blocks' collections: sentences, sentences with a source, queries, distractors
    (work / "sentences.txt").write_text("\n".join(texts[:200]) + "\n", encoding="utf-8")
    (work / "collection.txt").write_text("\n".join(texts[200:]) + "\n", encoding="utf-8")
    (work / "queries.txt").write_text("\n".join(statements[:10]) + "\n", encoding="utf-8")
    (work / "distractors.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    _jsonl(
        work / "collection.jsonl",
        [{"text": t, "source": p.id} for p in opus for t in (p.text1, p.text2)],
    )
    from parakit.models.base import make_model

    make_model("tfidf").fit(corpus.to_binary("loose")).save(work / "clf")
    n = 200  # an annotated sample of candidates, and all candidates, for the tiles
    labels = [str(x) for x in rng.choice([1, 2, 3, 4], size=n)]
    return {
        "pairs": sv,
        "texts": texts,
        "encoder": encoder,
        "d": "distractor-index",
        "chunks": [unit(600), unit(400)],
        "query_vectors": unit(3),
        "lex": rng.uniform(size=n),
        "neg_conf": rng.uniform(size=n),
        "pos_conf": rng.uniform(size=n),
        "labels": labels,
        "lex_all": rng.uniform(size=5 * n),
        "neg_all": rng.uniform(size=5 * n),
        "pos_all": rng.uniform(size=5 * n),
    }


@setup("analysis.md", data=True)
def _analysis(work: Path) -> dict:
    import csv

    import numpy as np

    from parakit.io import read, write

    rng = np.random.default_rng(0)

    def wide(path: Path, ids: list[str]) -> None:
        """Two systems' 0/1 predictions, one column each."""
        with path.open("w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(["id", "S1", "S2"])
            out.writerows([i, *rng.integers(0, 2, size=2).tolist()] for i in ids)

    val = read(DATA / "multipit" / "expert-val.csv")
    wide(work / "preds.csv", [p.id for p in val])
    etpc = read(DATA / "etpc", mrpc=DATA / "mrpc" / "msr_paraphrase_train.txt")
    wide(work / "etpc-preds.csv", [p.id for p in etpc])
    sv = read(DATA / "turku" / "sv-test.json")
    _jsonl(
        work / "preds.jsonl",
        [{"id": p.id, "predictions": {"S1": int(rng.integers(0, 2))}} for p in sv],
    )
    # a small Finnish corpus and a synonym file (one set per line, tab separated)
    opus = read(DATA / "turku" / "opus-pb-dev.json")
    write(_sample(opus, 60), work / "corpus.jsonl")
    (work / "my-fi-synonyms.tsv").write_text("auto\tbil\tajoneuvo\nisä\tfaija\n", encoding="utf-8")
    return {}


@setup("embeddings.md", data=True)
def _embeddings(work: Path) -> dict:
    from parakit.io import read, write

    expert = read(DATA / "multipit" / "expert-train.csv", format="multipit")
    for name, seed, n in (("train", 1, 64), ("dev", 2, 32), ("test", 3, 32)):
        write(_sample(expert, n, seed=seed), work / f"{name}.jsonl")
    return {}
