"""Mutation fuzzing of the readers: the contract "bad input never becomes wrong data".

A :class:`Target` is a small sample of a real corpus file (the first records of the shared
``turku``, ``multipit``, ``tmup``, ``mrpc``, ``etpc`` files, canonical JSONL written by parakit,
a generic CSV/TSV read with a column mapping) with its reference parse. :func:`mutate` damages
it the way a careless user or a broken export would (a value of the wrong type, a repeated id
or header name, a stray quote, a span outside its document, a NUL byte, invalid UTF-8, a file
cut short, a random byte...), and :func:`run_case` reads the result and classifies it:

``error``
    a :class:`~parakit.errors.ParakitError` (the contract's first outcome);
``correct``
    data identical to the reference parse of the unmutated records (for a file cut between
    records: the records before the cut), or, for a random byte change, which may legitimately
    change a text, data that satisfies every invariant of the data model;
``other``
    any other exception (a contract violation);
``bad``
    data accepted that is not the reference (a contract violation: silently accepted bad data).

Used by ``tests/fuzz`` (through hypothesis), ``tests/io/test_cli_bad_input.py`` and
``benchmarks/fuzz_readers.py``; a test harness, so it lives beside the tests, not in the package.

Example:
    >>> import random
    >>> target = make_target("mrpc", "../shared/data")  # doctest: +SKIP
    >>> run_case(mutate(target, random.Random(0)), "/tmp/fuzz")  # doctest: +SKIP
    Outcome(kind='error', ...)
"""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from parakit.errors import ParakitError
from parakit.io.delimited import tokenize
from parakit.schema import Pair, PairSet

#: The readers fuzzed, in table order.
TARGETS = (
    "turku",
    "opus-pb",
    "multipit",
    "tmup",
    "mrpc",
    "etpc",
    "jsonl",
    "table",
)
#: Display names for the benchmark table.
TITLES = {
    "turku": "Turku JSON (+ texts .json.gz)",
    "opus-pb": "opus-pb JSON/TSV",
    "multipit": "MultiPIT CSV (expert, auto)",
    "tmup": "TMUP TSV",
    "mrpc": "MRPC TSV",
    "etpc": "ETPC XML (+ MRPC texts)",
    "jsonl": "canonical JSONL",
    "table": "generic CSV/TSV with mapping",
}


class Random(Protocol):
    """What a mutation needs from its source of randomness (``random.Random`` has it; the
    fuzz tests adapt hypothesis' ``data.draw``)."""

    def randrange(self, stop: int) -> int: ...


def _choice(rng: Random, items: Sequence[Any]) -> Any:
    return items[rng.randrange(len(items))]


@dataclass
class Variant:
    """One sample file layout of a target: its files, what to read and how."""

    files: dict[str, bytes]
    entry: str
    read: Callable[[Path], PairSet]
    family: str  # json-items, csv, tsv-plain, xml, jsonl
    main: str  # the file mutated by default
    reference: PairSet | None = None
    items: Any = None  # parsed JSON items / rows, for structural mutations
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Target:
    name: str
    variants: list[Variant]


@dataclass
class Case:
    """One mutated input."""

    target: str
    mutation: str
    variant: Variant
    files: dict[str, bytes]
    expect: str  # "error", "error_or_same", "error_or_prefix", "error_or_cut", "valid"


@dataclass
class Outcome:
    kind: str  # error, correct, other, bad
    detail: str = ""


# -- reading ----------------------------------------------------------------------------------


def _write_files(folder: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def _reference(variant: Variant) -> PairSet:
    folder = Path(tempfile.mkdtemp(prefix="parakit-fuzz-ref-"))
    try:
        _write_files(folder, variant.files)
        return variant.read(folder / variant.entry)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def well_formed(pairs: PairSet) -> str | None:
    """The first broken invariant of the data model in ``pairs``, or None when all hold."""
    seen: set[str] = set()
    for document in pairs.documents.values():
        if not isinstance(document.text, str) or _unsafe(document.text):
            return f"document {document.id!r}: text not a clean string"
    for pair in pairs:
        if not isinstance(pair.id, str) or pair.id in seen:
            return f"pair id {pair.id!r} not a unique string"
        seen.add(pair.id)
        for name in ("text1", "text2"):
            value = getattr(pair, name)
            if not isinstance(value, str) or _unsafe(value):
                return f"pair {pair.id!r}: {name} not a clean string"
        for name in ("group", "split", "time", "source"):
            value = getattr(pair, name)
            if value is not None and not isinstance(value, str):
                return f"pair {pair.id!r}: {name} is {type(value).__name__}"
        if pair.fold is not None and (
            isinstance(pair.fold, bool) or not isinstance(pair.fold, int) or pair.fold < 0
        ):
            return f"pair {pair.id!r}: fold {pair.fold!r}"
        if pair.label is not None and not pairs.scheme.is_valid(pair.label):
            return f"pair {pair.id!r}: label {pair.label!r} invalid"
        for span in (pair.span1, pair.span2):
            if span is None:
                continue
            document = pairs.documents.get(span.doc_id)
            if document is None or span.end > len(document.text) or span.begin < 0:
                return f"pair {pair.id!r}: span {span} outside its documents"
        for rewrite in pair.rewrites:
            if len(rewrite) != 2 or not all(isinstance(t, str) for t in rewrite):
                return f"pair {pair.id!r}: rewrite {rewrite!r}"
        try:
            json.dumps(pair.metadata, allow_nan=False)
        except (TypeError, ValueError):
            return f"pair {pair.id!r}: metadata not plain JSON"
    return None


def _unsafe(text: str) -> bool:
    return "\x00" in text or any("\ud800" <= c <= "\udfff" for c in text)


def _same(a: PairSet, b: PairSet) -> bool:
    return a.pairs == b.pairs and a.documents == b.documents


def _prefix(result: PairSet, reference: PairSet) -> bool:
    n = len(result)
    if result.pairs != reference.pairs[:n]:
        return False
    return all(reference.documents.get(k) == v for k, v in result.documents.items())


def _cut(result: PairSet, reference: PairSet) -> bool:
    """The reference's first records, the last of them possibly cut inside its last field."""
    n = len(result)
    return n <= len(reference) and result.pairs[: n - 1] == reference.pairs[: max(n - 1, 0)]


def run_case(case: Case, workdir: str | Path | None = None) -> Outcome:
    """Write the case's files to a fresh folder, read them and classify the outcome."""
    base = Path(workdir) if workdir is not None else None
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="case-", dir=base))
    try:
        _write_files(folder, case.files)
        try:
            result = case.variant.read(folder / case.variant.entry)
        except ParakitError as err:
            return Outcome("error", str(err)[:300])
        except BaseException as err:
            if isinstance(err, KeyboardInterrupt):
                raise
            return Outcome("other", f"{type(err).__name__}: {str(err)[:300]}")
        reference = case.variant.reference
        assert reference is not None
        broken = well_formed(result)
        if broken is not None:
            return Outcome("bad", broken)
        if case.expect == "valid":
            return Outcome("correct", "well-formed")
        if _same(result, reference):
            return Outcome("correct", "identical to the reference")
        if case.expect == "error_or_prefix" and _prefix(result, reference):
            return Outcome("correct", f"the first {len(result)} records")
        if case.expect == "error_or_cut" and _cut(result, reference):
            return Outcome("correct", f"the first {len(result) - 1} records and a cut last one")
        return Outcome("bad", _difference(result, reference))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _difference(result: PairSet, reference: PairSet) -> str:
    if len(result) != len(reference):
        return f"{len(result)} pairs instead of {len(reference)}"
    for got, want in zip(result.pairs, reference.pairs, strict=True):
        if got != want:
            for name in Pair.__dataclass_fields__:
                if getattr(got, name) != getattr(want, name):
                    return (
                        f"pair {want.id!r}: {name} {str(getattr(got, name))[:80]!r} instead of "
                        f"{str(getattr(want, name))[:80]!r}"
                    )
    return "documents differ"


# -- the samples --------------------------------------------------------------------------------


def _lines(path: Path, count: int) -> bytes:
    """The first ``count`` lines of a file, each with its line break."""
    out = []
    with open(path, "rb") as handle:
        for _ in range(count):
            line = handle.readline()
            if not line:
                break
            out.append(line)
    return b"".join(out)


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8", "surrogatepass"), mtime=0)


def make_target(name: str, data: str | Path, records: int = 12) -> Target:
    """Build the samples of one target from the shared data folder ``data``."""
    from parakit.io import (
        read_etpc,
        read_jsonl,
        read_mrpc,
        read_multipit,
        read_opus_parsebank,
        read_table,
        read_tmup,
        read_turku,
        write_jsonl,
    )

    data = Path(data)
    variants: list[Variant] = []
    if name in ("turku", "jsonl"):
        items = json.loads((data / "turku/sv-test.json").read_text("utf-8"))[:records]
        with gzip.open(data / "turku/sv-texts.json.gz", "rt", encoding="utf-8") as handle:
            texts = json.load(handle)
        used = sorted({i["context"][f"doc{s}"] for i in items if i.get("context") for s in (1, 2)})
        texts = {k: texts[k] for k in used}
        turku = Variant(
            files={
                "sv-test.json": json.dumps(items, ensure_ascii=False, indent=4).encode(),
                "sv-texts.json.gz": _gz(json.dumps(texts, ensure_ascii=False)),
            },
            entry="sv-test.json",
            read=lambda p: read_turku(p),
            family="json-items",
            main="sv-test.json",
            items=items,
        )
        if name == "turku":
            variants.append(turku)
    if name in ("opus-pb", "jsonl"):
        items = json.loads((data / "turku/opus-pb-dev.json").read_text("utf-8"))[:records]
        opus = Variant(
            files={"opus-pb-dev.json": json.dumps(items, ensure_ascii=False, indent=4).encode()},
            entry="opus-pb-dev.json",
            read=lambda p: read_opus_parsebank(p),
            family="json-items",
            main="opus-pb-dev.json",
            items=items,
        )
        tsv = "".join(
            "\t".join(i[k] for k in ("label", "lex-similarity", "source", "txt1", "txt2")) + "\n"
            for i in items
        )
        opus_tsv = Variant(
            files={"opus-pb-sample.tsv": tsv.encode()},
            entry="opus-pb-sample.tsv",
            read=lambda p: read_opus_parsebank(p),
            family="tsv-plain",
            main="opus-pb-sample.tsv",
        )
        if name == "opus-pb":
            variants += [opus, opus_tsv]
    if name == "jsonl":
        folder = Path(tempfile.mkdtemp(prefix="parakit-fuzz-"))
        try:
            for source in (turku, opus):
                _write_files(folder, source.files)
                pairs = source.read(folder / source.entry)
                write_jsonl(pairs, folder / "out.jsonl")
                variants.append(
                    Variant(
                        files={"corpus.jsonl": (folder / "out.jsonl").read_bytes()},
                        entry="corpus.jsonl",
                        read=lambda p: read_jsonl(p),
                        family="jsonl",
                        main="corpus.jsonl",
                    )
                )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    if name == "multipit":
        for file in ("expert-train.csv", "auto-val.csv"):
            variants.append(
                Variant(
                    files={file: _lines(data / "multipit" / file, records + 1)},
                    entry=file,
                    read=lambda p: read_multipit(p),
                    family="csv",
                    main=file,
                )
            )
    if name == "tmup":
        variants.append(
            Variant(
                files={"tmup.tsv": _lines(data / "tmup/tmup.tsv", records + 1)},
                entry="tmup.tsv",
                read=lambda p: read_tmup(p),
                family="tsv-plain",
                main="tmup.tsv",
            )
        )
    if name == "mrpc":
        variants.append(
            Variant(
                files={"msr.txt": _lines(data / "mrpc/msr_paraphrase_train.txt", records + 1)},
                entry="msr.txt",
                read=lambda p: read_mrpc(p),
                family="tsv-plain",
                main="msr.txt",
            )
        )
    if name == "etpc":
        types = (data / "etpc/paraphrase_types.xml").read_bytes()
        files = {
            "etpc/paraphrase_types.xml": types,
            "etpc/textual_np_pos.xml": _xml_head(data / "etpc/textual_np_pos.xml", 10),
            "etpc/negation.xml": _xml_head(data / "etpc/negation.xml", 4),
            "msr.txt": _lines(data / "mrpc/msr_paraphrase_train.txt", 31),
        }
        for main in ("etpc/textual_np_pos.xml", "etpc/negation.xml", "etpc/paraphrase_types.xml"):
            variants.append(
                Variant(
                    files=files,
                    entry="etpc",
                    read=lambda p: read_etpc(p, mrpc=p.parent / "msr.txt"),
                    family="xml",
                    main=main,
                )
            )
    if name == "table":
        rows = [
            r
            for _, r in tokenize(
                _lines(data / "multipit/expert-val.csv", records + 1).decode("utf-8"),
                ",",
                path=None,
            )[0]
        ][1:]
        for delimiter, file in ((",", "pairs.csv"), ("\t", "pairs.tsv")):
            header = ["key", "a", "b", "y", "f", "topic", "note"]
            lines = [header]
            for number, (t1, t2, label) in enumerate(rows):
                lines.append(
                    [f"k{number}", t1, t2, label, str(number % 10), f"g{number // 4}", "ok"]
                )
            text = "".join(
                delimiter.join(_field(v, delimiter) for v in row) + "\n" for row in lines
            )
            mapping = {
                "id": "key",
                "text1": "a",
                "text2": "b",
                "label": "y",
                "fold": "f",
                "group": "topic",
            }
            variants.append(
                Variant(
                    files={file: text.encode()},
                    entry=file,
                    read=lambda p, d=delimiter, m=mapping: read_table(p, delimiter=d, columns=m),
                    family="csv" if delimiter == "," else "tsv-quoted",
                    main=file,
                    options={"delimiter": delimiter},
                )
            )
    if not variants:
        raise ValueError(f"unknown fuzz target {name!r}; choose one of {', '.join(TARGETS)}")
    for variant in variants:
        variant.reference = _reference(variant)
        if variant.family == "jsonl":
            variant.items = [
                json.loads(line) for line in variant.files[variant.main].decode().splitlines()
            ]
    return Target(name, variants)


def _xml_head(path: Path, relations: int) -> bytes:
    text = path.read_text("utf-8")
    end = 0
    for _ in range(relations):
        end = text.index("</relation>", end) + len("</relation>")
    return (text[:end] + "\n</xml>\n").encode()


# -- mutations ------------------------------------------------------------------------------------

#: Values of the wrong type for each kind of field (never a valid value of that field).
WRONG = {
    "text": [5, 1.5, True, None, [], {}, ["a"], "a\x00b", "a\ud800b"],
    "label": [True, False, 1.5, None, [], {}, "5", "4<>", "", "x1", "44"],
    "int": [True, 1.5, "3", "abc", "1_0", -1, [], {}, 1e300],
    "optional_text": [5, True, 1.5, [], {}, ["a"], "a\x00"],
    "rewrites": ["ab", ["ab"], [["a"]], [["a", "b", "c"]], [[1, 2]], {}, 5, [None]],
    "context": [[], "x", 5, True, {}],
    "number_text": ["1_0", "nan", "inf", " 0.5", "", "0,5", True, None, [], "0x1"],
    "span": [[], "x", 5, {"doc": "d"}, {"doc": "d", "begin": 0}],
    "metadata": [[], "x", 5, True],
    "judgments": ["x", 5, {}, [5], [{"label": "4"}]],
}
TURKU_FIELDS = {
    "txt1": "text",
    "txt2": "text",
    "label": "label",
    "fold": "int",
    "goeswith": "optional_text",
    "rewrites": "rewrites",
    "context": "context",
}
OPUS_FIELDS = {
    "txt1": "text",
    "txt2": "text",
    "label": "label",
    "lex-similarity": "number_text",
    "source": "optional_text",
}
JSONL_FIELDS = {
    "text1": "text",
    "text2": "text",
    "label": "label",
    "fold": "int",
    "group": "optional_text",
    "split": "optional_text",
    "time": "optional_text",
    "source": "optional_text",
    "rewrites": "rewrites",
    "span1": "span",
    "span2": "span",
    "metadata": "metadata",
    "judgments": "judgments",
}


_DEEP = "__parakit_deep__"


def _deep() -> str:
    """A placeholder that :func:`_dump_items` replaces with 5,000 nested lists (``json`` itself
    cannot write that deep)."""
    return _DEEP


def _dump_items(items: Any, indent: int | None = 4) -> bytes:
    text = json.dumps(items, indent=indent)
    return text.replace(json.dumps(_DEEP), "[" * 5000 + '"x"' + "]" * 5000).encode("ascii")


def _byte_level(rng: Random, content: bytes) -> tuple[str, bytes, str]:
    """A mutation of the raw bytes, whatever the format."""
    kind = _choice(rng, ("truncate", "nul", "bad_utf8", "flip"))
    if not content:
        return "empty", content, "error"
    at = rng.randrange(len(content))
    if kind == "truncate":
        return "truncate", content[:at], "error_or_prefix"
    if kind == "nul":
        return "nul", content[:at] + b"\x00" + content[at:], "error"
    if kind == "bad_utf8":
        return "bad_utf8", content[:at] + b"\xff" + content[at:], "error"
    new = bytes([rng.randrange(256)])
    return "flip", content[:at] + new + content[at + 1 :], "valid"


def _json_items(rng: Random, variant: Variant) -> tuple[str, bytes, str]:
    items = json.loads(json.dumps(variant.items))
    fields = TURKU_FIELDS if variant.main == "sv-test.json" else OPUS_FIELDS
    index = rng.randrange(len(items))
    item = items[index]
    kind = _choice(rng, ("wrong_type", "wrong_type", "missing", "duplicate_id", "deep", "span"))
    if kind == "span" and variant.main != "sv-test.json":
        kind = "wrong_type"
    if kind == "wrong_type":
        key = _choice(rng, sorted(fields))
        if key == "context" and item.get("context") is None:
            key = "label"
        wrong = WRONG[fields[key]]
        item[key] = wrong[rng.randrange(len(wrong))]
        return f"wrong_type:{key}", _dump_items(items), "error"
    if kind == "missing":
        key = _choice(rng, ("txt1", "txt2", "label"))
        del item[key]
        return f"missing:{key}", _dump_items(items), "error"
    if kind == "duplicate_id":
        other = (index + 1 + rng.randrange(len(items) - 1)) % len(items)
        item["id"] = "p"
        items[other]["id"] = "p"
        return "duplicate_id", _dump_items(items), "error"
    if kind == "deep":
        item[_choice(rng, sorted(fields))] = _deep()
        return "deep_nesting", _dump_items(items, None), "error"
    # span: an offset outside its document, an unknown document, or a negative / reversed span
    with_context = [i for i in items if i.get("context")]
    item = with_context[rng.randrange(len(with_context))]
    side = 1 + rng.randrange(2)
    how = _choice(rng, ("end_outside", "unknown_doc", "negative", "reversed"))
    context = item["context"]
    if how == "end_outside":
        context[f"end{side}"] = 10**7
    elif how == "unknown_doc":
        context[f"doc{side}"] = "no-such-document"
    elif how == "negative":
        context[f"beg{side}"] = -1
    else:
        context[f"beg{side}"], context[f"end{side}"] = (
            context[f"end{side}"] + 1,
            context[f"beg{side}"],
        )
    return f"span:{how}", _dump_items(items), "error"


def _texts_file(rng: Random, variant: Variant) -> tuple[str, bytes, str]:
    """Damage the Turku texts file (gzip, types, a document swap)."""
    texts = json.loads(gzip.decompress(variant.files["sv-texts.json.gz"]))
    kind = _choice(rng, ("not_gzip", "cut_gzip", "wrong_type", "shuffled", "missing_doc"))
    if kind == "not_gzip":
        return "texts:not_gzip", json.dumps(texts).encode(), "error"
    if kind == "cut_gzip":
        raw = variant.files["sv-texts.json.gz"]
        return "texts:cut_gzip", raw[: 1 + rng.randrange(len(raw) - 1)], "error"
    keys = sorted(texts)
    key = _choice(rng, keys)
    if kind == "wrong_type":
        texts[key] = _choice(rng, WRONG["text"])
    elif kind == "missing_doc":
        del texts[key]
    else:  # the texts of another release beside this data file: every span wrong
        values = [texts[k] for k in keys]
        texts = dict(zip(keys, values[1:] + values[:1], strict=True))
    return f"texts:{kind}", _gz(json.dumps(texts, ensure_ascii=False)), "error"


def _rows(variant: Variant, delimiter: str, quoting: bool) -> tuple[list[list[str]], str]:
    text = variant.files[variant.main].decode("utf-8-sig")
    newline = "\r\n" if "\r\n" in text else "\n"
    rows, _terminated = tokenize(text, delimiter, path=None, quoting=quoting)
    return [r for _, r in rows], newline


def _field(value: str, delimiter: str) -> str:
    """A CSV field, quoted when it holds the delimiter, a quote or a line break."""
    if any(c in value for c in (delimiter, '"', "\r", "\n")):
        return '"' + value.replace('"', '""') + '"'
    return value


def _join(rows: list[list[str]], delimiter: str, quoting: bool, newline: str, bom: bool) -> bytes:
    cell = (lambda v: _field(v, delimiter)) if quoting else (lambda v: v)
    text = "".join(delimiter.join(cell(v) for v in row) + newline for row in rows)
    return (("\ufeff" if bom else "") + text).encode("utf-8", "surrogatepass")


def _delimited(rng: Random, variant: Variant) -> tuple[str, bytes, str]:
    delimiter = variant.options.get("delimiter", "," if variant.family == "csv" else "\t")
    quoting = variant.family in ("csv", "tsv-quoted")
    bom = variant.files[variant.main].startswith(b"\xef\xbb\xbf")
    rows, newline = _rows(variant, delimiter, quoting)
    has_header = variant.main != "opus-pb-sample.tsv"
    body_start = 1 if has_header else 0
    kinds = ["split_field", "merge_fields", "merge_rows", "nul_in_text"]
    if variant.family == "tsv-plain":
        kinds += ["cr_in_field"]
    if has_header:
        kinds += ["header_repeat", "header_empty"]
    if quoting:
        kinds += ["stray_quote", "stray_quote"]
    header = rows[0] if has_header else []
    label_column = next(
        (i for i, h in enumerate(header) if h.strip().lower() in ("label", "quality", "y")), None
    )
    if variant.main == "opus-pb-sample.tsv":
        label_column = 0
    if label_column is not None:
        kinds += ["bad_label", "bad_label"]
    if "f" in header:
        kinds += ["bad_fold"]
    if "key" in header:
        kinds += ["duplicate_id"]
    if variant.main == "opus-pb-sample.tsv":
        kinds += ["bad_number"]
    kind = _choice(rng, kinds)
    r = body_start + rng.randrange(len(rows) - body_start)
    row = rows[r]
    c = rng.randrange(len(row))
    if kind == "header_repeat":
        i, j = rng.randrange(len(header)), rng.randrange(len(header))
        if i == j:
            j = (i + 1) % len(header)
        header[j] = header[i]
    elif kind == "header_empty":
        header[rng.randrange(len(header))] = ""
    elif kind == "split_field":
        value = row[c]
        at = rng.randrange(len(value) + 1)
        row[c : c + 1] = [value[:at], value[at:]]
    elif kind == "merge_fields":
        if len(row) < 2:
            row.append("extra")
        else:
            c = min(c, len(row) - 2)
            row[c : c + 2] = [row[c] + row[c + 1]]
    elif kind == "merge_rows":
        if r + 1 >= len(rows):
            r -= 1
        rows[r : r + 2] = [[*rows[r][:-1], rows[r][-1] + rows[r + 1][0], *rows[r + 1][1:]]]
    elif kind == "nul_in_text":
        row[c] = row[c][: len(row[c]) // 2] + "\x00" + row[c][len(row[c]) // 2 :]
    elif kind == "cr_in_field":  # a bare carriage return written without quotes
        text = _join(rows, delimiter, quoting, newline, bom).decode("utf-8")
        lines = text.split(newline)
        line = lines[r]
        at = rng.randrange(len(line) + 1)
        lines[r] = line[:at] + "\r" + line[at:]
        return "cr_in_field", newline.join(lines).encode("utf-8"), "error_or_same"
    elif kind == "stray_quote":
        text = _join(rows, delimiter, quoting, newline, bom).decode("utf-8")
        lines = text.split(newline)
        line = lines[r]
        at = rng.randrange(len(line) + 1)
        lines[r] = line[:at] + '"' + line[at:]
        return "stray_quote", newline.join(lines).encode("utf-8"), "error"
    elif kind == "bad_label":
        assert label_column is not None
        row[label_column] = _choice(rng, ("-1", "1.0", "01", "ok", "1 1", "4<>", "0x1", "5"))
    elif kind == "bad_fold":
        row[header.index("f")] = _choice(rng, ("1_0", "1.9", "abc", "\u0661", "-3", "1e1", "²"))
    elif kind == "duplicate_id":
        key = header.index("key")
        other = body_start + rng.randrange(len(rows) - body_start)
        if other == r:
            other = body_start if r != body_start else body_start + 1
        row[key] = rows[other][key]
    elif kind == "bad_number":
        row[1] = _choice(rng, [*WRONG["number_text"][:6], "1e", "--1"])
    return kind, _join(rows, delimiter, quoting, newline, bom), "error"


def _xml(rng: Random, variant: Variant) -> tuple[str, bytes, str]:
    import re

    text = variant.files[variant.main].decode("utf-8")
    tags = (
        ["type_id"]
        if variant.main.endswith("types.xml")
        else ["pair_id", "type_id", "sense_preserving", "s1_scope", "key_s2"]
    )
    kind = _choice(rng, ("bad_value", "bad_value", "duplicate_child", "missing_close", "entity"))
    tag = _choice(rng, tags)
    spots = [m for m in re.finditer(rf"<{tag}>([^<]*)</{tag}>|<{tag}/>", text)]
    spot = spots[rng.randrange(len(spots))]
    if kind == "bad_value":
        bad = {
            "pair_id": ("abc", "1.5", "\u00b2", "", "-1", "1 2"),
            "type_id": ("abc", "1.5", "\u00b2", "", "-1"),
            "sense_preserving": ("maybe", "yess", "1"),
            "s1_scope": ("0, x", "1,,y", "3-4", "2.5"),
            "key_s2": ("0, x", "1.5"),
        }[tag]
        value = _choice(rng, bad)
        new = f"<{tag}>{value}</{tag}>"
        return (
            f"bad_value:{tag}",
            (text[: spot.start()] + new + text[spot.end() :]).encode(),
            "error",
        )
    if kind == "duplicate_child":
        new = spot.group(0) + f"<{tag}>1</{tag}>"
        return (
            "duplicate_child",
            (text[: spot.start()] + new + text[spot.end() :]).encode(),
            "error",
        )
    if kind == "missing_close":
        closes = [m.start() for m in re.finditer(r"</\w+>", text)]
        at = closes[rng.randrange(len(closes))]
        end = text.index(">", at) + 1
        return "missing_close", (text[:at] + text[end:]).encode(), "error"
    entity = '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]>'
    head_end = text.index("?>") + 2
    new = (
        text[:head_end] + entity + text[head_end:].replace(spot.group(0), f"<{tag}>&b;</{tag}>", 1)
    )
    return "undefined_entity", new.encode(), "error"


def _jsonl(rng: Random, variant: Variant) -> tuple[str, bytes, str]:
    records = json.loads(json.dumps(variant.items))
    pair_lines = [i for i, r in enumerate(records) if "text1" in r]
    doc_lines = [i for i, r in enumerate(records) if "document" in r]
    kinds = ["wrong_type", "wrong_type", "duplicate_id", "unknown_key", "header", "deep", "raw"]
    if doc_lines:
        kinds += ["span", "span", "duplicate_document"]
    kind = _choice(rng, kinds)
    index = pair_lines[rng.randrange(len(pair_lines))]
    record = records[index]
    raw_lines: list[str] | None = None
    name = kind
    if kind == "wrong_type":
        key = _choice(rng, sorted(JSONL_FIELDS))
        wrong = [w for w in WRONG[JSONL_FIELDS[key]] if w is not None]  # null: no value
        record[key] = wrong[rng.randrange(len(wrong))]
        name = f"wrong_type:{key}"
    elif kind == "duplicate_id":
        other = pair_lines[rng.randrange(len(pair_lines))]
        if other == index:
            other = pair_lines[0] if index != pair_lines[0] else pair_lines[1]
        record["id"] = records[other]["id"]
    elif kind == "unknown_key":
        record[_choice(rng, ("labl", "txt1", "Label", "folds"))] = "1"
    elif kind == "header":
        header = records[0]
        change = rng.randrange(5)
        if change == 0:
            header["parakit"] = _choice(rng, (2, True, "1", 1.0))
        elif change == 1:
            header["scheme"] = _choice(rng, ({"name": "nope"}, {"name": 5}, [1], {"x": 1}, 7))
        elif change == 2:
            header["name"] = _choice(rng, (5, [], {}, True))
        elif change == 3:
            header["metadata"] = _choice(rng, ([], "x", 5))
        else:
            header["extra"] = 1
        name = f"header:{change}"
    elif kind == "deep":
        record["metadata"] = {"x": _deep()}
    elif kind == "span":
        with_span = [i for i in pair_lines if records[i].get("span1")]
        record = records[with_span[rng.randrange(len(with_span))]]
        span = record[_choice(rng, ("span1", "span2"))]
        how = _choice(rng, ("end_outside", "unknown_doc", "negative", "reversed", "float"))
        if how == "end_outside":
            span["end"] = 10**7
        elif how == "unknown_doc":
            span["doc"] = "no-such-document"
        elif how == "negative":
            span["begin"] = -1
        elif how == "reversed":
            span["begin"], span["end"] = span["end"] + 1, span["begin"]
        else:
            span["begin"] = span["begin"] + 0.5
        name = f"span:{how}"
    elif kind == "duplicate_document":
        doc = records[doc_lines[rng.randrange(len(doc_lines))]]
        records.insert(doc_lines[-1] + 1, json.loads(json.dumps(doc)))
    if kind == "raw":
        raw_lines = [json.dumps(r, ensure_ascii=False) for r in records]
        line = raw_lines[index]
        how = rng.randrange(3)
        if how == 0:  # a key given twice: json would keep the last
            raw_lines[index] = line[:-1] + ', "text1": "other"}'
            name = "raw:repeated_key"
        elif how == 1:
            raw_lines[index] = line[:-1] + ', "metadata": {"score": NaN}}'
            name = "raw:nan"
        else:
            raw_lines[index] = line + "\n" + line[: len(line) // 2]
            name = "raw:half_line"
        content = "\n".join(raw_lines) + "\n"
        return name, content.encode("utf-8", "surrogatepass"), "error"
    return name, b"".join(_dump_items(r, None) + b"\n" for r in records), "error"


def mutate(target: Target, rng: Random) -> Case:
    """One mutated input of ``target``: a structural change of the format (most of the time)
    or a change of raw bytes."""
    variant = target.variants[rng.randrange(len(target.variants))]
    files = dict(variant.files)
    if rng.randrange(3) == 0:
        main = variant.main
        if variant.family == "json-items" and "sv-texts.json.gz" in files and rng.randrange(3) == 0:
            name, content, expect = _texts_file(rng, variant)
            files["sv-texts.json.gz"] = content
            return Case(target.name, name, variant, files, expect)
        name, content, expect = _byte_level(rng, files[main])
        if variant.family in ("csv", "tsv-plain", "tsv-quoted") and name == "truncate":
            # RFC 4180: the last record may end without a line break, so a cut inside the last
            # field of a row cannot be told from a complete file (documented); every record
            # before it must still be exact
            expect = "error_or_cut"
        files[main] = content
        return Case(target.name, f"bytes:{name}", variant, files, expect)
    if variant.family == "json-items":
        name, content, expect = _json_items(rng, variant)
    elif variant.family in ("csv", "tsv-plain", "tsv-quoted"):
        name, content, expect = _delimited(rng, variant)
    elif variant.family == "xml":
        name, content, expect = _xml(rng, variant)
    else:
        name, content, expect = _jsonl(rng, variant)
    files[variant.main] = content
    return Case(target.name, name, variant, files, expect)


def fuzz(
    name: str,
    data: str | Path,
    n: int,
    seed: int = 0,
    workdir: str | Path | None = None,
    target: Target | None = None,
) -> tuple[dict[str, int], list[tuple[Case, Outcome]]]:
    """Run ``n`` mutations of one target with ``random.Random(seed)``.

    Returns:
        counts per outcome kind (``error``, ``correct``, ``other``, ``bad``) and the failures
        (``other`` and ``bad`` cases with their outcomes).
    """
    import random

    target = target or make_target(name, data)
    rng = random.Random(seed)
    counts = {"inputs": 0, "error": 0, "correct": 0, "other": 0, "bad": 0}
    failures = []
    for _ in range(n):
        case = mutate(target, rng)
        outcome = run_case(case, workdir)
        counts["inputs"] += 1
        counts[outcome.kind] += 1
        if outcome.kind in ("other", "bad"):
            failures.append((case, outcome))
    return counts, failures
