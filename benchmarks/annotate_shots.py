"""Screenshots of every annotation screen in headless Chromium, at 800 px and 1440 px wide.

A small demo store (a Turku candidate-pair project in double annotation whose documents carry
40-character hex ids, a binary project, a document-pair project with a quick pass and
extraction) is served on a free local port; an annotator and an admin log in and every page
is captured to ``OUT/<screen>-<width>.png``. The PNGs are reduced to a 64-colour palette so
that the guide's images stay small (about 20-60 KB each).

Run (about a minute on 2 cores; the ``before`` set was taken from the base commit's
``src``)::

    PYTHONPATH=src nice -n 19 python benchmarks/annotate_shots.py docs/images --tag after
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

WIDTHS = (800, 1440)
HEIGHT = 900
CHROMIUM = "/usr/bin/chromium"

DOC1 = (
    "The city council met on Monday evening.\n\n"
    "It decided to build a new library next to the old railway station.\n\n"
    "Construction is expected to start in the spring of next year, the mayor said."
)
DOC2 = (
    "On Monday night, the municipal council held its meeting.\n\n"
    "A new public library will be built beside the former train station.\n\n"
    "Construction is expected to start in the spring of next year, the mayor said."
)


def _hex(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def build(path: Path) -> tuple[Any, dict[str, int]]:
    """The demo store; returns it and the ids of its projects."""
    from parakit.annotate.store import Store
    from parakit.schema import Document, Pair, PairSet, Span

    store = Store.open(path, cheap_hashing=True)
    store.accounts.add_annotator("admin", "admin-password", role="admin")
    ann1 = store.accounts.add_annotator("ann1", "password-one")
    ann2 = store.accounts.add_annotator("ann2", "password-two")
    # candidate pairs whose documents have hex ids and no title (the Turku release's shape)
    h1, h2 = _hex(DOC1), _hex(DOC2)
    docs = [Document(h1, DOC1), Document(h2, DOC2)]
    sentences1 = [s for s in DOC1.split("\n\n")]
    sentences2 = [s for s in DOC2.split("\n\n")]
    pairs = []
    for n, (s1, s2) in enumerate(zip(sentences1, sentences2, strict=True)):
        b1, b2 = DOC1.index(s1), DOC2.index(s2)
        pairs.append(
            Pair(
                f"p{n + 1}",
                s1,
                s2,
                span1=Span(h1, b1, b1 + len(s1)),
                span2=Span(h2, b2, b2 + len(s2)),
                source="news",
            )
        )
    # a fourth pair in two more hex-id documents, so whichever pair is left open has context
    doc3, doc4 = "He left early. Nobody knew why.", "He went home before the others did."
    h3, h4 = _hex(doc3), _hex(doc4)
    docs += [Document(h3, doc3), Document(h4, doc4)]
    pairs.append(
        Pair(
            "p4",
            "He left early.",
            "He went home before the others did.",
            span1=Span(h3, 0, 14),
            span2=Span(h4, 0, len(doc4)),
            source="news",
        )
    )
    news = store.projects.create_project(
        "news", "turku", settings={"classify_mode": "double", "guidelines": GUIDE}
    )
    store.projects.import_pairs(news, PairSet(pairs, scheme="turku", documents=docs))
    for uid in (ann1, ann2):
        store.projects.add_member(news, uid)
    store.queue.assign(news, mode="double", seed=0)
    # ann1 and ann2 disagree on one pair, agree on another, one with flag s (QA queue)
    for uid, labels in ((ann1, ["4", "3", "4s"]), (ann2, ["4", "2", "4s"])):
        for label in labels:
            work = store.queue.lease_next(news, uid)
            store.queue.save(work.item_id, uid, label=label, revision=0, submit=True)
    binary = store.projects.create_project("binary-demo", "binary")
    store.projects.import_pairs(
        binary,
        PairSet(
            [Pair("b1", "A man is playing a guitar.", "Someone plays the guitar.")],
            scheme="binary",
        ),
    )
    store.projects.add_member(binary, ann1)
    store.queue.assign(binary, seed=0)
    docs_project = store.projects.create_project("documents", "turku")
    store.projects.import_document_pairs(
        docs_project, PairSet([Pair("dp1", DOC1, DOC2, source="news")])
    )
    store.queue.assign_document_pairs(docs_project, [ann1])
    forum = store.projects.create_project("forum", "turku")
    store.projects.import_document_pairs(forum, PairSet([Pair("t1", DOC1, DOC2, source="forum")]))
    store.queue.assign_document_pairs(forum, [ann1], task="screen")
    ids = {"news": news, "binary": binary, "documents": docs_project, "forum": forum}
    return store, ids


GUIDE = """# Guidelines

Label **4** when the statements mean the same in any context; **3** when they do only here.
Mark *subsumption* with `<` or `>` when one statement says more.
"""


def serve(store: Any) -> tuple[str, Any]:
    import uvicorn

    from parakit.annotate.web import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, daemon=True).start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def nice_children(niceness: int = 19) -> None:
    """Put every process under this one at ``niceness``: Chromium raises its own browser and
    GPU processes (to -8 when it may) and renderers come and go, so on a shared box this runs
    after each page."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    todo = list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        with contextlib.suppress(OSError):  # gone already
            os.setpriority(os.PRIO_PROCESS, pid, niceness)


def shrink(path: Path) -> None:
    """Quantise ``path`` to a 64-colour palette in place (text screens lose nothing visible)."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def screens(ids: dict[str, int]) -> list[tuple[str, str, str]]:
    """``(name, who, path)`` of every screen; ``who`` is ``ann1``, ``admin`` or ``-``."""
    news, binary, docs, forum = ids["news"], ids["binary"], ids["documents"], ids["forum"]
    return [
        ("login", "-", "/login"),
        ("projects", "ann1", "/"),
        ("classify", "ann1", f"/p/{news}/classify"),
        ("classify-binary", "ann1", f"/p/{binary}/classify"),
        ("screen", "ann1", f"/p/{forum}/screen"),
        ("extract", "ann1", f"/p/{docs}/extract"),
        ("guidelines", "ann1", f"/p/{news}/guidelines"),
        ("recent", "ann1", f"/p/{news}/recent"),
        ("admin", "admin", "/admin"),
        ("project", "admin", f"/admin/p/{news}"),
        ("project-binary", "admin", f"/admin/p/{binary}"),
        ("consensus", "admin", f"/admin/p/{news}/consensus"),
        ("qa", "admin", f"/admin/p/{news}/qa"),
        ("stats", "admin", f"/admin/p/{news}/stats"),
        ("progress", "admin", f"/admin/p/{news}/progress"),
        ("items", "admin", f"/admin/p/{news}/items"),
        ("docpairs", "admin", f"/admin/p/{docs}/docpairs"),
        ("users", "admin", "/admin/users"),
    ]


PASSWORDS = {"ann1": "password-one", "admin": "admin-password"}


def shoot(out: Path, tag: str, dark: bool = False) -> list[Path]:
    """Every screen at both widths into ``out``; returns the files written."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        store, ids = build(Path(tmp) / "shots.sqlite")
        base, server = serve(store)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            for width in WIDTHS:
                contexts = {}
                for who in ("-", "ann1", "admin"):
                    ctx = browser.new_context(
                        viewport={"width": width, "height": HEIGHT},
                        color_scheme="dark" if dark else "light",
                    )
                    # a loaded machine: the first stats page imports pandas
                    ctx.set_default_timeout(180_000)
                    if who != "-":
                        page = ctx.new_page()
                        page.goto(f"{base}/login")
                        page.fill("#name", who)
                        page.fill("#password", PASSWORDS[who])
                        page.click("#login")
                        page.wait_for_url(f"{base}/")
                        page.close()
                    contexts[who] = ctx
                for name, who, path in screens(ids):
                    page = contexts[who].new_page()
                    response = page.goto(base + path)
                    if response is None or response.status == 404:
                        page.close()  # a screen this version does not have
                        continue
                    page.wait_for_load_state("networkidle")
                    nice_children()
                    file = out / f"{tag}-{name}-{width}.png"
                    page.screenshot(path=str(file), full_page=False)
                    shrink(file)
                    written.append(file)
                    page.close()
                for ctx in contexts.values():
                    ctx.close()
            browser.close()
        server.should_exit = True
        store.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tag", default="after", help="file name prefix (before/after)")
    parser.add_argument("--dark", action="store_true", help="prefers-color-scheme: dark")
    args = parser.parse_args()
    files = shoot(args.out, args.tag, dark=args.dark)
    total = sum(f.stat().st_size for f in files)
    print(
        f"| screens | files | total KB |\n|---|---|---|\n| {args.tag} | {len(files)} | "
        f"{total // 1024} |"
    )


if __name__ == "__main__":
    main()
