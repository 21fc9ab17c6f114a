"""Fuzz every reader with N mutations of the shared corpora and print the contract table.

Each input is a sample of a real file (see ``tests/fuzz/harness.py``) damaged one way; the
contract is: a ParakitError, or data identical to the reference parse of the unmutated records
(for a random byte change: well-formed data). Counts per reader: inputs, clean ParakitErrors,
correct parses, other exceptions, silently accepted bad data.

Usage:
    python benchmarks/fuzz_readers.py [--n 2000] [--seed 0] [--data ../shared/data]
        [--only turku,mrpc] [--show 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))
from harness import TARGETS, TITLES, fuzz, make_target

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="mutations per reader")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("PARAKIT_DATA", DEFAULT_DATA))
    )
    parser.add_argument("--only", default=",".join(TARGETS), help="comma-separated readers")
    parser.add_argument("--show", type=int, default=5, help="failures to print per reader")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"shared data not found at {args.data}", file=sys.stderr)
        return 2
    print(
        f"# fuzz_readers: n={args.n} per reader, seed={args.seed}, python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print()
    print(
        "| reader | inputs | clean ParakitError | correct parse | other exception | "
        "silently accepted bad data | s |"
    )
    print("|---|---|---|---|---|---|---|")
    totals: Counter[str] = Counter()
    failures_all = []
    with tempfile.TemporaryDirectory(prefix="parakit-fuzz-") as workdir:
        for name in args.only.split(","):
            start = time.perf_counter()
            counts, failures = fuzz(
                name, args.data, args.n, args.seed, workdir, make_target(name, args.data)
            )
            seconds = time.perf_counter() - start
            totals.update(counts)
            failures_all.append((name, failures))
            print(
                f"| {TITLES[name]} | {counts['inputs']:,} | {counts['error']:,} | "
                f"{counts['correct']:,} | {counts['other']:,} | {counts['bad']:,} | "
                f"{seconds:.0f} |",
                flush=True,
            )
    print(
        f"| **all** | {totals['inputs']:,} | {totals['error']:,} | {totals['correct']:,} | "
        f"{totals['other']:,} | {totals['bad']:,} | |"
    )
    for name, failures in failures_all:
        kinds = Counter(case.mutation for case, _ in failures)
        if failures:
            print(f"\n{name}: {dict(kinds)}")
        for case, outcome in failures[: args.show]:
            print(f"  {outcome.kind} {case.mutation} [{case.variant.main}]: {outcome.detail}")
    return 0 if totals["other"] == 0 and totals["bad"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
