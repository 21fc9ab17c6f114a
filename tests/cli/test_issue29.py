"""Issue 29: every command either does what was meant or says why not (items 1-9 and 18).

The one-line error trials are at the end of ``tests/cli/test_errors.py``; the tests here need
more set-up than one command line.
"""

from __future__ import annotations

import csv
import json

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
