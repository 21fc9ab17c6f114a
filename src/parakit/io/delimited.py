"""A strict CSV/TSV tokenizer: every row with the line it starts on, stray quotes and a file
cut inside its last record reported instead of shifting or truncating fields.

The standard :mod:`csv` module is lenient: a quote in the middle of an unquoted field is kept as
a character, a quote that never closes swallows the rest of the file, and a quoted field followed
by text is glued together. Here each field is either quoted (``"..."`` with ``""`` for a quote)
or plain (no quote inside), and must be followed by the delimiter or a line break.

Example:
    >>> tokenize('a,"b, c"' + chr(10) + '1,2' + chr(10), ",", path="x.csv")
    ([(1, ['a', 'b, c']), (2, ['1', '2'])], True)
"""

from __future__ import annotations

import re
from pathlib import Path

from parakit.errors import DataFormatError, Errors
from parakit.io.validate import quote

_BREAK = re.compile(r"\r\n|\r|\n")


def tokenize(
    text: str, delimiter: str, *, path: str | Path | None, quoting: bool = True
) -> tuple[list[tuple[int, list[str]]], bool]:
    """Split ``text`` into rows of fields.

    Args:
        text: the decoded file.
        delimiter: one character.
        path: for error messages.
        quoting: ``True``: RFC 4180 quoting (``"`` opens a quoted field); ``False``: quotes are
            ordinary characters and a row is one line (MRPC, TMUP).

    Returns:
        ``[(line, fields), ...]`` for every row (blank lines included, as ``['']``) and whether
        the last row ends with a line break.

    Raises:
        DataFormatError: E118 for a stray or unclosed quote, naming the line.
    """
    rows: list[tuple[int, list[str]]] = []
    if not text:
        return rows, True
    if not quoting:
        lines = _BREAK.split(text)
        terminated = lines[-1] == ""
        if terminated:
            lines.pop()
        return [(number, line.split(delimiter)) for number, line in enumerate(lines, 1)], terminated
    d = re.escape(delimiter)
    field = re.compile(rf'"((?:[^"]|"")*)"|([^{d}"\r\n]*)')
    n = len(text)
    pos = 0
    line = 1
    row: list[str] = []
    row_line = 1
    while True:
        match = field.match(text, pos)
        assert match is not None  # the second branch matches the empty string
        quoted = match.group(1)
        value = quoted.replace('""', '"') if quoted is not None else match.group(2)
        end = match.end()
        if quoted is not None:
            line += quoted.count("\n")
        if end >= n:
            row.append(value)
            rows.append((row_line, row))
            return rows, False
        char = text[end]
        if char == delimiter:
            row.append(value)
            pos = end + 1
            continue
        if char in "\r\n":
            row.append(value)
            rows.append((row_line, row))
            pos = end + (2 if text.startswith("\r\n", end) else 1)
            line += 1
            row, row_line = [], line
            if pos >= n:
                return rows, True
            continue
        # a quote inside a plain field, an unclosed quote, or text after a closing quote
        here = line
        start = text.rfind("\n", 0, end) + 1
        excerpt = text[start : end + 40].split("\n")[0]
        if quoted is not None:
            problem = "text follows a closing quote"
        elif value == "" and (end == pos):
            problem = "a quoted field is never closed"
        else:
            problem = "a stray quote inside an unquoted field"
        raise DataFormatError(
            Errors.E118_malformed_column_near.format(
                tsv_if_delimiter_chr_9_else="TSV" if delimiter == chr(9) else "CSV",
                problem=problem,
                end_start_1=end - start + 1,
                quote_excerpt_80=quote(excerpt, 80),
            ),
            path=path,
            line=here,
        )


def check_last_record(
    rows: list[tuple[int, list[str]]],
    terminated: bool,
    n_fields: int,
    *,
    path: str | Path | None,
) -> None:
    """Refuse a file cut inside its last record, told by its structure (RFC 4180 lets the last
    record end without a line break, so the missing break alone proves nothing).

    A last row without a line break is cut when it has fewer fields than the header; a quote
    left open is refused by :func:`tokenize`. A cut inside (or just before) the last field of
    a row cannot be told from a complete file: TMUP's last row ends on an empty field.

    Raises:
        DataFormatError: E117 naming the line of the cut record.
    """
    if terminated or not rows:
        return
    line, fields = rows[-1]
    if fields == [""]:
        return
    if len(fields) >= n_fields:
        return
    raise DataFormatError(
        Errors.E117_last_record_fields.format(n_fields=len(fields), n_fields_2=n_fields),
        path=path,
        line=line,
    )
