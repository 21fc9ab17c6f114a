"""Publish a folder (a corpus release, a model) to the Hugging Face Hub with ``huggingface_hub``.

One function, :func:`push_folder`: create the repository if needed and upload the folder in
one commit. Offline (``HF_HUB_OFFLINE=1``), without a network or without a valid token it fails
with one :class:`~parakit.errors.WriteError` (``E125``) that says why and what to do, never a
traceback. The token is ``huggingface_hub``'s (``HF_TOKEN`` or ``hf auth login``).

Example:
    >>> push_folder("rel", "me/my-corpus", repo_type="dataset")  # doctest: +SKIP
    'https://huggingface.co/datasets/me/my-corpus'
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from parakit.errors import Errors, WriteError, require_extra

#: ``owner/name`` (or ``name``) as the Hub spells repository ids
_REPO_ID = re.compile(r"^(?:[\w.-]+/)?[\w.-]+$")

#: The Hub's licence identifiers (the ``license:`` of a card; the table of
#: https://huggingface.co/docs/hub/repositories-licenses, copied: ``huggingface_hub`` ships none).
#: The Hub refuses any other id, but only when the folder is pushed.
_LICENSE_TABLE = """
apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m bigscience-bloom-rail-1.0
bigcode-openrail-m afl-3.0 artistic-2.0 bsl-1.0 bsd bsd-2-clause bsd-3-clause
bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0 cc-by-2.5 cc-by-3.0 cc-by-4.0 cc-by-sa-3.0
cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0 cc-by-nd-4.0 cc-by-nc-nd-3.0
cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0 cc-by-nc-sa-4.0 cdla-sharing-1.0
cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0 epl-1.0 epl-2.0 etalab-2.0 eupl-1.1
eupl-1.2 agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1 lgpl-3.0 isc h-research intel-research
lppl-1.3c ms-pl apple-ascl apple-amlr mpl-2.0 odc-by odbl openmdw-1.0 openrail++ osl-3.0
postgresql ofl-1.1 ncsa unlicense zlib pddl lgpl-lr deepfloyd-if-license
fair-noncommercial-research-license llama2 llama3 llama3.1 llama3.2 llama3.3 llama4 gemma
unknown other
"""
HUB_LICENSES = frozenset(_LICENSE_TABLE.split())


def check_license(license: str, path: str | Path | None = None) -> str:
    """``license`` if the Hub knows it, else E142 (offline: no push needed to find out).

    Raises:
        WriteError: E142 an id not in :data:`HUB_LICENSES` (with the closest ids).

    Example:
        >>> check_license("cc-by-sa-4.0")
        'cc-by-sa-4.0'
    """
    if license in HUB_LICENSES:
        return license
    import difflib

    close = difflib.get_close_matches(license.lower(), sorted(HUB_LICENSES), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise WriteError(Errors.E142_license_hugging_face.format(license=license, hint=hint), path=path)


def push_folder(
    folder: str | Path,
    repo_id: str,
    *,
    repo_type: str = "model",
    private: bool = False,
    commit_message: str | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    validate_card: bool = True,
) -> str:
    """Upload ``folder`` to the Hub repository ``repo_id`` (created when missing).

    Args:
        folder: the folder to upload (its ``README.md`` becomes the repository's card).
        repo_id: ``owner/name``.
        repo_type: ``model`` or ``dataset``.
        private: create the repository private.
        commit_message: the commit message (default: "Upload with parakit").
        endpoint: another Hub endpoint (a mirror, a test server); default ``HF_ENDPOINT``.
        token: a token; default the one ``huggingface_hub`` finds.
        validate_card: check the card with the Hub's validator first (a dataset card
            whose YAML the Hub rejects is refused before anything is uploaded).

    Returns:
        the repository URL.

    Raises:
        WriteError: E125 offline, unreachable, refused (no token, no rights) or rejected card;
            E126 a repository id that is not ``owner/name``.
    """
    path = Path(folder)
    if not _REPO_ID.match(repo_id):
        raise WriteError(Errors.E126_hub_repository_id.format(repo_id=repo_id), path=path)
    huggingface_hub = require_extra("huggingface_hub", extra="datasets", needed_for="pushing")
    from huggingface_hub import constants, errors

    if constants.is_offline_mode():
        raise WriteError(
            Errors.E125_push_offline_mode.format(repo_id=repo_id, path=path), path=path
        )
    failures: tuple[type[BaseException], ...] = (
        OSError,
        ValueError,
        getattr(errors, "HTTPError", OSError),
    )
    api = huggingface_hub.HfApi(endpoint=endpoint, token=token)
    try:
        card = path / "README.md"
        if validate_card and card.is_file():
            kind: Any = (
                huggingface_hub.DatasetCard if repo_type == "dataset" else huggingface_hub.ModelCard
            )
            kind.load(card).validate(repo_type=repo_type)
        url = api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
        api.upload_folder(
            folder_path=str(path),
            repo_id=repo_id,
            repo_type=repo_type,
            commit_message=commit_message or "Upload with parakit",
        )
    except failures as err:
        raise WriteError(
            Errors.E125_push_hub_repository.format(repo_id=repo_id, reason_err=_reason(err)),
            path=path,
        ) from None
    return str(url)


def _reason(err: BaseException) -> str:
    """One line: what went wrong and what to do about it."""
    status = getattr(getattr(err, "response", None), "status_code", None)
    text = " ".join(str(err).split())[:300] or type(err).__name__
    if status in (401, 403):
        return (
            f"the Hub refused the request (HTTP {status}); log in with `hf auth login` or set "
            f"HF_TOKEN to a token with write access ({text})"
        )
    if status is not None:
        return f"HTTP {status}: {text}"
    if isinstance(err, ValueError):
        return f"the Hub rejected the card: {text}"
    return f"the Hub cannot be reached ({type(err).__name__}: {text}); check the network"


__all__ = ["push_folder"]
