"""Reading helpers shared by the readers: transparent gzip, BOM handling, located errors."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from parakit.errors import DataFormatError


def open_text(path: str | Path, encoding: str = "utf-8-sig") -> IO[str]:
    """Open a text file for reading (``.gz`` transparently); the default encoding drops a BOM.

    Raises:
        DataFormatError: the file does not exist.
    """
    target = Path(path)
    if not target.exists():
        raise DataFormatError("no such file", path=target, code="E103")
    if target.is_dir():
        raise DataFormatError("expected a file, found a folder", path=target, code="E103")
    if target.suffix == ".gz":
        return gzip.open(target, "rt", encoding=encoding, newline="")
    return open(target, encoding=encoding, newline="")


def iter_lines(path: str | Path, encoding: str = "utf-8-sig") -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without line endings; decoding errors name the line."""
    line_number = 0
    with open_text(path, encoding) as handle:
        try:
            for line_number, line in enumerate(handle, start=1):
                yield line_number, line.rstrip("\r\n")
        except UnicodeDecodeError as err:
            raise DataFormatError(
                f"cannot decode the file as {encoding}: {err.reason}; pass encoding=... "
                "(CLI: -o encoding=NAME) with the file's real encoding",
                path=path,
                line=line_number + 1,
                code="E104",
            ) from None


def load_json(path: str | Path, encoding: str = "utf-8-sig") -> Any:
    """Load a JSON document (``.gz`` transparently) with a located error on bad syntax."""
    with open_text(path, encoding) as handle:
        try:
            return json.load(handle)
        except json.JSONDecodeError as err:
            raise DataFormatError(
                f"invalid JSON: {err.msg} (column {err.colno})",
                path=path,
                line=err.lineno,
                code="E105",
            ) from None
        except UnicodeDecodeError as err:
            raise DataFormatError(
                f"cannot decode the file as {encoding}: {err.reason}", path=path, code="E104"
            ) from None


def require(
    record: dict[str, Any], key: str, *, path: str | Path, line: int, unit: str = "record"
) -> Any:
    """``record[key]``, or a :class:`DataFormatError` naming the missing field."""
    if key not in record:
        raise DataFormatError(
            "missing field", path=path, line=line, field=key, code="E106", unit=unit
        )
    return record[key]
