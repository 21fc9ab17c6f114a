"""Every mistake a user can make ends in one line ``error: ...`` on stderr and exit code 2.

Most cases run in-process (``main(argv)``); a handful run ``python -m parakit`` to check what a
user really sees (no traceback, the exit code of the process).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parakit.cli import main
from parakit.examples import example_path

EXAMPLE = str(example_path())


@pytest.fixture
def files(tmp_path):
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "adir").mkdir()
    (tmp_path / "s.txt").write_text("a b c\nd e f\n")
    (tmp_path / "bad.json").write_text("{oops")
    (tmp_path / "plain.jsonl").write_text('{"id": "a", "text1": "x", "text2": "y"}\n')
    (tmp_path / "pairs.dat").write_text("x\n")
    (tmp_path / "toy-texts.json").write_text('{"d1": "Hello there.", "d2": "Hi."}')
    (tmp_path / "bin.csv").write_text("sentence1,sentence2,label\na,b,1\n")
    (tmp_path / "bad.jsonl").write_text(
        '{"parakit": 1}\n{"id": "a", "text1": "x", "text2": "y", "label": "7"}\n'
    )
    if os.geteuid() == 0:  # root writes anywhere but into /sys
        unwritable = Path("/sys/parakit-test")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        unwritable = locked / "out"
    return tmp_path, unwritable


# (case id, argv with {t} = tmp folder and {u} = unwritable folder, text the line must hold)
CASES = [
    ("no arguments", [], "missing command; run 'parakit --help'"),
    ("group without command", ["mine"], "'parakit mine --help'"),
    ("group without command 2", ["report"], "'parakit report --help'"),
    ("unknown command", ["nosuch"], "No such command 'nosuch'"),
    ("unknown sub-command", ["identify", "fly"], "No such command 'fly'"),
    ("unknown option", ["convert", EXAMPLE, "--bogus"], "--bogus"),
    ("missing argument", ["convert"], "Missing argument"),
    ("missing output", ["convert", EXAMPLE], "'--output' / '-o'"),
    ("missing option", ["report", "profile", EXAMPLE, "-o", "{t}/r"], "--predictions"),
    ("old positional output", ["split", EXAMPLE, "{t}/x.jsonl"], "'--output' / '-o'"),
    ("bad ratios", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--ratios", "abc"], "--ratios"),
    ("negative ratios", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--ratios", "-1/2"], "--ratios"),
    ("ratios vs names", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--ratios", "1/1"], "--names"),
    ("bad choice", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--stratify", "maybe"], "--stratify"),
    ("not an integer", ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--folds", "x"], "--folds"),
    ("bad range", ["similarity", EXAMPLE, "-o", "{t}/x.jsonl", "--ngrams", "a-b"], "--ngrams"),
    ("reversed range", ["similarity", EXAMPLE, "-o", "{t}/x.jsonl", "--ngrams", "4-2"], "4-2"),
    ("out of range", ["embed", "train", EXAMPLE, "-o", "{t}/m", "--epochs", "0"], "--epochs"),
    ("bad integer", ["build", "sample", EXAMPLE, "-o", "{t}/x.jsonl", "--n", "abc"], "--n"),
    ("bad KEY=VALUE", ["convert", EXAMPLE, "-o", "{t}/x.jsonl", "-O", "bad"], "KEY=VALUE"),
    ("bad column", ["convert", EXAMPLE, "-o", "{t}/x.jsonl", "-c", "=x"], "--column"),
    ("bad param", ["identify", "train", EXAMPLE, "-o", "{t}/m", "-p", "oops"], "--param"),
    ("unknown model type", ["identify", "train", EXAMPLE, "-o", "{t}/m", "-m", "nosuch"], "E711"),
    (
        "missing model folder",
        ["mine", "index", "{t}/s.txt", "-o", "{t}/i", "-m", "./nope"],
        "./nope",
    ),
    (
        "not a model folder",
        ["identify", "predict", "{t}/adir", EXAMPLE, "-o", "{t}/p.jsonl"],
        "adir",
    ),
    ("unknown offline model", ["models", "path", "nosuch"], "E720"),
    ("unknown backend", ["mine", "index", "{t}/s.txt", "-o", "{t}/i", "--backend", "nope"], "nope"),
    ("unknown input format", ["info", EXAMPLE, "-f", "nope"], "unknown format 'nope'"),
    ("unknown output format", ["convert", EXAMPLE, "-o", "{t}/x.xyz"], "x.xyz"),
    ("unknown --to", ["convert", EXAMPLE, "-o", "{t}/x.csv", "--to", "nope"], "nope"),
    ("missing input file", ["info", "{t}/missing.jsonl"], "missing.jsonl: no such file"),
    ("missing input 2", ["report", "corpus", "{t}/nope.jsonl", "-o", "{t}/r"], "nope.jsonl"),
    ("bad data", ["info", "{t}/bad.jsonl", "--scheme", "turku"], "bad.jsonl, line 2"),
    ("output parent is a file", ["convert", EXAMPLE, "-o", "{t}/afile/x.jsonl"], "afile/x.jsonl"),
    ("output folder is a file", ["demo", "-o", "{t}/afile"], "afile: a file is in the way"),
    ("unwritable output", ["convert", EXAMPLE, "-o", "{u}/x.jsonl"], "{u}/x.jsonl"),
    ("no generator", ["generate", "run", "{t}/s.txt", "-o", "{t}/g.jsonl"], "--model"),
    (
        "bad JSON file",
        ["build", "subtitles", "{t}/adir", "-o", "{t}/x.jsonl", "--yields", "{t}/bad.json"],
        "bad.json",
    ),
    ("tiles without scores", ["mine", "tiles", EXAMPLE, "-o", "{t}/t"], "lex_similarity"),
    # issue 23.6: CLI words, the right option, a folder that is not a model
    ("generator without -m", ["generate", "train", EXAMPLE, "-o", "{t}/g"], "'--model' / '-m'"),
    (
        "generator from a folder that is not a model",
        ["generate", "train", EXAMPLE, "-o", "{t}/g", "-m", "{t}/adir"],
        "adir: not a model folder (no config.json)",
    ),
    (
        "cross-encoder from a folder that is not a model",
        [
            "identify",
            "train",
            EXAMPLE,
            "--binary",
            "-o",
            "{t}/m",
            "-m",
            "cross-encoder",
            "-p",
            "model_name_or_path={t}/adir",
        ],
        "adir: not a model folder (no config.json)",
    ),
    (
        "not a saved generator",
        ["generate", "run", "{t}/s.txt", "-o", "{t}/g.jsonl", "-m", "{t}/adir"],
        "'parakit generate train'",
    ),
    (
        "ratios vs default names",
        ["split", EXAMPLE, "-o", "{t}/x.jsonl", "--ratios", "80/10"],
        "--ratios",
    ),
    (
        "unlabelled training pairs",
        ["identify", "train", "{t}/plain.jsonl", "-o", "{t}/m"],
        "no labels",
    ),
    ("format not guessed", ["info", "{t}/pairs.dat"], "-f/--format"),
    ("info on a Turku texts file", ["info", "{t}/toy-texts.json"], "a Turku texts file"),
    (
        "binary labels into the Turku layout",
        ["convert", "{t}/bin.csv", "-o", "{t}/t.json"],
        "-o NAME.jsonl",
    ),
]


def _argv(argv, tmp, unwritable):
    return [a.format(t=tmp, u=unwritable) for a in argv]


def _check(err: str, expected: str, code: int) -> None:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    assert "Traceback" not in err
    assert expected in lines[0], lines[0]
    assert ".tmp" not in lines[0]  # never the hidden temp file of an atomic write
    codes = [w for w in lines[0].split() if w.startswith("[E")]
    assert len(codes) == len(set(codes)), lines[0]


def test_at_least_25_mistakes():
    assert len(CASES) >= 25
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("name, argv, expected", CASES, ids=[c[0] for c in CASES])
def test_mistake_gives_one_line(name, argv, expected, files, capsys):
    tmp, unwritable = files
    code = main(_argv(argv, tmp, unwritable))
    _check(capsys.readouterr().err, expected.format(t=tmp, u=unwritable), code)


SUBPROCESS = [
    "no arguments",
    "group without command",
    "unknown option",
    "bad ratios",
    "output parent is a file",
    "unwritable output",
]


@pytest.mark.parametrize("name", SUBPROCESS)
def test_mistake_in_a_real_process(name, files):
    tmp, unwritable = files
    _, argv, expected = next(c for c in CASES if c[0] == name)
    result = subprocess.run(
        [sys.executable, "-m", "parakit", *_argv(argv, tmp, unwritable)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    _check(result.stderr, expected.format(t=tmp, u=unwritable), result.returncode)
    assert result.stdout == ""


# -- issue 23: the traps a newcomer falls into -------------------------------------------------


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    "argv, patch, expected",
    [
        (
            ["mine", "run", "{t}/s.txt", "-o", "{t}/m.jsonl", "--workdir", "{t}/w"],
            ("parakit.mine.mining", "mine"),
            "interrupted; rerun to resume",
        ),
        (
            ["build", "suggest", "{t}/a.txt", "{t}/b.txt", "-o", "{t}/s.jsonl"],
            ("parakit.build.suggest", "PairSuggester.suggest"),
            "interrupted",
        ),
        (
            ["identify", "train", EXAMPLE, "--binary", "-o", "{t}/m"],
            ("parakit.models.base", "make_model"),
            "interrupted",
        ),
        (
            [
                "identify",
                "train",
                EXAMPLE,
                "--binary",
                "-o",
                "{t}/m",
                "-m",
                "cross-encoder",
                "-p",
                "output_dir={t}/checkpoints",
            ],
            ("parakit.models.cross_encoder", "CrossEncoderClassifier.fit"),
            "interrupted; rerun to resume",
        ),
    ],
    ids=["mine run", "build suggest", "identify train", "identify train with checkpoints"],
)
def test_ctrl_c_exits_130(argv, patch, expected, files, monkeypatch, capsys):
    """Ctrl-C is not success: `step && next-step` must not run the next step."""
    import importlib

    tmp, _ = files
    (tmp / "a.txt").write_text("One sentence here. Another one there.\n")
    (tmp / "b.txt").write_text("A sentence here. One more there.\n")
    module_name, attr = patch
    target = importlib.import_module(module_name)
    owner, _, name = attr.rpartition(".")
    monkeypatch.setattr(getattr(target, owner) if owner else target, name, _interrupt)
    if "mine" in argv:  # no encoder is loaded before the interrupt
        import parakit.vectors.encode

        monkeypatch.setattr(parakit.vectors.encode, "load_encoder", lambda *a, **k: None)
    code = main(_argv(argv, tmp, tmp))
    err = capsys.readouterr().err.strip()
    assert code == 130
    assert err.splitlines()[-1] == expected, err


def _wait_until_reading(fifo: Path, proc: subprocess.Popen) -> int | None:
    """Block until ``proc`` has opened ``fifo`` for reading (the event SIGINT must follow),
    however long its start-up takes on a busy machine; returns the write end, or None when
    the process ended first. No wall-clock budget: pytest's own timeout bounds a hang."""
    import errno
    import time

    while proc.poll() is None:
        try:  # succeeds once the reader has opened the pipe
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as err:
            assert err.errno == errno.ENXIO
            time.sleep(0.05)
    return None


def _default_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_info(tmp_path: Path, prelude: str = "") -> tuple[int, str]:
    """Run ``parakit info`` on a FIFO, SIGINT it once it reads; (exit code, stderr)."""
    import signal

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # `info` blocks reading it: the command is running when SIGINT comes
    code = f"{prelude}\nimport sys\nfrom parakit.cli import main\nsys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "info", str(fifo), "-f", "jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a suite started in the background (`cmd &` in a script) passes SIGINT on ignored,
        # and Python then installs no KeyboardInterrupt handler: give the child the default
        preexec_fn=_default_sigint,
    )
    writer = _wait_until_reading(fifo, proc)
    try:
        assert writer is not None, proc.communicate()[1]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate()  # it ends on the signal: nothing to time out
    finally:
        if writer is not None:
            os.close(writer)
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


@pytest.mark.timeout(900)
def test_ctrl_c_in_a_real_process(tmp_path):
    """SIGINT to a running ``parakit`` process: exit 130, one line, no traceback."""
    code, err = _interrupt_info(tmp_path)
    assert code == 130, err
    assert err.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in err


@pytest.mark.timeout(900)
def test_ctrl_c_after_a_slow_start(tmp_path):
    """Issue 29.17: on a busy machine the start-up outlasted the former 60 s budget, and the
    signal then came before the command ran. The wait is on the event (the pipe is being
    read), however long the start takes: here the start is made 3 s slower."""
    code, err = _interrupt_info(tmp_path, prelude="import time; time.sleep(3)")
    assert code == 130, err
    assert err.strip().splitlines()[-1] == "interrupted"


def test_serve_on_a_busy_port(tmp_path, capsys):
    import socket

    from parakit.annotate.store import Store

    Store.open(tmp_path / "s.sqlite", cheap_hashing=True).close()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["annotate", "serve", str(tmp_path / "s.sqlite"), "--port", str(port)])
    captured = capsys.readouterr()
    _check(captured.err, f"port {port} on 127.0.0.1 is already in use", code)
    assert "--port" in captured.err
    assert "serving" not in captured.out  # no URL printed for a server that never ran


@pytest.mark.slow
def test_demo_twice(tmp_path, capsys):
    """The README's main job, run again into the same folder, works (and gives the same report)."""
    out = tmp_path / "parakit-demo"
    assert main(["demo", "-o", str(out)]) == 0
    first = (out / "report.md").read_text()
    assert main(["demo", "-o", str(out)]) == 0, capsys.readouterr().err
    assert (out / "report.md").read_text() == first


def test_demo_annotate_step_twice(tmp_path):
    """The demo step that kept its store: a rerun starts from a fresh one (same report)."""
    from parakit.cli.demo.annotate import demo_step
    from parakit.examples import load_example

    pairs = load_example()
    first = demo_step(tmp_path, pairs)
    assert demo_step(tmp_path, pairs) == first


@pytest.mark.parametrize(
    "param, expected",
    [
        ("ngram_range=abc", "ngram_range"),
        ("use_idf=maybe", "use_idf"),
        ("analyzer=3", "analyzer"),
    ],
)
def test_bad_param_value_names_key_and_type(param, expected, tmp_path, capsys):
    argv = ["identify", "train", EXAMPLE, "--binary", "-o", str(tmp_path / "m"), "-p", param]
    code = main(argv)
    err = capsys.readouterr().err
    _check(err, "[E712]", code)
    assert f"'{expected}'" in err and "expects" in err, err


def test_make_model_checks_types():
    from parakit.errors import ParakitError
    from parakit.models.base import make_model

    with pytest.raises(ParakitError, match=r"\[E712\].*'epochs'.*expects an integer"):
        make_model("cross-encoder", epochs="one")
    assert make_model("tfidf", ngram_range=[2, 3]).ngram_range == [2, 3]
    assert make_model("cross-encoder", learning_rate=1).learning_rate == 1  # an int is a float


@pytest.mark.parametrize("flag", ["-q", "--quiet", "-v", "--verbose"])
def test_quiet_and_verbose_after_the_command(flag, tmp_path, capsys):
    code = main(["convert", EXAMPLE, "-o", str(tmp_path / "x.jsonl"), flag])
    assert code == 0, capsys.readouterr().err
    code = main(["build", flag, "sample", EXAMPLE, "-o", str(tmp_path / "y.jsonl"), "--n", "3"])
    assert code == 0, capsys.readouterr().err


def test_quiet_hides_progress_after_the_command(tmp_path, capsys):
    """-q after the command hides the bars as -q before it does."""
    main(["similarity", EXAMPLE, "-o", str(tmp_path / "x.jsonl"), "-q"])
    assert capsys.readouterr().err == ""


def _help(argv, capsys) -> str:
    assert main([*argv, "--help"]) == 0
    return capsys.readouterr().out


def test_help_shows_no_typer_internals(capsys):
    def usage(text: str) -> str:
        return next(line for line in text.splitlines() if "Usage:" in line)

    text = _help(["identify", "train"], capsys)
    assert "<bool>" not in text  # --binary is a flag: it takes no value
    assert "{" not in usage(text)  # usage line: INPUT, not {input}
    assert "-q" in text and "--verbose" in text  # every command takes -q/-v
    line = usage(_help(["info"], capsys))
    assert "INPUT" in line and "{input}" not in line, line


def test_help_keeps_brackets(capsys):
    assert "[low, high]" in _help(["build", "align"], capsys)


def test_info_reads_a_csv_without_a_final_line_break(tmp_path, capsys):
    """RFC 4180: the last record may end without a line break (MultiPIT's files do)."""
    path = tmp_path / "pairs.csv"
    path.write_text("id,text1,text2,label\na,hello there,hi there,1\nb,good bye,farewell,0")
    assert main(["info", str(path), "--json"]) == 0
    assert '"pairs": 2' in capsys.readouterr().out
    path.write_text('id,text1,text2,label\na,hello there,hi there,1\nb,"good bye,farewell,0')
    code = main(["info", str(path)])  # cut inside a quoted field: still refused
    _check(capsys.readouterr().err, "[E118]", code)


def test_annotate_export_says_what_it_left_out_and_keeps_lang(tmp_path, capsys):
    """12 example pairs double-annotated: the disagreements nobody resolved are left out, and
    the export says so (and keeps the corpus language)."""
    import json

    from parakit.annotate.store import Store
    from parakit.examples import load_example

    pairs = load_example()
    db = str(tmp_path / "s.sqlite")
    assert main(["annotate", "init", db]) == 0
    assert main(["annotate", "create-project", db, "p", "--candidates", EXAMPLE]) == 0
    store = Store.open(db, cheap_hashing=True)
    pid = store.projects.project_id("p")
    a, b = (store.accounts.add_annotator(n, "a-long-password") for n in ("a", "b"))
    store.queue.assign(pid, mode="double", seed=0)
    gold = {p.id: p.label for p in pairs}
    other = {"4": "3", "3": "2", "2": "1", "1": "2"}
    for who in (a, b):
        for k in range(6):  # each annotator labels 6 of the pairs: some items get one label
            work = store.queue.lease_next(pid, who)
            key = store.item(work.item_id).key
            label = gold[key] if who == a or k % 2 else other.get(gold[key][:1], "4")
            store.queue.save(work.item_id, who, label=label, revision=0, submit=True)
    unresolved = len(store.review.disagreements(pid))
    labelled = sum(1 for p in store.exports.to_pairset(pid))
    store.close()
    capsys.readouterr()
    out = tmp_path / "x.jsonl"
    assert main(["annotate", "export", db, "p", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert unresolved > 0 and labelled > 0
    assert f"wrote {labelled} pairs" in text
    assert f"{unresolved} disagreements unresolved" in text
    assert f"{len(pairs) - labelled - unresolved} pairs not yet labelled" in text
    header = json.loads(out.read_text().splitlines()[0])
    assert header["lang"] == pairs.lang == "en,fi,ja"


def test_report_patterns_says_when_synonyms_are_off(capsys):
    """Without a thesaurus patterns (5) and (6) are 0 % by construction: say so."""
    assert main(["report", "patterns", EXAMPLE]) == 0  # lang en,fi,ja: no one thesaurus
    out = capsys.readouterr().out
    assert "synonyms off" in out and "--synonyms" in out
    assert main(["report", "patterns", EXAMPLE, "--synonyms", "none"]) == 0
    assert "synonyms off (--synonyms none)" in capsys.readouterr().out


def test_identify_and_report_print_metrics_alike(tmp_path, capsys):
    """Accuracy and F1 are fractions (0.000-1.000) on every command, as in the JSON files."""
    import re

    model = str(tmp_path / "m")
    assert main(["identify", "train", EXAMPLE, "--binary", "-o", model, "--dev", EXAMPLE]) == 0
    assert re.search(r"dev accuracy [01]\.\d{3}  F1 [01]\.\d{3}$", capsys.readouterr().out, re.M)
    assert main(["identify", "evaluate", model, EXAMPLE, "--binary"]) == 0
    assert re.search(r"accuracy [01]\.\d{3}  macro F1 [01]\.\d{3}", capsys.readouterr().out)


def test_shell_completion(capsys, monkeypatch):
    """--show-completion prints a script; a completion request lists matching commands."""
    import typer.completion

    # typer detects the shell from the processes above this one; a suite started in the
    # background has none, so the shell is fixed here (the flag takes no shell name)
    monkeypatch.setattr(typer.completion, "_get_shell_name", lambda: "bash")
    assert main(["--show-completion"]) == 0
    captured = capsys.readouterr()
    assert "_PARAKIT_COMPLETE" in captured.out and captured.err == ""
    monkeypatch.setenv("_PARAKIT_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "parakit identify tr")
    monkeypatch.setenv("COMP_CWORD", "2")
    assert main([]) == 0
    assert capsys.readouterr().out.split() == ["train"]


def test_ctrl_c_through_click_abort(monkeypatch, capsys):
    """click itself (typer < 0.2x) turns Ctrl-C into Abort: still exit 130, not 'aborted'."""
    from parakit.cli import app as app_module

    abort = app_module._exception_types("Abort")[0]

    class Interrupted:
        commands = None

        def main(self, **kwargs):
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as err:
                raise abort() from err

    monkeypatch.setattr(app_module, "root_command", Interrupted)
    assert main(["info", EXAMPLE]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"


# -- issue 29: never a silently wrong answer (items 1-9) ----------------------------------------
# Each command below exited 0 with a wrong result or a lost file; now it says why not.


@pytest.fixture(scope="module")
def issue29(tmp_path_factory, data_path):
    """Real MultiPIT rows as two small CSV files (ids are row numbers in both), predictions and
    scores made for the first, a store, and a Turku-labelled and a binary candidate file."""
    import json

    tmp_path = tmp_path_factory.mktemp("issue29")
    lines = data_path("multipit/expert-train.csv").read_text(encoding="utf-8").splitlines()
    dev_lines = data_path("multipit/expert-val.csv").read_text(encoding="utf-8").splitlines()
    (tmp_path / "train.csv").write_text("\n".join(lines[:41]) + "\n", encoding="utf-8")
    (tmp_path / "dev.csv").write_text("\n".join(dev_lines[:41]) + "\n", encoding="utf-8")
    model = tmp_path / "tfidf"
    assert main(["identify", "train", str(tmp_path / "train.csv"), "-o", str(model), "-q"]) == 0
    argv = ["identify", "predict", str(model), str(tmp_path / "train.csv"), "-o"]
    assert main([*argv, str(tmp_path / "train-pred.jsonl")]) == 0
    from parakit.io import read

    train = read(tmp_path / "train.csv")
    with (tmp_path / "train-scores.csv").open("w", encoding="utf-8", newline="") as handle:
        import csv

        writer = csv.writer(handle)
        writer.writerow(["id", "text1", "text2", "neg_conf", "pos_conf"])
        writer.writerows([p.id, p.text1, p.text2, 0.5, 0.5] for p in train)
    assert main(["annotate", "init", str(tmp_path / "store.sqlite")]) == 0
    (tmp_path / "qe.jsonl").write_text(
        json.dumps({"parakit": 1, "scheme": "binary"})
        + "".join(
            "\n"
            + json.dumps({"id": p.id, "text1": p.text1, "text2": p.text2, "metadata": {"qe": 0.5}})
            for p in train
        )
        + "\n",
        encoding="utf-8",
    )
    (tmp_path / "few.csv").write_text("\n".join(dev_lines[:4]) + "\n", encoding="utf-8")
    _store_with_a_rewrite(tmp_path / "rw.sqlite", tmp_path / "few.csv")
    return tmp_path


def _store_with_a_rewrite(path, candidates):
    """A project whose only member labelled every pair and rewrote one: nobody is left who
    may judge the rewrite check."""
    from parakit.annotate.store import Store

    assert main(["annotate", "init", str(path)]) == 0
    assert (
        main(["annotate", "create-project", str(path), "p", "--candidates", str(candidates)]) == 0
    )
    store = Store.open(path, cheap_hashing=True)
    pid = store.projects.project_id("p")
    uid = store.accounts.add_annotator("ann1", "pw-ann1-123", projects=[pid])
    store.queue.assign(pid, mode="single", annotators=[uid])
    while (work := store.queue.lease_next(pid, uid)) is not None:
        store.queue.save(
            work.item_id, uid, label="1", revision=0, submit=True, rewrite=("a b", "b a")
        )
    store.close()


ISSUE_29 = [
    (
        "1 profile of predictions for another file",
        ["report", "profile", "{t}/dev.csv", "-p", "{t}/train-pred.jsonl", "-o", "{t}/rep"],
        "[E140] {t}/train-pred.jsonl, line 2, field 'text1': pair id '0' has other texts",
    ),
    (
        "1 select with the scores of another file",
        ["mine", "select", "{t}/dev.csv", "--scores", "{t}/train-scores.csv", "-o", "{t}/n.jsonl"],
        "[E140] {t}/train-scores.csv, line 2, field 'text1': pair id '0'",
    ),
    (
        "2 serve a mistyped store",
        ["annotate", "serve", "{t}/nosuch.sqlite", "--host", "256.0.0.1"],  # never serves
        "[E660] no store at {t}/nosuch.sqlite; create one with `parakit annotate init",
    ),
    (
        "2 export from a mistyped store",
        ["annotate", "export", "{t}/typo.sqlite", "p", "-o", "{t}/x.jsonl"],
        "no store at {t}/typo.sqlite",
    ),
    (
        "2 stats of a mistyped store",
        ["annotate", "stats", "{t}/typo.sqlite", "p"],
        "no store at {t}/typo.sqlite",
    ),
    (
        "2 release from a mistyped store",
        [
            "release",
            "--store",
            "{t}/typo.db",
            "--project",
            "p",
            "-o",
            "{t}/rel",
            "--license",
            "mit",
        ],
        "no store at {t}/typo.db",
    ),
    (
        "2 create a project in a mistyped store",
        ["annotate", "create-project", "{t}/typo.sqlite", "p", "--candidates", "{t}/dev.csv"],
        "no store at {t}/typo.sqlite",
    ),
    (
        "6 the convert command the dataset card printed",
        ["convert", "{t}/dev.csv", "{t}/out.jsonl"],
        "Missing option '--output' / '-o'",
    ),
    (
        "7 binary pairs into a Turku project",
        [
            "annotate",
            "create-project",
            "{t}/store.sqlite",
            "mp",
            "--candidates",
            "{t}/dev.csv",
            "--scheme",
            "turku",
        ],
        "[E661] the pairs are labelled in the 'binary' scheme (pair '0': '1')",
    ),
    (
        "9 a rewrite check nobody may take",
        ["annotate", "rewrite-check", "{t}/rw.sqlite", "p"],
        "[E662] 3 of the 3 items of the rewrite check have fewer than 2 members",
    ),
    (
        "3 release into a model folder",
        ["release", "{t}/dev.csv", "-o", "{t}/tfidf", "--license", "mit"],
        "[E141] {t}/tfidf: the folder is not empty and is not a parakit release folder",
    ),
    (
        "3 model into a folder of other files",
        ["identify", "train", "{t}/dev.csv", "-o", "{t}"],
        "[E141] {t}: the folder is not empty and is not a parakit model folder",
    ),
    (
        "3 bi-encoder into a folder of other files",
        ["embed", "train", "{t}/dev.csv", "-o", "{t}"],
        "[E141] {t}: the folder is not empty and is not a parakit model folder",
    ),
    (
        "4 order by a key no pair has",
        ["build", "sample", "{t}/qe.jsonl", "-o", "{t}/s.jsonl", "--n", "2", "--order-by", "QE"],
        "[E560] --order-by QE: no pair has the metadata key 'QE'",
    ),
    (
        "5 a licence the Hub does not know",
        ["release", "{t}/dev.csv", "-o", "{t}/rel", "--license", "mit-ish"],
        "[E142] {t}/rel: --license 'mit-ish' is not a Hugging Face Hub licence id; did you mean",
    ),
]


# -- issue 29.14: a core install (no extras) names the extra to install -------------------------

#: the script run in a fresh process: the extras' modules cannot be imported (as on a core
#: install; the packages the core itself pulls in, as rich's markdown_it, stay), then each argv
#: of the JSON list on stdin runs through main() and its exit code and stderr are printed
_CORE_ONLY = r"""
import contextlib, io, json, sys
from parakit.cli.extras import EXTRA_MODULES
CORE = {"markdown_it"}  # rich needs it
BLOCKED = {m for modules in EXTRA_MODULES.values() for m in modules} - CORE

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
from parakit.cli import main
results = []
for argv in json.load(sys.stdin):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(argv)
    results.append([code, err.getvalue(), out.getvalue()])
print(json.dumps(results))
"""

#: (case id, argv, the extra the one error line must name)
CORE_ONLY_CASES = [
    ("annotate init", ["annotate", "init", "{t}/s.sqlite"], "annotate"),
    ("embed train", ["embed", "train", EXAMPLE, "-o", "{t}/e"], "models"),
    ("report corpus", ["report", "corpus", EXAMPLE, "-o", "{t}/r"], "analysis"),
    ("report patterns", ["report", "patterns", "{t}/fi.jsonl"], "analysis"),
    ("mine run", ["mine", "run", EXAMPLE, "-o", "{t}/m.jsonl", "--workdir", "{t}/w"], "models"),
    ("annotate agreement", ["annotate", "agreement", EXAMPLE], "annotate"),
]


@pytest.fixture(scope="module")
def core_only(tmp_path_factory):
    """Every core-only trial in one process (one start-up): {case id: (code, stderr, stdout)}."""
    import json

    tmp = tmp_path_factory.mktemp("core")
    (tmp / "fi.jsonl").write_text(
        '{"parakit": 1, "scheme": "turku", "lang": "fi"}\n'
        '{"id": "a", "text1": "Talo on suuri.", "text2": "Talo on iso.", "label": "4"}\n'
    )
    trials = {name: [a.format(t=tmp) for a in argv] for name, argv, _ in CORE_ONLY_CASES}
    trials["identify train tfidf"] = [
        "identify", "train", EXAMPLE, "--binary", "-m", "tfidf", "-o", f"{tmp}/tf",
    ]  # fmt: skip
    trials["help"] = ["--help"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200", "TYPER_USE_RICH": "0"}
    result = subprocess.run(
        [sys.executable, "-c", _CORE_ONLY],
        input=json.dumps(list(trials.values())),
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(zip(trials, json.loads(result.stdout), strict=True)), tmp


@pytest.mark.parametrize(
    "name, extra", [(c[0], c[2]) for c in CORE_ONLY_CASES], ids=[c[0] for c in CORE_ONLY_CASES]
)
def test_core_install_names_the_extra(name, extra, core_only):
    """No 'internal error; please report it': the command, the package and the pip line."""
    results, _ = core_only
    code, err, _ = results[name]
    _check(err, f"pip install 'parakit[{extra}]'", code)
    assert "[E090]" in err and "internal error" not in err


def test_core_install_trains_a_light_model_with_its_card(core_only):
    """identify train -m tfidf needs no extra: the model and its card (no huggingface_hub)."""
    results, tmp = core_only
    code, err, _ = results["identify train tfidf"]
    assert code == 0, err
    card = (tmp / "tf" / "README.md").read_text()
    assert card.startswith("---\n") and "- tfidf\n" in card and "## Labels" in card


def test_core_install_help_marks_the_groups_without_their_extra(core_only):
    results, _ = core_only
    code, err, out = results["help"]
    assert code == 0, err
    lines: dict[str, str] = {}  # command -> its help, continuation lines joined
    for line in out.split("Commands:")[1].splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name = line.split()[0]
            lines[name] = line
        elif line.strip():
            lines[name] += " " + line.strip()
    assert "pip install 'parakit[annotate]'" in lines["annotate"]
    assert "pip install 'parakit[models]'" in lines["embed"]
    assert "pip install 'parakit[analysis]'" in lines["report"]
    assert "not installed" not in lines["convert"]


def test_help_marks_nothing_on_a_full_install(capsys):
    from parakit.cli.extras import GROUP_EXTRAS, missing_extras

    if any(missing_extras(group) for group in GROUP_EXTRAS):
        pytest.skip("an extra is not installed here")
    assert "extra not installed" not in _help([], capsys)


# -- issue 29.15: the remaining misleading messages ----------------------------------------------

CASES_29 = [
    (
        "Turku layout asked of a JSONL file",
        ["info", EXAMPLE, "-f", "turku"],
        "[E129]",
        "a JSON Lines file (one JSON value per line), not one JSON document: read it as JSONL",
    ),
    (
        "cross-encoder from a folder that does not exist",
        [
            "identify",
            "train",
            EXAMPLE,
            "--binary",
            "-o",
            "{t}/m",
            "-m",
            "cross-encoder",
            "-p",
            "model_name_or_path={t}/no/such/model",
        ],
        "[E719]",
        "no/such/model: no such folder",
    ),
    (
        "language named in full",
        ["release", EXAMPLE, "-o", "{t}/rel", "--license", "cc0-1.0", "--lang", "english"],
        "--lang",
        "'english' is 'en'",
    ),
]


@pytest.mark.parametrize("name, argv, expected", ISSUE_29, ids=[c[0] for c in ISSUE_29])
def test_silently_wrong_answer_is_refused(name, argv, expected, issue29, capsys):
    capsys.readouterr()
    code = main(_argv(argv, issue29, issue29))
    _check(capsys.readouterr().err, expected.format(t=issue29), code)
    assert not (issue29 / "typo.sqlite").exists() and not (issue29 / "typo.db").exists()
    assert not (issue29 / "nosuch.sqlite").exists()
    assert not (issue29 / "rel").exists() and not (issue29 / "rep.html").exists()


@pytest.mark.parametrize("name, argv, code, expected", CASES_29, ids=[c[0] for c in CASES_29])
def test_message_says_what_is_wrong(name, argv, code, expected, files, capsys):
    tmp, unwritable = files
    status = main(_argv(argv, tmp, unwritable))
    err = capsys.readouterr().err
    _check(err, expected.format(t=tmp), status)
    assert code in err
    assert "Extra data" not in err and "Repo id" not in err and "PairSet" not in err


def test_hub_id_is_not_taken_for_a_missing_folder():
    """org/name is a Hub id (left to the Hub); ./x, /x, ~/x and a/b/c are paths."""
    from parakit.errors import ModelError
    from parakit.models.base import check_pretrained

    check_pretrained("sentence-transformers/all-MiniLM-L6-v2")  # not checked here
    for path in ("./nope", "/nope/model", "~/nope", "models/nope/base"):
        with pytest.raises(ModelError, match="E719"):
            check_pretrained(path)


def test_binary_model_on_turku_labels_reads_them_as_binary(tmp_path, capsys):
    """A binary model evaluated on Turku labels: the labels' binary reading is compared (as
    with --binary), not Turku labels with 0/1 ("invalid Turku label '0'")."""
    import json

    model = str(tmp_path / "m")
    assert main(["identify", "train", EXAMPLE, "--binary", "-o", model]) == 0
    capsys.readouterr()
    out = tmp_path / "auto"
    assert main(["identify", "evaluate", model, EXAMPLE, "-o", str(out)]) == 0, capsys.readouterr()
    capsys.readouterr()
    asked = tmp_path / "binary"
    assert main(["identify", "evaluate", model, EXAMPLE, "--binary", "-o", str(asked)]) == 0
    auto, binary = (json.loads((p / "metrics.json").read_text()) for p in (out, asked))
    assert auto["metrics"] == binary["metrics"]


def test_option_help_has_no_stray_quote():
    """`mine select --help` read "Default: --tiles', or 0.1." in four lines."""
    import re

    from parakit.cli.app import _walk, root_command

    root = root_command()
    for command in [root, *_walk(root)]:
        for param in command.params:
            text = param.help or ""
            assert not re.search(r"(?<!')--[a-z][a-z-]*'", text), (command.name, text)
            unquoted = re.sub(r"(?<=\w)'(?=\w)|(?<=s)'(?=\s)", "", text)
            assert unquoted.count("'") % 2 == 0, (command.name, param.name, text)
