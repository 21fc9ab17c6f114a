"""``parakit annotate ...``: the annotation store, the web tool, crowd judgments, agreement.

Heavy imports (SQLAlchemy, FastAPI, crowd-kit) happen inside the commands.
"""

from __future__ import annotations

import errno
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from parakit.annotate.tasks import CLASSIFY, TASKS
from parakit.cli.options import (
    FormatOpt,
    ReaderOptionsOpt,
    SchemeOpt,
    SeedOpt,
    output_option,
    read_pairs,
)

app = typer.Typer(
    add_completion=False,
    help="Annotation web tool, crowd import and aggregation, agreement.",
)

#: the environment variables of the web settings (``parakit.annotate.web.settings.PREFIX``)
ENV_PREFIX = "PARAKIT_ANNOTATE_"
STORE = typer.Argument(
    help="SQLite file (one per project) or a database URL (postgresql://user@host/db)."
)


def _password(password: str | None, name: str) -> str:
    if password:
        return password
    env = os.environ.get("PARAKIT_PASSWORD")
    if env:
        return env
    return typer.prompt(f"password for {name}", hide_input=True, confirmation_prompt=True)


def _names(text: str | None) -> list[str] | None:
    return [n.strip() for n in text.split(",") if n.strip()] if text else None


@app.command()
def init(
    store: Annotated[str, STORE],
    admin: Annotated[str | None, typer.Option(help="create this admin")] = None,
    password: Annotated[
        str | None, typer.Option(help="admin password (or $PARAKIT_PASSWORD, or prompt)")
    ] = None,
) -> None:
    """Create the store or upgrade its schema to the current version (Alembic)."""
    from parakit.annotate.store import Store

    st = Store.open(store)  # the one command that creates a store
    if admin:
        st.accounts.add_annotator(admin, _password(password, admin), role="admin")
    typer.echo(f"store ready: {store}")


@app.command("add-user")
def add_user(
    store: Annotated[str, STORE],
    name: Annotated[str, typer.Argument()],
    role: Annotated[str, typer.Option(help="annotator, adjudicator or admin")] = "annotator",
    password: Annotated[str | None, typer.Option(help="or $PARAKIT_PASSWORD, or prompt")] = None,
    project: Annotated[list[str] | None, typer.Option(help="add to these projects")] = None,
) -> None:
    """Create an annotator (the password is stored as an argon2 hash)."""
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    pids = [st.projects.project_id(name_) for name_ in project or ()]
    st.accounts.add_annotator(name, _password(password, name), role=role, projects=pids)
    typer.echo(f"user {name} ({role}) created")


@app.command()
def deactivate(
    store: Annotated[str, STORE],
    name: Annotated[str, typer.Argument(help="the annotator's user name")],
    reactivate: Annotated[bool, typer.Option(help="activate the account again")] = False,
) -> None:
    """Deactivate an annotator: their sessions end and their open work returns to the pool."""
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    done = st.accounts.set_active(st.accounts.annotator_id(name), reactivate)
    if reactivate:
        typer.echo(f"{name} is active again")
        return
    typer.echo(f"{name} deactivated; {done.returned} open assignment(s) returned to the pool")
    if done.stranded:
        typer.echo(
            f"warning: {done.stranded} of them no remaining member may take (the other slot "
            "of a double item is theirs, or nobody else is a member): add members to the "
            "project (`parakit annotate members STORE PROJECT NAME`)",
            err=True,
        )


@app.command("create-project")
def create_project(
    store: Annotated[str, STORE],
    name: Annotated[str, typer.Argument()],
    candidates: Annotated[
        Path | None, typer.Option(help="candidate pairs (any parakit format)")
    ] = None,
    documents: Annotated[
        Path | None,
        typer.Option(help="document pairs for extraction (text1/text2 = whole documents)"),
    ] = None,
    texts: Annotated[
        Path | None,
        typer.Option(help="the texts file of a Turku data file (default: found beside it)"),
    ] = None,
    scheme: Annotated[
        str | None,
        typer.Option(
            help="turku, binary, japanese, likert, graded (default: the labelled pairs' scheme, "
            "else turku)"
        ),
    ] = None,
    classify_mode: Annotated[
        str, typer.Option(help="single or double annotation of extracted pairs")
    ] = "single",
    format: FormatOpt = None,
    question: Annotated[
        str | None, typer.Option(help="instruction shown above the labels (e.g. a Likert aspect)")
    ] = None,
    guidelines: Annotated[
        Path | None, typer.Option(help="a text file: the guidelines page of the project")
    ] = None,
    descriptions: Annotated[
        Path | None,
        typer.Option(help='a JSON file {"label": "what it means"} shown with the label buttons'),
    ] = None,
    suggestions: Annotated[
        bool, typer.Option(help="suggest passage pairs in the extraction view (s accepts, n skips)")
    ] = False,
) -> None:
    """Create a project from candidate pairs or document pairs (one transaction: a failed
    import leaves nothing behind)."""
    from parakit.annotate.services.projects import pairs_scheme, read_pairs
    from parakit.annotate.store import Store

    if (candidates is None) == (documents is None):
        raise typer.BadParameter("give exactly one of --candidates or --documents")
    source = candidates or documents
    assert source is not None
    pairs = read_pairs(source, format=format, texts=texts)
    settings: dict[str, object] = {"classify_mode": classify_mode}
    if question:
        settings["question"] = question
    if guidelines is not None:
        settings["guidelines"] = guidelines.read_text(encoding="utf-8")
    if descriptions is not None:
        settings["descriptions"] = json.loads(descriptions.read_text(encoding="utf-8"))
    if suggestions:
        settings["suggestions"] = True
    if pairs.lang:  # kept for the export (the store has no other place for it)
        settings["lang"] = pairs.lang
    st = Store.open(store, create=False)
    pid, count = st.projects.create_with_pairs(
        name,
        scheme or pairs_scheme(pairs),
        pairs,
        kind="candidates" if candidates else "documents",
        settings=settings,
    )
    typer.echo(f"project {name} (id {pid}): {count} {'pairs' if candidates else 'document pairs'}")


@app.command("delete-project")
def delete_project(
    store: Annotated[str, STORE],
    project: Annotated[str, typer.Argument()],
    yes: Annotated[bool, typer.Option("--yes", help="do not ask for confirmation")] = False,
) -> None:
    """Delete a project with its items, documents, annotations and queue (users stay)."""
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    pid = st.projects.project_id(project)
    if not yes:
        typer.confirm(f"delete project {project!r} and all its annotations?", abort=True)
    st.projects.delete_project(pid)
    typer.echo(f"project {project} deleted")


@app.command()
def backup(
    store: Annotated[str, STORE],
    output: Annotated[
        Path,
        output_option(
            "Backup file: a .sqlite copy (SQLite's online backup; SQLite stores) or a "
            "portable dump (.jsonl.gz) that any store kind restores."
        ),
    ],
) -> None:
    """Back a store up while it serves (a consistent snapshot, written atomically)."""
    from parakit.annotate.backup import backup as run_backup

    counts = run_backup(store, output)
    typer.echo(f"backed up {_rows(counts)} -> {output}")


@app.command()
def restore(
    backup_file: Annotated[Path, typer.Argument(help="A file made by parakit annotate backup.")],
    store: Annotated[str, STORE],
    key: Annotated[
        str | None,
        typer.Option(
            envvar="PARAKIT_BACKUP_KEY",
            help="The key of the store the backup was made from (parakit annotate backup-key "
            "SOURCE prints it; or $PARAKIT_BACKUP_KEY): the backup's digest is checked with "
            "it before anything is written.",
        ),
    ] = None,
) -> None:
    """Restore a backup into a new, empty store of either kind (SQLite file or PostgreSQL)."""
    from parakit.annotate.backup import restore as run_restore

    counts = run_restore(backup_file, store, key=key)
    typer.echo(f"restored {_rows(counts)} into {store}")


@app.command("backup-key")
def backup_key(store: Annotated[str, STORE]) -> None:
    """Print the key that restore needs for this store's backups (keep it apart from them)."""
    from parakit.annotate.backup import store_key

    typer.echo(store_key(store))


def _rows(counts: dict[str, int]) -> str:
    return (
        f"{sum(counts.values())} rows ("
        + ", ".join(f"{table} {n}" for table, n in counts.items() if n)
        + ")"
    )


@app.command()
def projects(store: Annotated[str, STORE]) -> None:
    """List the projects: id, name, scheme, items, submitted annotations, members."""
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    typer.echo("id\tname\tscheme\titems\tannotations\tmembers")
    for row in st.projects.overview():
        typer.echo(
            f"{row['id']}\t{row['name']}\t{row['scheme']}\t{row['items']}\t"
            f"{row['annotations']}\t{row['members']}"
        )


@app.command()
def members(
    store: Annotated[str, STORE],
    project: Annotated[str, typer.Argument()],
    names: Annotated[list[str] | None, typer.Argument(help="annotators to add (or remove)")] = None,
    remove: Annotated[bool, typer.Option("--remove", help="remove the named members")] = False,
) -> None:
    """Add (or remove) project members; with no names, list them."""
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    pid = st.projects.project_id(project)
    for name in names or []:
        uid = st.accounts.annotator_id(name)
        if remove:
            st.projects.remove_member(pid, uid)
        else:
            st.projects.add_member(pid, uid)
    all_names = st.accounts.annotator_names()
    listed = ", ".join(all_names[uid] for uid in st.projects.members(pid)) or "(none)"
    typer.echo(f"members of {project}: {listed}")


@app.command()
def assign(
    store: Annotated[str, STORE],
    project: Annotated[str, typer.Argument()],
    task: Annotated[
        str, typer.Option(help=", ".join(t.name for t in TASKS.values() if t.assign))
    ] = CLASSIFY,
    mode: Annotated[str, typer.Option(help="single or double (classify)")] = "single",
    annotators: Annotated[
        str | None,
        typer.Option(help="comma-separated; default: the shared pool of the project's members"),
    ] = None,
    batch: Annotated[str, typer.Option()] = "default",
    seed: SeedOpt = 0,
) -> None:
    """Queue a project's unassigned items (or document pairs) for annotation."""
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    made = st.queue.assign_task(
        st.projects.project_id(project),
        task=task,
        mode=mode,
        annotators=_names(annotators),
        batch=batch,
        seed=seed,
    )
    typer.echo(f"{made} assignments made")


@app.command("attach-model")
def attach_model(
    store: Annotated[str, STORE],
    project: Annotated[str, typer.Argument()],
    model_dir: Annotated[
        Path | None,
        typer.Argument(help="a folder from 'parakit identify train' (omit with --detach)"),
    ] = None,
    order: Annotated[
        str,
        typer.Option(
            help="queue: keep the seeded random order (the model only pre-selects); "
            "uncertainty: single-annotation queues serve |P(paraphrase) - 0.5| smallest first"
        ),
    ] = "queue",
    reading: Annotated[
        str | None,
        typer.Option(help="binary reading of the model's scheme for P(paraphrase), e.g. strict"),
    ] = None,
    label_map: Annotated[
        str | None,
        typer.Option(
            "--map",
            help="model label=project label, comma-separated (e.g. 1=4,0=2): how a model of "
            "another scheme's guesses are pre-selected; without it such a model pre-selects "
            "nothing",
        ),
    ] = None,
    detach: Annotated[bool, typer.Option(help="forget the project's model instead")] = False,
) -> None:
    """Attach a trained classifier to a project (model in the loop): every item is scored
    once; single-annotation pages pre-select the model's guess and record whether the
    annotator kept it, and --order uncertainty serves the most uncertain items first.
    Double annotation stays blind: no guess shown, order unchanged. A model of another label
    scheme (a binary model on a Turku project) pre-selects nothing unless --map says how."""
    from parakit.annotate.services.model import ORDERS, scores_for
    from parakit.annotate.store import Store
    from parakit.mine.rerank import as_pairset, load_classifier, paraphrase_proba

    if order not in ORDERS:
        raise typer.BadParameter(f"use one of {', '.join(ORDERS)}", param_hint="--order")
    st = Store.open(store, create=False)
    pid = st.projects.project_id(project)
    if detach:
        st.model.detach(pid)
        typer.echo(f"model detached from {project}")
        return
    if model_dir is None:
        raise typer.BadParameter("name the model folder (or use --detach)", param_hint="MODEL_DIR")
    mapping = None
    if label_map is not None:
        pairs_ = [part.split("=", 1) for part in label_map.split(",") if part.strip()]
        if not pairs_ or any(len(p) != 2 for p in pairs_):
            raise typer.BadParameter("use model=project pairs, e.g. 1=4,0=2", param_hint="--map")
        mapping = {a.strip(): b.strip() for a, b in pairs_}
    classifier = load_classifier(model_dir)
    model_scheme = getattr(classifier, "scheme_", None)
    rows = st.model.items(pid)
    ids, proba, guesses = [], [], []
    for start in range(0, len(rows), 4096):  # bounded memory on large projects
        chunk = rows[start : start + 4096]
        pairs = as_pairset([r[2] for r in chunk], [r[3] for r in chunk], [r[1] for r in chunk])
        ids += [r[0] for r in chunk]
        proba += paraphrase_proba(classifier, pairs, reading=reading).tolist()
        guesses += [str(g) for g in classifier.predict(pairs)]
    info = {
        "name": Path(model_dir).name,
        "type": getattr(classifier, "model_type", type(classifier).__name__),
        "path": str(Path(model_dir).resolve()),
        "reading": reading,
    }
    done = st.model.attach(
        pid,
        scores_for(ids, proba, guesses),
        model=info,
        order=order,
        model_scheme=model_scheme,
        label_map=mapping,
    )
    typer.echo(
        f"{done.scored} items scored, {done.guesses} guesses in the project's scheme, "
        f"{done.reordered} single-annotation assignments re-ordered (order: {order})"
    )
    project_scheme = st.scheme(pid)
    if mapping is None and (model_scheme or {}).get("name") != project_scheme.spec()["name"]:
        what = (model_scheme or {}).get("name", "unknown")
        typer.echo(
            f"the model's labels are {what}, the project's {project_scheme.name}: no guess is "
            "pre-selected (the same label may mean another thing; say how with --map, e.g. "
            "--map 1=4,0=2); P(paraphrase) still orders the queue"
        )


@app.command("rewrite-check")
def rewrite_check(
    store: Annotated[str, STORE],
    project: Annotated[str, typer.Argument()],
    annotations: Annotated[
        int, typer.Option(min=1, help="judgments per item, by different people")
    ] = 2,
    seed: SeedOpt = 0,
) -> None:
    """T10: queue the blind check of the rewrites, mixed 50/50 with labelled pairs and
    shuffled, for members who never labelled the item; `annotate stats` reports it."""
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    pid = st.projects.project_id(project)
    made = st.review.make_rewrite_check(pid, seed=seed, annotations=annotations)
    typer.echo(f"{made} rewrite-check assignments made")
    short = st.review.rewrite_check_shortfall(pid, annotations)
    if short:
        typer.echo(
            f"warning: {short} items of the check have fewer than {annotations} members who "
            "never labelled them; add members ('parakit annotate members STORE PROJECT NAME')",
            err=True,
        )


def _check_port_free(host: str, port: int) -> None:
    """Refuse a port another program listens on before printing a URL that would not work."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise typer.BadParameter(f"{host}: {err.strerror}", param_hint="--host") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # the same option uvicorn binds with: a port left in TIME_WAIT is free, a listener not
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as err:
            reason = "is already in use" if err.errno == errno.EADDRINUSE else err.strerror
            raise typer.BadParameter(
                f"port {port} on {host} {reason}; stop the other server or choose another "
                "port with --port",
                param_hint="--port",
            ) from None


def _setting(field: str, help: str, *flags: str, **kw: Any) -> Any:
    """A ``serve`` option for the setting ``field`` (see
    :class:`~parakit.annotate.web.settings.WebSettings`, where the defaults live): an option
    not given leaves the setting to ``$PARAKIT_ANNOTATE_<FIELD>``, else the default."""
    return typer.Option(*flags, help=f"{help} [${ENV_PREFIX}{field.upper()}]", **kw)


@app.command()
def serve(
    store: Annotated[str, STORE],
    host: Annotated[str, typer.Option()] = "127.0.0.1",
    port: Annotated[int, typer.Option()] = 8000,
    session_hours: Annotated[
        float | None, _setting("session_ttl", "hours a login session lasts (default 8)")
    ] = None,
    lease_minutes: Annotated[
        float | None,
        _setting("lease", "minutes an item stays reserved to whoever opened it (default 30)"),
    ] = None,
    secure_cookies: Annotated[
        bool | None, _setting("secure_cookies", "HTTPS-only cookie (behind TLS)")
    ] = None,
    overlap_words: Annotated[
        int | None, _setting("overlap_words", "mark verbatim copies of this many words (default 6)")
    ] = None,
    login_attempts: Annotated[
        int | None,
        _setting(
            "login_attempts",
            "wrong passwords per name+address in the login window (default 5; 0 = off)",
        ),
    ] = None,
    login_window_minutes: Annotated[
        float | None, _setting("login_window", "minutes a wrong password counts (default 5)")
    ] = None,
    login_delay_seconds: Annotated[
        float | None,
        _setting(
            "login_delay",
            "seconds of the first wait after the limit, doubled per failure (default 30)",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        _setting(
            "forwarded_allow_ips",
            "proxies (comma-separated addresses/networks) whose X-Forwarded-For is trusted; "
            "default none: the header is ignored",
        ),
    ] = None,
    max_body_mb: Annotated[
        float | None,
        _setting(
            "max_body_mb",
            "largest request/upload accepted, HTTP 413 (default 20)",
            "--max-body-mb",
            "--max-upload-mb",
        ),
    ] = None,
    max_expanded_mb: Annotated[
        float | None,
        _setting("max_expanded_mb", "largest size a gzipped upload may expand to (default 100)"),
    ] = None,
    hash_concurrency: Annotated[
        int | None,
        _setting(
            "hash_concurrency",
            "password checks at once, argon2id, about 64 MiB each (default 2)",
            min=1,
        ),
    ] = None,
    max_waiting_logins: Annotated[
        int | None,
        _setting(
            "max_waiting_logins",
            "logins that may wait for a hashing slot; more get HTTP 503 (default 64)",
        ),
    ] = None,
    logins_per_address: Annotated[
        int | None,
        _setting(
            "logins_per_address",
            "logins at once from an address with recent failures; more get HTTP 429 (default 2)",
        ),
    ] = None,
    login_wait_seconds: Annotated[
        float | None,
        _setting(
            "login_wait", "seconds a login may wait for a hashing slot, then HTTP 503 (default 5)"
        ),
    ] = None,
    workers: Annotated[
        int | None,
        _setting(
            "workers",
            "server processes (uvicorn workers; PostgreSQL stores only: a SQLite store is "
            "served by one); sessions and the login throttle live in the store, so they "
            "share them (default 1)",
            min=1,
        ),
    ] = None,
    db_connections: Annotated[
        int | None,
        _setting(
            "db_connections",
            "PostgreSQL connections all workers together may open, shared out evenly; keep "
            "it under the server's max_connections, 100 by default (default 60)",
            min=2,
        ),
    ] = None,
) -> None:
    """Run the annotation web app (prints its URL). Each setting comes from its option, else
    its environment variable, else its default; every worker reads the same settings."""
    import uvicorn

    from parakit.annotate.db import check_workers
    from parakit.annotate.store import Store
    from parakit.annotate.web.settings import WebSettings

    given = {
        "store": store,
        "session_ttl": None if session_hours is None else timedelta(hours=session_hours),
        "lease": None if lease_minutes is None else timedelta(minutes=lease_minutes),
        "secure_cookies": secure_cookies,
        "overlap_words": overlap_words,
        "login_attempts": login_attempts,
        "login_window": None
        if login_window_minutes is None
        else timedelta(minutes=login_window_minutes),
        "login_delay": None
        if login_delay_seconds is None
        else timedelta(seconds=login_delay_seconds),
        "forwarded_allow_ips": forwarded_allow_ips,
        "max_body_mb": max_body_mb,
        "max_expanded_mb": max_expanded_mb,
        "hash_concurrency": hash_concurrency,
        "max_waiting_logins": max_waiting_logins,
        "logins_per_address": logins_per_address,
        "login_wait": None if login_wait_seconds is None else timedelta(seconds=login_wait_seconds),
        "workers": workers,
        "db_connections": db_connections,
    }
    settings = WebSettings(**{k: v for k, v in given.items() if v is not None})
    check_workers(store, settings.workers)  # SQLite: one process
    # upgrade the schema once, before any worker starts; a mistyped path is refused
    Store.open(store, create=False).close()
    _check_port_free(host, port)
    # every worker builds the same app from these settings (workers are separate processes)
    os.environ.update(settings.environment())
    shown = f"[{host}]" if ":" in host else host
    many = f" with {settings.workers} workers" if settings.workers > 1 else ""
    typer.echo(f"parakit annotate: serving {store}{many} at http://{shown}:{port}/ (Ctrl+C stops)")
    # proxy headers are handled by the app (--forwarded-allow-ips), never by uvicorn's default
    uvicorn.run(
        "parakit.annotate.web.app:create_app",
        factory=True,
        workers=settings.workers,
        host=host,
        port=port,
        log_level="warning",
        proxy_headers=False,
    )


@app.command()
def export(
    store: Annotated[str, STORE],
    project: Annotated[str, typer.Argument()],
    output: Annotated[
        Path,
        output_option(
            ".json = Turku layout (+ texts file), .jsonl = canonical JSONL; other formats "
            "with --to."
        ),
    ],
    drop: Annotated[str, typer.Option(help="base labels to leave out, e.g. 1,x")] = "",
    judgments: Annotated[bool, typer.Option(help="include individual judgments")] = False,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            "-t",
            help="Output format: label-studio, doccano, prodigy... (from the extension when "
            "omitted; see 'parakit formats').",
        ),
    ] = None,
) -> None:
    """Export the project's labelled pairs with their contexts (and, with --judgments, each
    annotator's judgment: a Label Studio annotation, a doccano user file, a Prodigy line)."""
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    pid = st.projects.project_id(project)
    dropped = tuple(_names(drop) or ())
    path = st.exports.export(pid, output, format=to, drop_labels=dropped, judgments=judgments)
    left = st.exports.left_out(pid, dropped)
    notes = [
        f"{left['disagreements']} disagreements unresolved (resolve them on the consensus "
        "page, /admin/p/ID/consensus, then export again)"
        if left["disagreements"]
        else "",
        f"{left['unlabelled']} pairs not yet labelled" if left["unlabelled"] else "",
        f"{left['dropped']} pairs with labels {drop} dropped" if left["dropped"] else "",
    ]
    said = "; ".join(note for note in notes if note)
    typer.echo(
        f"wrote {left['exported']} pairs to {path}" + (f"; left out: {said}" if said else "")
    )


@app.command()
def stats(store: Annotated[str, STORE], project: Annotated[str, typer.Argument()]) -> None:
    """Extraction statistics (Table 1), agreement on double-annotated items (T9) and the
    rewrite check (T10)."""
    from parakit.annotate.extraction import extraction_stats
    from parakit.annotate.services.review import why_undefined
    from parakit.annotate.store import Store

    st = Store.open(store, create=False)
    pid = st.projects.project_id(project)
    for row in extraction_stats(st.extraction.extraction_rows(pid)):
        typer.echo(json.dumps(row))
    for key, value in st.review.agreement(pid).items():
        reason = why_undefined(key, value)  # nan: say what is undefined and why
        typer.echo(f"{key}\t{value:.4f}" + (f"\t{reason}" if reason else ""))
    check = st.review.rewrite_check_report(pid)
    for key, value in check.items():
        reason = why_undefined(key, value, check)
        typer.echo(f"rewrite_check_{key}\t{value:.4f}" + (f"\t{reason}" if reason else ""))
    if st.model.info(pid):
        for key, value in st.model.summary(pid).items():
            typer.echo(f"model_guess_{key}\t{value:.4f}")


@app.command()
def crowd(
    judgments: Annotated[
        Path, typer.Argument(help="CSV/TSV/JSONL: worker, pair, label[, time, gold, gold_label]")
    ],
    output: Annotated[Path | None, output_option("Write a pair,label CSV here.")] = None,
    method: Annotated[str, typer.Option(help="threshold, majority or dawid-skene")] = "threshold",
    n_judgments: Annotated[int, typer.Option()] = 6,
    threshold: Annotated[int, typer.Option()] = 3,
    positive: Annotated[str, typer.Option()] = "1",
    negative: Annotated[str, typer.Option()] = "0",
    qc: Annotated[bool, typer.Option(help="drop workers failing the gold/kappa checks")] = True,
    pairs: Annotated[
        Path | None,
        typer.Option(
            help="the candidate pairs (any parakit format): write them labelled, with judgments"
        ),
    ] = None,
    corpus_out: Annotated[
        Path | None, typer.Option("--corpus-out", help="where to write the labelled pairs (.jsonl)")
    ] = None,
    min_gold_accuracy: Annotated[float, typer.Option()] = 0.85,
    min_kappa: Annotated[float, typer.Option()] = 0.2,
    min_judgments: Annotated[
        int,
        typer.Option(
            help="after QC, drop pairs left with fewer judgments than this (threshold rule)"
        ),
    ] = 3,
) -> None:
    """Aggregate crowd judgments (M4) after worker quality control; with --qc the vote rule
    is applied to the judgments each pair keeps (more than half positive = paraphrase)."""
    from parakit.annotate import crowd as crowd_mod
    from parakit.io.atomic import atomic_write

    if (pairs is None) != (corpus_out is None):
        raise typer.BadParameter(
            "--pairs and --corpus-out go together: the pairs to label and where to write them",
            param_hint="--corpus-out" if corpus_out is None else "--pairs",
        )
    frame = crowd_mod.read_judgments(judgments)
    if qc:
        frame, quality = crowd_mod.filter_workers(frame, min_gold_accuracy, min_kappa)
        typer.echo(f"workers kept: {int(quality['kept'].sum())} of {len(quality)}")
    # after QC pairs may keep fewer judgments: the vote rule then scales (MultiPIT recipe)
    labels = crowd_mod.aggregate(
        frame,
        method,
        n_judgments=n_judgments,
        threshold=threshold,
        positive=positive,
        negative=negative,
        require_n=not qc,
        min_judgments=min_judgments,
    )
    typer.echo(f"pairs labelled: {len(labels)}; {labels.value_counts().to_dict()}")
    if pairs is not None and corpus_out is not None:
        from parakit import io

        labelled = crowd_mod.attach(io.read(pairs), frame, labels, drop_unlabelled=True)
        io.write(labelled, corpus_out)
        typer.echo(f"wrote {len(labelled)} labelled pairs to {corpus_out}")
    if output:
        with atomic_write(output) as handle:
            labels.rename_axis("pair").to_csv(handle)
        typer.echo(f"wrote {output}")


@app.command()
def agreement(
    corpus: Annotated[
        Path,
        typer.Argument(
            help="a corpus with judgments (JSONL; a Label Studio, doccano or Prodigy "
            "export), or a CSV/TSV table item, annotator, label"
        ),
    ],
    scheme: Annotated[str, typer.Option()] = "turku",
    ordinal: Annotated[bool, typer.Option(help="also ordinal Krippendorff's alpha")] = False,
    fmt: FormatOpt = None,
    option: ReaderOptionsOpt = None,
) -> None:
    """Agreement on full and reduced labels (pairwise and Fleiss' kappa, alpha, accuracy and
    kappa vs the corpus label)."""
    import pandas as pd

    from parakit.annotate.agreement import agreement_report, judgments_frame, undefined_reasons
    from parakit.errors import (
        AnnotationDataError,
        DataFormatError,
        Errors,
        LabelError,
        with_location,
    )
    from parakit.labels import get_scheme

    consensus = None
    if corpus.suffix in (".csv", ".tsv") and fmt is None:
        try:
            table = pd.read_csv(corpus, sep="," if corpus.suffix == ".csv" else "\t", dtype=str)
        except pd.errors.EmptyDataError:
            raise DataFormatError(Errors.E625_file_holds_judgments, path=corpus) from None
        try:
            frame = judgments_frame(table)
        except AnnotationDataError as err:  # a missing column, a judgment given twice
            raise with_location(err, path=corpus, line=None, field=None) from None
        normalize = get_scheme(scheme).normalize
        for number, label in enumerate(table["label"], start=2):
            try:
                if not pd.isna(label):
                    normalize(label)
            except LabelError as err:
                raise with_location(err, path=corpus, line=number, field="label") from None
    else:
        pairs = read_pairs(corpus, fmt, options=option, status=False)
        frame = judgments_frame([(p.id, j.annotator, j.label) for p in pairs for j in p.judgments])
        consensus = {p.id: p.label for p in pairs if p.label is not None}
    reasons = undefined_reasons(frame, scheme)
    for key, value in agreement_report(frame, scheme, consensus=consensus, ordinal=ordinal).items():
        reason = reasons.get(key.split("_", 1)[0], "") if value != value else ""  # nan
        typer.echo(f"{key}\t{value:.4f}" + (f"\t{reason}" if reason else ""))


@app.command()
def clusters(
    corpus: Annotated[Path, typer.Argument(help="Labelled corpus (any readable format).")],
    output: Annotated[Path, output_option("JSON of the multi-reference sets.")],
    min_references: Annotated[int, typer.Option()] = 8,
    transitive: Annotated[bool, typer.Option()] = True,
    reading: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Multi-reference sets (sources with >= k paraphrases) from a labelled corpus (M5)."""
    from parakit import io
    from parakit.annotate.clusters import multi_reference_sets
    from parakit.io.atomic import save_json

    refs = multi_reference_sets(io.read(corpus), min_references, reading, transitive)
    save_json(output, refs, ensure_ascii=False, indent=1)
    typer.echo(f"{len(refs)} sources with >= {min_references} references -> {output}")


@app.command("labeling-config")
def labeling_config(
    output: Annotated[Path | None, output_option("Write the XML here (default: stdout).")] = None,
    scheme: SchemeOpt = None,
    comment: Annotated[bool, typer.Option(help="a comment box under the labels")] = True,
) -> None:
    """The Label Studio labeling config of a pair task (both texts, one choice of the scheme's
    labels), named as 'annotate export --to label-studio' writes the tasks."""
    from parakit.io.atomic import atomic_write
    from parakit.io.labelstudio import labeling_config as make_config

    xml = make_config(scheme or "turku", comment=comment)
    if output is None:
        typer.echo(xml, nl=False)
        return
    with atomic_write(output) as handle:
        handle.write(xml)
    typer.echo(f"wrote {output}", err=True)
