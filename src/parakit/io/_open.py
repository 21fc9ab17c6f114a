"""Reading helpers shared by the readers: transparent gzip, BOM handling, located errors.

Every error these helpers raise is a :class:`~parakit.errors.DataFormatError`: a missing file
(E103), bytes that do not decode (E104, naming the line), malformed or too deeply nested JSON
(E105), a damaged compressed file (E119).
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from parakit.errors import DataFormatError, Errors


def open_text(path: str | Path, encoding: str = "utf-8-sig") -> IO[str]:
    """Open a text file for reading (``.gz`` transparently); the default encoding drops a BOM.

    Raises:
        DataFormatError: the file does not exist.
    """
    target = Path(path)
    if not target.exists():
        raise DataFormatError(Errors.E103_such_file, path=target)
    if target.is_dir():
        raise DataFormatError(Errors.E103_expected_file_found, path=target)
    try:
        if target.suffix == ".gz":
            return gzip.open(target, "rt", encoding=encoding, newline="")
        return open(target, encoding=encoding, newline="")
    except LookupError:
        raise DataFormatError(
            Errors.E104_unknown_encoding.format(encoding=encoding), path=target
        ) from None
    except OSError as err:
        raise DataFormatError(
            Errors.E103_open_file.format(err_strerror=err.strerror or err), path=target
        ) from None


def _compression_error(path: str | Path, err: BaseException) -> DataFormatError:
    return DataFormatError(
        Errors.E119_decompress_file_really.format(name=type(err).__name__, err=str(err)[:120]),
        path=path,
    )


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes (``.gz`` decompressed), with located errors."""
    target = Path(path)
    if not target.exists():
        raise DataFormatError(Errors.E103_such_file, path=target)
    if target.is_dir():
        raise DataFormatError(Errors.E103_expected_file_found, path=target)
    try:
        raw = target.read_bytes()
    except OSError as err:
        raise DataFormatError(
            Errors.E103_read_file_2.format(err_strerror=err.strerror or err), path=target
        ) from None
    if target.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as err:
            raise _compression_error(target, err) from None
    return raw


def read_text(path: str | Path, encoding: str = "utf-8-sig") -> str:
    """The whole file decoded (``.gz`` transparently); a decoding error names its line."""
    raw = read_bytes(path)
    try:
        return raw.decode(encoding)
    except LookupError:
        raise DataFormatError(
            Errors.E104_unknown_encoding.format(encoding=encoding), path=path
        ) from None
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise DataFormatError(
            Errors.E104_decode_file_byte.format(
                encoding=encoding, err_reason=err.reason, err_start=err.start
            ),
            path=path,
            line=line,
        ) from None


def iter_lines(path: str | Path, encoding: str = "utf-8-sig") -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` without line endings; decoding errors name the line."""
    line_number = 0
    with open_text(path, encoding) as handle:
        try:
            for line_number, line in enumerate(handle, start=1):
                yield line_number, line.rstrip("\r\n")
        except UnicodeDecodeError as err:
            raise DataFormatError(
                Errors.E104_decode_file_pass.format(encoding=encoding, err_reason=err.reason),
                path=path,
                line=line_number + 1,
            ) from None
        except (OSError, EOFError, zlib.error) as err:
            raise _compression_error(path, err) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise ValueError(f"key {key[:100]!r} appears twice in one object")
            seen.add(key)
    return out


def loads_json(text: str) -> Any:
    """``json.loads`` that refuses NaN/Infinity and repeated keys (instead of keeping the last).

    Raises:
        json.JSONDecodeError, ValueError, RecursionError: for the caller to locate.
    """
    return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)


def json_error(
    err: BaseException, path: str | Path, line: int | None, code: str
) -> DataFormatError:
    """A located :class:`DataFormatError` for an error raised by :func:`loads_json`."""
    if isinstance(err, json.JSONDecodeError):
        return DataFormatError(
            f"malformed JSON: {err.msg} (column {err.colno})",
            path=path,
            line=(line or 1) + err.lineno - 1 if line is not None else err.lineno,
            code=code,
        )
    if isinstance(err, RecursionError):
        return DataFormatError("malformed JSON: nested too deeply", path=path, line=line, code=code)
    return DataFormatError(f"malformed JSON: {str(err)[:200]}", path=path, line=line, code=code)


def load_json(path: str | Path, encoding: str = "utf-8-sig", jsonl_hint: str = "") -> Any:
    """Load a JSON document (``.gz`` transparently) with a located error on bad syntax.

    A JSON Lines file (one JSON value per line) is not one document: it is said so (E129,
    followed by ``jsonl_hint``, e.g. how to read it) instead of "Extra data" on line 2."""
    text = read_text(path, encoding)
    try:
        return loads_json(text)
    except (ValueError, RecursionError) as err:
        if _is_json_lines(err, text):
            raise DataFormatError(
                "a JSON Lines file (one JSON value per line), not one JSON document"
                + (f": {jsonl_hint}" if jsonl_hint else ""),
                path=path,
                code="E129",
            ) from None
        raise json_error(err, path, None, "E105") from None


def _is_json_lines(err: BaseException, text: str) -> bool:
    """Whether ``err`` is "Extra data" after a first line that is a JSON value of its own."""
    if not isinstance(err, json.JSONDecodeError) or not err.msg.startswith("Extra data"):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        return len(lines) > 1 and all(loads_json(line) is not None for line in lines[:2])
    except (ValueError, RecursionError):
        return False


def require(
    record: dict[str, Any], key: str, *, path: str | Path, line: int, unit: str = "record"
) -> Any:
    """``record[key]``, or a :class:`DataFormatError` naming the missing field."""
    if key not in record:
        raise DataFormatError(Errors.E106_missing_field, path=path, line=line, field=key, unit=unit)
    return record[key]
