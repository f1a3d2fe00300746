"""The long fuzz run of the compiler: adversarial mutants of the examples, counted.

Run from the repository root:

    python3 benchmarks/fuzz_compiler.py --count 10000     # the issue-14 acceptance run
    python3 benchmarks/fuzz_compiler.py --quick           # a few dozen, as tests/ runs it

Each mutant (tests/spec_mutations.py: deep nesting, huge literals, adversarial renamings, odd
characters and line ends, escaping `init from` paths, token edits) goes through `check_source`;
a clean one is also generated, imported and asked for its tool schemas.  The report counts
runs over 2 s (each timed once more, since a busy machine makes runs slow too), hangs (no answer within the limit), internal errors (E9001), escaped exceptions
and broken modules, per mutation, and lists the first failures with their seeds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from spec_mutations import mutant, run_one  # noqa: E402

SLOW_SECONDS = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", default="fuzz-run")
    parser.add_argument("--limit", type=float, default=30.0, help="seconds before a hang")
    parser.add_argument("--quick", action="store_true", help="30 mutants")
    args = parser.parse_args()
    count = 30 if args.quick else args.count
    per_mutation: Counter[str] = Counter()
    slow: Counter[str] = Counter()
    slow_texts: list[tuple[str, str]] = []
    failures: list[tuple[str, str, str, str]] = []
    kinds: Counter[str] = Counter()
    clean = 0
    times: list[float] = []
    started = time.perf_counter()
    for index in range(count):
        seed = f"{args.seed}:{index}"
        example, mutations, text = mutant(random.Random(seed))
        outcome = run_one(text, limit=args.limit)
        times.append(outcome.seconds)
        for name in mutations.split("+"):
            per_mutation[name] += 1
        if outcome.seconds > SLOW_SECONDS:
            slow[mutations] += 1
            slow_texts.append((seed, text))
        if not outcome.codes:
            clean += 1
        if outcome.failure:
            kind = "hang" if outcome.timed_out else outcome.failure.split(":", 1)[0].split()[0]
            kinds[kind] += 1
            failures.append((seed, example, mutations, outcome.failure))
    total = time.perf_counter() - started
    # a run over the limit on a busy machine may be the machine: each is timed once more
    still_slow = [
        (seed, seconds)
        for seed, text in slow_texts
        if (seconds := run_one(text, limit=args.limit).seconds) > SLOW_SECONDS
    ]
    print(f"compiler fuzz: {count} mutants in {total:.0f} s, seed {args.seed!r}")
    print(f"  clean (no diagnostic):      {clean}")
    print(f"  over {SLOW_SECONDS:.0f} s:                  {sum(slow.values())}")
    print(f"  over {SLOW_SECONDS:.0f} s when run again:   {len(still_slow)}")
    print(f"  hangs (> {args.limit:.0f} s):            {kinds['hang']}")
    print(f"  internal errors (E9001):    {kinds['E9001']}")
    print(f"  escaped exceptions:         {kinds['escaped']}")
    print(f"  broken generated modules:   {kinds['generated']}")
    print(
        f"  time per mutant: median {statistics.median(times) * 1000:.0f} ms, "
        f"max {max(times) * 1000:.0f} ms"
    )
    print("  mutations applied: " + ", ".join(f"{k} {v}" for k, v in sorted(per_mutation.items())))
    for mutations, number in slow.most_common(5):
        print(f"  slow: {number} x {mutations}")
    for seed, seconds in still_slow[:10]:
        print(f"  SLOW seed {seed!r}: {seconds:.1f} s")
    for seed, example, mutations, failure in failures[:20]:
        print(f"  FAIL seed {seed!r} ({example}, {mutations}): {failure[:300]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
