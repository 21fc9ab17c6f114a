"""The README's short tour runs as written on the shared corpora (issue 12)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks(language: str, section: str = "A short tour") -> list[str]:
    tour = README.read_text(encoding="utf-8").split(f"## {section}", 1)[1]
    tour = tour.split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", tour, flags=re.S)


def _workdir(data_path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A working folder with ``../shared/data`` beside it, and an environment with parakit."""
    data = data_path("turku/sv-test.json").parents[1]  # the folder with turku/, mrpc/ ...
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data)
    work = tmp_path / "work"
    work.mkdir()
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ["PATH"], "HF_HUB_OFFLINE": "1"}
    return work, env


def _run(command: list[str], work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=900)


def test_the_readme_tour_runs_as_written(data_path, tmp_path):
    work, env = _workdir(data_path, tmp_path)
    (bash,) = _blocks("bash")
    (python,) = _blocks("python")
    shell = _run(["bash", "-e", "-o", "pipefail", "-c", bash], work, env)
    assert shell.returncode == 0, shell.stderr
    assert "wrote 3278 pairs to release/dev.json" in shell.stdout
    assert (work / "pairs.jsonl").exists() and (work / "mrpc-sim.jsonl").exists()
    script = _run([sys.executable, "-c", python], work, env)
    assert script.returncode == 0, script.stderr
    assert script.stdout.startswith("1081 ")


@pytest.mark.slow
def test_the_readme_chain_runs_as_written(data_path, tmp_path):
    """The 'From one stage to the next' block (about 40 s on an idle machine; the same hand-offs
    run in CI on small data in tests/cli/test_chain.py)."""
    work, env = _workdir(data_path, tmp_path)
    (bash,) = _blocks("bash", "From one stage to the next")
    shell = _run(["bash", "-e", "-o", "pipefail", "-c", bash], work, env)
    assert shell.returncode == 0, shell.stderr
    assert (work / "reports" / "mp-dev.html").exists()
    mined = (work / "mined.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(mined) > 1 and '"p_paraphrase"' in mined[1]
