"""Library steps that got their CLI in issue 12: the T2 subtitle second round, M5 expert
batches and M8 noisy-label cleaning."""

from __future__ import annotations

import json

from parakit.cli import main
from parakit.examples import example_path
from parakit.io import read, write
from parakit.schema import Pair, PairSet

EXAMPLE = str(example_path())

# two versions of one episode (written for this test): lines in segments 0, 0, 1, 1, 2, 3
_TIMES = ["00:00:01", "00:14:58", "00:15:00", "00:29:30", "00:31:00", "00:47:10"]
_A = ["Where are you going?", "Home, I think.", "It is late already.",
      "We should have left earlier.", "Never mind that now.", "Good night."]  # fmt: skip
_B = ["Where are you off to?", "Back home, I guess.", "It's already late.",
      "We ought to have gone sooner.", "Forget about that now.", "Sleep well."]  # fmt: skip


def _srt(lines: list[str]) -> str:
    return "\n".join(
        f"{i}\n{t},000 --> {t},900\n{text}\n"
        for i, (t, text) in enumerate(zip(_TIMES, lines, strict=True), 1)
    )


def test_subtitles_second_round(tmp_path, capsys):
    root = tmp_path / "subs"
    for title in ("MovieA", "MovieB", "MovieC"):
        (root / title).mkdir(parents=True)
        (root / title / "a.srt").write_text(_srt(_A))
        (root / title / "b.srt").write_text(_srt(_B))
    first = tmp_path / "first.jsonl"
    one = ["--min-segments", "1", "--max-segments", "1"]
    assert main(["build", "subtitles", str(root), "-o", str(first), *one]) == 0
    used = {(p.group, p.metadata["segment"]) for p in read(first)}
    assert len(used) == 3  # one segment per title
    yields = tmp_path / "yields.json"
    yields.write_text(json.dumps({"MovieA": 2, "MovieB": 9, "MovieC": 5}))
    second = tmp_path / "second.jsonl"
    argv = ["build", "subtitles", str(root), "-o", str(second), *one, "--first-round", str(first)]
    assert main([*argv, "--yields", str(yields), "--max-titles", "2"]) == 0
    pairs = read(second)
    assert [p.group for p in pairs] == ["MovieB", "MovieC"]  # highest first-round yield first
    assert not {(p.group, p.metadata["segment"]) for p in pairs} & used
    assert pairs.metadata["round"] == 2
    # yields counted from extracted candidates (a pair set): MovieC 2, MovieA 1, MovieB none
    extracted = tmp_path / "extracted.jsonl"
    groups = ["MovieC", "MovieA", "MovieC"]
    write(PairSet([Pair(str(i), "x", f"y{i}", group=g) for i, g in enumerate(groups)]), extracted)
    assert main([*argv, "--yields", str(extracted)]) == 0
    assert [p.group for p in read(second)] == ["MovieC", "MovieA"]


def test_expert_batches(tmp_path, capsys):
    """a~b~c~d form one cluster (transitive), e~f another; g-h is not a paraphrase."""
    edges = [("a", "b", "1"), ("b", "c", "1"), ("c", "d", "1"), ("e", "f", "1"), ("g", "h", "0")]
    corpus = tmp_path / "corpus.jsonl"
    pairs = [Pair(str(i), x, y, label=lab) for i, (x, y, lab) in enumerate(edges)]
    write(PairSet(pairs, scheme="binary"), corpus)
    out = tmp_path / "batch.jsonl"
    # no trend/URL groups here: the per-group default names the pair and the way out
    assert main(["build", "expert-batches", str(corpus), "-o", str(out)]) == 2
    assert "[E502]" in capsys.readouterr().err
    argv = ["build", "expert-batches", str(corpus), "-o", str(out), "--no-per-group"]
    assert main([*argv, "--max-members", "1"]) == 0
    assert "2 clusters" in capsys.readouterr().out
    batch = read(out)
    # 2 seeds x 1 member in the 4-cluster; the 2-cluster has no member left after its 2 seeds
    assert len(batch) == 2
    assert {p.group for p in batch} == {"0"}
    assert all(p.label is None for p in batch)
    assert {p.text1 for p in batch} | {p.text2 for p in batch} <= set("abcd")
    assert main([*argv, "--n-seeds", "1"]) == 0
    assert len(read(out)) == 3 + 1  # 1 seed x 3 others, 1 seed x 1 other
    # 4 seeds leave no partner in either cluster: an error, not "wrote 0 pairs"
    capsys.readouterr()
    assert main([*argv, "--n-seeds", "4", "-o", str(tmp_path / "none.jsonl")]) == 2
    assert "[E501]" in capsys.readouterr().err and not (tmp_path / "none.jsonl").exists()


def test_expert_batches_from_a_classifiers_predictions(tmp_path, multipit, capsys):
    """M5 on the real output of the step before it: `identify predict` on MultiPIT pairs
    grouped three source tweets to a group (the file runs topic by topic); the batch is
    checked against clusters recomputed here from the predictions with a union-find."""
    train, dev = multipit
    write(train, tmp_path / "train.jsonl")
    model = tmp_path / "model"
    argv = ["identify", "train", str(tmp_path / "train.jsonl"), "-m", "tfidf", "-o", str(model)]
    assert main(argv) == 0
    source: dict[str, int] = {}
    grouped = [p.replace(label=None, group=f"g{source.setdefault(p.text1, len(source)) // 3}")
               for p in dev]  # fmt: skip
    write(PairSet(grouped, scheme="binary"), tmp_path / "candidates.jsonl")
    predicted = tmp_path / "predicted.jsonl"
    argv = ["identify", "predict", str(model), str(tmp_path / "candidates.jsonl")]
    assert main([*argv, "-o", str(predicted)]) == 0
    batch_path = tmp_path / "batch.jsonl"
    assert main(["build", "expert-batches", str(predicted), "-o", str(batch_path)]) == 0
    batch = read(batch_path)

    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x: tuple[str, str]) -> tuple[str, str]:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    members: dict[str, dict[str, set[str]]] = {}
    for pair in read(predicted):
        if pair.label == "1":
            key = (pair.group, pair.text1), (pair.group, pair.text2)
            parent[find(key[1])] = find(key[0])
    for group, text in list(parent):
        members.setdefault(group, {}).setdefault(find((group, text))[1], set()).add(text)
    # the library's choice: the largest cluster, ties by the first member in sort order
    largest = {g: min(cs.values(), key=lambda c: (-len(c), min(c))) for g, cs in members.items()}
    expected = {g: min(2, len(c)) * min(30, len(c) - 2) for g, c in largest.items()}
    got: dict[str, list] = {}
    for pair in batch:
        got.setdefault(pair.group, []).append(pair)
    assert {g: len(ps) for g, ps in got.items()} == {g: n for g, n in expected.items() if n}
    for group, pairs in got.items():
        assert {p.text1 for p in pairs} | {p.text2 for p in pairs} <= largest[group]
        assert len({p.metadata["cluster"] for p in pairs}) == 1  # one cluster per group
        assert len({p.text1 for p in pairs}) == 2  # two seeds
    assert sum(expected.values()) > 0
    assert any(len(cs) > 1 for cs in members.values())  # groups where "the largest" chooses


def test_clean_labels_flips_what_the_teacher_doubts(tmp_path, capsys):
    teacher = tmp_path / "teacher"
    assert main(["identify", "train", EXAMPLE, "--binary", "-m", "tfidf", "-o", str(teacher)]) == 0
    predicted = tmp_path / "predicted.jsonl"
    assert main(["identify", "predict", str(teacher), EXAMPLE, "-o", str(predicted)]) == 0
    proba = {p.id: p.metadata["prediction"]["proba"] for p in read(predicted)}
    noisy_set = read(EXAMPLE).to_binary()
    noisy_set = noisy_set.derive(  # three labels turned around
        [p.replace(label=str(1 - int(p.label))) if i < 3 else p for i, p in enumerate(noisy_set)]
    )
    noisy = tmp_path / "noisy.jsonl"
    write(noisy_set, noisy)
    out = tmp_path / "clean.jsonl"
    argv = ["identify", "clean-labels", str(noisy), "--teacher", str(teacher), "-o", str(out)]
    # flip at λ = 0.5: a label whose teacher probability is <= 0.5 becomes the other one
    assert main([*argv, "--method", "flip", "--threshold", "0.5"]) == 0
    doubted = [p.id for p in noisy_set if proba[p.id][p.label] <= 0.5]
    assert 3 <= len(doubted) < len(noisy_set)  # at least the three turned-around labels
    assert f"{len(doubted)} flipped" in capsys.readouterr().out
    cleaned = {p.id: p for p in read(out)}
    for pair in noisy_set:
        want = str(1 - int(pair.label)) if pair.id in doubted else pair.label
        assert cleaned[pair.id].label == want
    # filter at MultiPIT's λ = 0.35 drops exactly the pairs with p <= 0.35
    assert main([*argv, "--method", "filter"]) == 0
    kept = {p.id for p in read(out)}
    assert 0 < len(kept) < len(noisy_set)
    assert kept == {p.id for p in noisy_set if proba[p.id][p.label] > 0.35}
    # the teacher can also be trained here, on clean pairs
    clean_argv = ["identify", "clean-labels", str(noisy), "--clean", EXAMPLE, "--binary"]
    assert main([*clean_argv, "-m", "tfidf", "-o", str(out)]) == 0
    assert main([*clean_argv, "--teacher", str(teacher), "-o", str(out)]) == 2
