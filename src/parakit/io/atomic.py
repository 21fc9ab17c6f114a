"""Atomic file output: write to a temporary file beside the target, fsync, then rename.

A crash or an error half-way leaves the previous file (or no file) in place, never a
half-written one. Several files that belong together (the Turku pair list and its texts) are
written with :func:`atomic_files`: all of them appear, or none does.

A command that writes a folder goes through :func:`replace_folder`: a non-empty folder that is
not an earlier output of the same kind is refused (E141), and an earlier one is replaced whole
(no stale file of the earlier run stays beside the new ones).

Temporary files are named ``.<name>.<pid>.<random>.tmp``. They are removed when a write fails;
one left behind by a killed process is removed by the next write to the same target (only when
the process that made it is gone, so a concurrent write is never disturbed).
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from parakit.errors import Errors, ParakitError, WriteError

#: Age after which a temporary file without a process id (older parakit versions) is an orphan.
ORPHAN_AGE_S = 600


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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but belongs to someone else
        return True
    return True


def remove_orphans(path: str | Path) -> list[Path]:
    """Remove temporary files of earlier, killed writes to ``path``; returns what was removed."""
    target = Path(path)
    prefix = f".{target.name}."
    removed = []
    for name in glob.glob(glob.escape(str(target.parent / prefix)) + "*.tmp"):
        candidate = Path(name)
        middle = candidate.name[len(prefix) : -len(".tmp")]
        pid_text = middle.split(".", 1)[0] if "." in middle else ""
        try:
            if pid_text.isdigit():
                orphan = not _alive(int(pid_text))
            else:
                orphan = time.time() - candidate.stat().st_mtime > ORPHAN_AGE_S
            if orphan:
                candidate.unlink()
                removed.append(candidate)
        except OSError:
            continue
    return removed


def _write_error(err: BaseException, target: Path) -> ParakitError:
    if isinstance(err, UnicodeEncodeError):
        return WriteError(
            Errors.E120_text_encoded_lone.format(
                err_reason=err.reason, err_object=err.object[err.start : err.end]
            ),
            path=target,
        )
    reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
    return WriteError(Errors.E121_write_file.format(reason=reason), path=target)


def _is_ours(err: BaseException, temps: Sequence[str]) -> bool:
    """Whether ``err`` comes from writing our own files (not from the caller's code)."""
    if isinstance(err, ParakitError):
        return False
    if isinstance(err, UnicodeEncodeError):
        return True
    if isinstance(err, OSError):
        return err.filename is None or str(err.filename) in temps
    return False


class _Temp:
    """One temporary file beside its target."""

    def __init__(
        self,
        target: Path,
        mode: str,
        encoding: str,
        newline: str | None,
        private: bool = False,
    ) -> None:
        self.private = private
        if mode not in ("w", "wb"):
            raise ValueError(f"atomic_write supports modes 'w' and 'wb', not {mode!r}")
        self.target = target
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            remove_orphans(target)
            fd, self.name = tempfile.mkstemp(
                prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent
            )
            os.close(fd)
        except OSError as err:
            raise _write_error(err, target) from None
        try:
            text_mode = mode == "w"
            if target.suffix == ".gz":
                self.handle: IO[Any] = (
                    gzip.open(self.name, "wt", encoding=encoding, newline=newline)  # noqa: SIM115
                    if text_mode
                    else gzip.open(self.name, "wb")  # noqa: SIM115
                )
            else:
                self.handle = (
                    open(self.name, "w", encoding=encoding, newline=newline)  # noqa: SIM115
                    if text_mode
                    else open(self.name, "wb")  # noqa: SIM115
                )
        except BaseException:
            self.discard()
            raise

    def finish(self) -> None:
        """Close, fsync and give the usual file mode (not yet renamed)."""
        self.handle.close()
        with open(self.name, "rb") as written:
            os.fsync(written.fileno())
        if not self.private:  # mkstemp makes 0600; give the usual mode
            os.chmod(self.name, 0o666 & ~_umask())

    def discard(self) -> None:
        with contextlib.suppress(Exception):
            self.handle.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.name)


@contextlib.contextmanager
def atomic_write(
    path: str | Path,
    mode: str = "w",
    encoding: str = "utf-8",
    newline: str | None = None,
    private: bool = False,
) -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that it only appears, complete, when the block succeeds.

    Files ending in ``.gz`` are gzip-compressed. The parent folder is created if needed.
    ``private=True`` keeps the file readable by its owner only (mode 0600 from its first
    byte: password hashes, backups); otherwise it gets the usual mode (0666 less the umask).

    Raises:
        WriteError: the file cannot be written (the message names ``path``).

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
        >>> with atomic_write(target) as handle:
        ...     _ = handle.write("done")
        >>> target.read_text()
        'done'
    """
    with atomic_files([path], mode, encoding, newline, private) as handles:
        yield handles[0]


@contextlib.contextmanager
def atomic_files(
    paths: Sequence[str | Path],
    mode: str = "w",
    encoding: str = "utf-8",
    newline: str | None = None,
    private: bool = False,
) -> Iterator[list[IO[Any]]]:
    """Open several files that appear together when the block succeeds, or not at all.

    All are written to temporary files and fsynced before the first rename; if a rename fails,
    the files already renamed are put back as they were.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> with atomic_files([folder / "a.txt", folder / "b.txt"]) as (a, b):
        ...     _ = a.write("A"), b.write("B")
        >>> sorted(p.name for p in folder.iterdir())
        ['a.txt', 'b.txt']
    """
    targets = [Path(p) for p in paths]
    temps: list[_Temp] = []
    try:
        for target in targets:
            temps.append(_Temp(target, mode, encoding, newline, private))
        try:
            yield [t.handle for t in temps]
            for temp in temps:
                temp.finish()
        except BaseException as err:
            if _is_ours(err, [t.name for t in temps]):
                culprit = temps[0].target
                for temp in temps:
                    if getattr(err, "filename", None) == temp.name:
                        culprit = temp.target
                raise _write_error(err, culprit) from err
            raise
        _commit(temps)
    finally:
        for temp in temps:
            temp.discard()


def _commit(temps: list[_Temp]) -> None:
    """Rename every temporary file onto its target; undo them all if one rename fails."""
    done: list[tuple[_Temp, str | None]] = []
    try:
        for temp in temps:
            backup = None
            if len(temps) > 1 and temp.target.exists():
                backup = f"{temp.name[: -len('.tmp')]}.old.tmp"
                os.replace(temp.target, backup)
            done.append((temp, backup))
            os.replace(temp.name, temp.target)
    except OSError as err:
        failed = temp.target
        for temp, backup in reversed(done):
            with contextlib.suppress(OSError):
                if backup is not None:
                    os.replace(backup, temp.target)
                elif Path(temp.target).exists() and not os.path.exists(temp.name):
                    os.unlink(temp.target)
        raise _write_error(err, failed) from None
    for _temp, backup in done:
        if backup is not None:
            with contextlib.suppress(OSError):
                os.unlink(backup)


def check_output_folder(path: str | Path, is_own: Callable[[Path], bool], kind: str) -> None:
    """Refuse a non-empty folder at ``path`` that is not an earlier output of this ``kind``.

    Args:
        path: the output folder (may not exist yet).
        is_own: whether a folder is an earlier output of the command (it holds its marker
            file, e.g. ``parakit_model.json`` or ``parakit_release.json``).
        kind: what the command writes, for the message (``a parakit model folder``).

    Raises:
        WriteError: E141 a non-empty folder of another kind (a release into a model folder
            would replace its model card and leave its files beside the corpus).
    """
    target = Path(path)
    if target.is_dir() and any(target.iterdir()) and not is_own(target):
        raise WriteError(Errors.E141_folder_empty_files.format(kind=kind), path=target)


@contextlib.contextmanager
def replace_folder(path: str | Path, is_own: Callable[[Path], bool], kind: str) -> Iterator[Path]:
    """Write a folder output all-or-nothing: the block fills a temporary folder beside
    ``path``, which then takes the place of ``path`` whole (an earlier output of this ``kind``
    goes, stale files and all); on an error nothing changes.

    Raises:
        WriteError: E141 (:func:`check_output_folder`) before the block runs; E121 the folder
            cannot be written.

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "model"
        >>> for files in (["a", "stale"], ["a"]):
        ...     with replace_folder(out, lambda p: (p / "a").exists(), "a test output") as tmp:
        ...         for name in files:
        ...             _ = (tmp / name).write_text(name)
        >>> sorted(p.name for p in out.iterdir())
        ['a']
    """
    target = Path(path)
    check_output_folder(target, is_own, kind)
    if target.exists() and not target.is_dir():
        raise WriteError(Errors.E121_file_way, path=target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(
            tempfile.mkdtemp(
                prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent
            )
        )
        os.chmod(temp, 0o777 & ~_umask())  # mkdtemp makes 0700; give the usual mode
    except OSError as err:
        raise _write_error(err, target) from None
    old = temp.with_name(temp.name[: -len(".tmp")] + ".old.tmp")
    try:
        yield temp
        try:
            if target.exists():
                os.replace(target, old)
            try:
                os.replace(temp, target)
            except OSError:
                if old.exists():
                    os.replace(old, target)
                raise
        except OSError as err:
            raise _write_error(err, target) from None
    finally:
        for leftover in (temp, old):
            if leftover.exists():
                shutil.rmtree(leftover, ignore_errors=True)


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


def save_npy(path: str | Path, array: Any) -> Path:
    """Save a numpy array as ``.npy`` atomically (a reader never sees a truncated array).

    Returns:
        the path written.
    """
    import numpy as np

    target = Path(path)
    with atomic_write(target, "wb") as handle:
        np.save(handle, array)
    return target


def save_json(path: str | Path, data: Any, **dump_options: Any) -> Path:
    """Save ``data`` as JSON atomically (``json.dump`` with ``dump_options``: ``indent``,
    ``ensure_ascii``...).

    Returns:
        the path written.
    """
    import json

    target = Path(path)
    with atomic_write(target) as handle:
        json.dump(data, handle, **dump_options)
    return target
