"""Atomic file output: write to a temporary file beside the target, fsync, then rename.

A crash or an error half-way leaves the previous file (or no file) in place, never a
half-written one.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def _umask() -> int:
    """The process umask, read without changing it (``os.umask`` would race other threads)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


@contextlib.contextmanager
def atomic_write(
    path: str | Path, mode: str = "w", encoding: str = "utf-8", newline: str | None = None
) -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that it only appears, complete, when the block succeeds.

    Files ending in ``.gz`` are gzip-compressed. The parent folder is created if needed.

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
        >>> with atomic_write(target) as handle:
        ...     _ = handle.write("done")
        >>> target.read_text()
        'done'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write supports modes 'w' and 'wb', not {mode!r}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    text_mode = mode == "w"
    try:
        if target.suffix == ".gz":
            handle: IO[Any] = (
                gzip.open(tmp_name, "wt", encoding=encoding, newline=newline)  # noqa: SIM115
                if text_mode
                else gzip.open(tmp_name, "wb")  # noqa: SIM115
            )
        else:
            handle = (
                open(tmp_name, "w", encoding=encoding, newline=newline)  # noqa: SIM115
                if text_mode
                else open(tmp_name, "wb")  # noqa: SIM115
            )
        with handle:
            yield handle
        with open(tmp_name, "rb") as written:
            os.fsync(written.fileno())
        os.chmod(tmp_name, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def save_figure(figure: Any, path: str | Path, dpi: int = 120) -> Path:
    """Save a matplotlib figure atomically (format from the suffix) and close it.

    Returns:
        the path written.
    """
    import matplotlib.pyplot as plt

    target = Path(path)
    fmt = target.name.removesuffix(".gz").rsplit(".", 1)[-1]
    try:
        with atomic_write(target, "wb") as handle:
            figure.savefig(handle, format=fmt, dpi=dpi)
    finally:
        plt.close(figure)
    return target
