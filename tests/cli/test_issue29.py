"""Issue 29: every command either does what was meant or says why not (items 1-9 and 18).

The one-line error trials are at the end of ``tests/cli/test_errors.py``; the tests here need
more set-up than one command line.
"""

from __future__ import annotations

import csv
import json
import re
import shlex
from pathlib import Path

import pytest

from parakit.cli import main


def _generations(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_human_import_refuses_the_key_of_another_export(tmp_path, capsys):
    """Item 1: ratings are joined to the key by item id (i00001...), which every export reuses:
    the key of another export gave the other export's systems their scores."""
    first = [
        {"source": "I love this song", "generation": "This song is great", "system": "auto"},
        {"source": "Turn off Bluetooth", "generation": "Switch it off", "system": "manual"},
    ]
    second = [
        {"source": "Close the door", "generation": "Shut the door", "system": "auto"},
        {"source": "Open a window", "generation": "Open the window", "system": "manual"},
    ]
    for name, rows in (("a", first), ("b", second)):
        gen = _generations(tmp_path / f"{name}.jsonl", rows)
        assert main(["generate", "human-export", gen, "-o", str(tmp_path / name)]) == 0
    sheets = sorted(str(p) for p in (tmp_path / "a").glob("ratings-*.csv"))
    for number, sheet in enumerate(sheets):
        with open(sheet, encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            row.update(fluency=str(5 - number), semantic_similarity="4", diversity="3")
        with open(sheet, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    capsys.readouterr()
    assert main(["generate", "human-import", *sheets, "--key", str(tmp_path / "a/key.csv")]) == 0
    capsys.readouterr()
    code = main(["generate", "human-import", *sheets, "--key", str(tmp_path / "b/key.csv")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "[E140]" in err and "b/key.csv" in err and "field 'source'" in err, err


# -- item 6: the commands that cards and guides print --------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _inline_commands(text: str) -> list[str]:
    """The ``parakit ...`` commands quoted inline (in backticks) in Markdown text."""
    return [" ".join(m.split()) for m in re.findall(r"`(parakit [^`]+)`", text)]


def _usage_error(snippet: str) -> str | None:
    """What the CLI's parser says about ``snippet`` (None: it parses).

    Prose names commands and options without every argument (`parakit mine run`,
    `parakit generate run --llm-base-url`): a missing argument counts only when the snippet
    gives positional arguments, and options given as grammar (``[-f FMT]``, ``...``) are not
    parsed at all. An unknown option or a missing required option of a full command always
    counts.
    """
    from parakit.cli.app import root_command

    if "..." in snippet or "[" in snippet or "\\|" in snippet:
        return None
    args = shlex.split(snippet)[1:]
    command, names = root_command(), ["parakit"]
    while hasattr(command, "commands") and args and args[0] in command.commands:
        names.append(args[0])
        command = command.commands[args.pop(0)]
    if hasattr(command, "commands") or not args:
        return None
    positional = any(not a.startswith("-") for a in args[:1])
    try:
        command.make_context(" ".join(names), list(args), resilient_parsing=False)
    except Exception as err:
        kind = type(err).__name__
        if kind == "Exit" or not hasattr(err, "format_message"):
            return None
        if kind == "BadParameter":  # a placeholder value (--n N): the option exists
            return None
        if kind == "BadOptionUsage" and snippet.split()[-1].startswith("-"):
            return None  # an option named in prose, its value left out
        if kind == "MissingParameter" and not positional and "argument" in err.format_message():
            return None  # `parakit identify predict -o preds.jsonl`: the option is the point
        return f"{kind}: {err.format_message()}"
    return None


def test_commands_in_the_guides_parse():
    """Item 6: docs/release.md told users `parakit convert rel out.jsonl` (no -o) and
    docs/benchmarks.md `mine tiles ... --out` (no such option)."""
    bad = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for snippet in _inline_commands(page.read_text(encoding="utf-8")):
            error = _usage_error(snippet)
            if error:
                bad.append(f"{page.relative_to(ROOT)}: `{snippet}`: {error}")
    assert not bad, "\n".join(bad)


def test_commands_of_the_dataset_card_run(tmp_path, capsys):
    """Item 6: the released dataset card said `parakit convert FOLDER out.jsonl`, which fails."""
    from parakit.examples import example_path
    from parakit.io import read

    folder = tmp_path / "rel"
    assert main(["release", str(example_path()), "-o", str(folder), "--license", "cc0-1.0"]) == 0
    commands = _inline_commands((folder / "README.md").read_text(encoding="utf-8"))
    assert commands, "the card prints no command"
    for command in commands:
        argv = [a.replace("FOLDER", str(folder)) for a in shlex.split(command)[1:]]
        argv = [str(tmp_path / a) if a.endswith(".jsonl") else a for a in argv]
        capsys.readouterr()
        assert main(argv) == 0, f"`{command}` from the card: {capsys.readouterr().err}"
    assert len(read(tmp_path / "out.jsonl")) == len(read(folder))


def test_create_project_takes_the_scheme_of_the_pairs(tmp_path, data_path, capsys):
    """Item 7: binary MultiPIT pairs made a Turku project by default (Turku buttons, a
    ``turku`` export header)."""
    from parakit.annotate.store import Store

    rows = data_path("multipit/expert-val.csv").read_text(encoding="utf-8").splitlines()[:21]
    (tmp_path / "mp.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    store = str(tmp_path / "s.sqlite")
    assert main(["annotate", "init", store]) == 0
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "a", "text1": "One.", "text2": "Uno."}\n', encoding="utf-8")
    for name, path in (("mp", tmp_path / "mp.csv"), ("un", plain)):
        assert main(["annotate", "create-project", store, name, "--candidates", str(path)]) == 0
    st = Store.open(store, create=False)
    assert st.scheme(st.projects.project_id("mp")).name == "binary"
    assert st.scheme(st.projects.project_id("un")).name == "turku"  # unlabelled: as before
    st.close()
    capsys.readouterr()
    assert main(["annotate", "export", store, "mp", "-o", str(tmp_path / "x.jsonl")]) == 0
    header = json.loads((tmp_path / "x.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["scheme"] in ("binary", {"name": "binary"}), header


def test_stats_say_why_a_figure_is_undefined(tmp_path, capsys):
    """Item 8: `annotate stats` printed bare `nan` where the statistics page shows "—" and a
    reason (the disputed share_4_resolved is in tests/cli/test_tool_exports.py)."""
    store = str(tmp_path / "s.sqlite")
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"id": "a", "text1": "One.", "text2": "Uno."}\n', encoding="utf-8")
    assert main(["annotate", "init", store]) == 0
    assert main(["annotate", "create-project", store, "p", "--candidates", str(plain)]) == 0
    capsys.readouterr()
    assert main(["annotate", "stats", store, "p"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines() if "\t" in line]
    undefined = [row for row in rows if row[1] == "nan"]
    assert undefined, rows
    for row in undefined:
        assert len(row) == 3 and row[2], row
    reasons = {row[0]: row[2] for row in undefined}
    assert "rewrite has a final label" in reasons["rewrite_check_share_4_resolved"]


def test_rewrite_check_controls_are_not_the_rewritten_pairs(tmp_path, capsys):
    """Item 9: a pair a rewrite came from was mixed in as a control of the same batch: one
    judge saw an item and its rewrite, which reveals the provenance."""
    from parakit.annotate.store import Store
    from parakit.io import write
    from parakit.schema import Pair, PairSet

    candidates = tmp_path / "c.jsonl"
    write(PairSet([Pair(f"p{i}", f"one {i}", f"two {i}") for i in range(6)]), candidates)
    store_path = str(tmp_path / "s.sqlite")
    assert main(["annotate", "init", store_path]) == 0
    assert (
        main(["annotate", "create-project", store_path, "p", "--candidates", str(candidates)]) == 0
    )
    store = Store.open(store_path, cheap_hashing=True)
    pid = store.projects.project_id("p")
    uid = {n: store.accounts.add_annotator(n, f"pw-{n}-123", projects=[pid]) for n in "abc"}
    store.queue.assign(pid, mode="single", annotators=[uid["a"]])
    while (work := store.queue.lease_next(pid, uid["a"])) is not None:
        n = int(store.item(work.item_id).key[1:])
        rewrite = (f"uno {n}", f"dos {n}") if n < 3 else None
        store.queue.save(
            work.item_id, uid["a"], label="3", revision=0, submit=True, rewrite=rewrite
        )
    store.close()
    assert main(["annotate", "rewrite-check", store_path, "p"]) == 0
    assert "12 rewrite-check assignments made" in capsys.readouterr().out  # (3 + 3) x 2
    store = Store.open(store_path, create=False)
    keys = []
    while (work := store.queue.lease_next(pid, uid["b"], task="rewrite-check")) is not None:
        item = store.item(work.item_id)
        keys.append(item.key)
        store.queue.save(
            item.id, uid["b"], label="3", revision=0, submit=True, task="rewrite-check"
        )
    store.close()
    controls = sorted(k for k in keys if not k.startswith("rewrite-"))
    assert controls == ["p3", "p4", "p5"], keys


# -- item 18: empty inputs are not empty corpora --------------------------------------------------


EMPTY_INPUTS = [
    ("empty.jsonl", "", [], "[E143] {p}, line 1: empty file"),
    ("blank.jsonl", "\n\n", [], "[E143] {p}, line 1: empty file"),
    ("empty.tsv", "", ["-f", "turku-opus-pb"], "[E143] {p}, line 1: no pairs"),
    (
        "header.tsv",
        "label\tlex-similarity\tsource\ttxt1\ttxt2\n",
        ["-f", "turku-opus-pb"],
        "[E143] {p}, line 1: no pairs",
    ),
    ("empty.json", "[]", ["-f", "turku-opus-pb"], "[E143] {p}, line 1: no pairs"),
    (
        "mp.csv",
        "sentence1,sentence2,label\na,b,1\nc,d,\n",
        ["-f", "multipit"],
        "[E144] {p}, line 3, field 'label': empty label in a labelled file",
    ),
    (
        "detected.csv",
        "sentence1,sentence2,label\na,b,1\nc,d,\n",
        [],
        "[E144] {p}, line 3, field 'label'",
    ),
]


@pytest.mark.parametrize(
    "name, content, argv, expected", EMPTY_INPUTS, ids=[c[0] for c in EMPTY_INPUTS]
)
def test_empty_inputs_are_refused_with_file_and_line(
    name, content, argv, expected, tmp_path, capsys
):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code = main(["info", str(path), *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: "), err
    assert expected.format(p=path) in err, err


def test_etpc_folder_without_its_xml_files(tmp_path, data_path, capsys):
    """Item 18: with `-O mrpc=...` a folder holding none of ETPC's XML files read as 4,076
    MRPC pairs that no phenomenon annotates (a profile over nothing)."""
    folder = tmp_path / "etpc"
    folder.mkdir()
    (folder / "README.txt").write_text("the XML files were not unpacked\n")
    mrpc = data_path("mrpc/msr_paraphrase_train.txt")
    code = main(["info", str(folder), "-f", "etpc", "-O", f"mrpc={mrpc}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and f"[E143] {folder}: no ETPC XML files in the folder" in err, err


def test_a_multipit_file_without_label_column_stays_unlabelled(data_path):
    """The auto-* files have no label column: their pairs are unlabelled, as before."""
    from parakit.io import read

    pairs = read(data_path("multipit/auto-val.csv"), format="multipit")
    assert len(pairs) > 0 and all(p.label is None for p in pairs)


def test_a_model_trained_into_a_model_folder_replaces_it_whole(tmp_path, capsys):
    """Item 3: a second model trained into the same folder left the first one's
    dev_metrics.json (and its other files) beside it."""
    from parakit.examples import example_path

    example = str(example_path())
    fresh, reused = tmp_path / "fresh", tmp_path / "reused"
    base = ["identify", "train", example, "--binary"]
    assert main([*base, "-m", "tfidf", "--dev", example, "-o", str(reused)]) == 0
    assert (reused / "dev_metrics.json").exists()
    assert main([*base, "-m", "wor", "-o", str(reused)]) == 0
    assert main([*base, "-m", "wor", "-o", str(fresh)]) == 0
    assert sorted(p.name for p in reused.iterdir()) == sorted(p.name for p in fresh.iterdir())
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())  # no temporary left
    card = (reused / "README.md").read_text(encoding="utf-8")
    assert 'load_model("reused")' in card and ".tmp" not in card


def test_a_release_into_a_release_folder_leaves_no_turku_files(tmp_path):
    """Item 3: a release replaces an earlier release whole (its turku/ files too)."""
    from parakit.examples import example_path

    folder = tmp_path / "rel"
    argv = ["release", str(example_path()), "-o", str(folder), "--license", "cc0-1.0"]
    assert main([*argv, "--turku"]) == 0
    assert (folder / "turku").is_dir()
    assert main(argv) == 0
    assert not (folder / "turku").exists()
