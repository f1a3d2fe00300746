"""How fast is `envdsl check`? In-process per spec, a synthesized 20-tool spec, and cold CLI start.

Run from the repository root:

    python3 benchmarks/bench_check.py            # default: 20 runs per spec, 5 cold starts
    python3 benchmarks/bench_check.py --runs 50 --cold 9

Targets: < 20 ms in-process for a 20-tool spec, < 300 ms for a cold `envdsl check`.
It also reports whether `envdsl check` imported the code generator's or the LLM client's
dependencies (black, jinja2, openai), which it must not: they dominate start-up time; and
lark, which it needs only to build the parse tables (then cached) or a formatter's tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from envdsl.pipeline import CompileResult, check_source  # noqa: E402
from envdsl.tasks.task_files import is_task_file  # noqa: E402
from envdsl.util.source import SourceFile  # noqa: E402

IN_PROCESS_TARGET_MS = 20.0
COLD_TARGET_MS = 300.0
STATIC_RATIO_GOAL = 1.3  # static check time / bare lark parse time (issue 13)
COLD_RATIO_GOAL = 2.0  # cold `envdsl check --no-verify` / `python -c "import lark"`
HEAVY_MODULES = ("black", "jinja2", "openai", "lark")


# ---- a synthesized spec ----------------------------------------------------------------------

_HEADER = '''import std.time

env Synthetic {
  """A generated environment with N tools, for timing the checker."""

  enum Status { active, suspended, closed }
  enum Priority { low, normal, high }

  record Address { street: str, city: str, zip: str }

  entity Account {
    key account_id: str
    name: str
    email: str unique
    status: Status = Status.active
    address: Address?
    balance: int = 0
    tags: list[str] = []
    invariant "balance is never negative": balance >= 0
  }

  entity Item {
    key item_id: str = auto("I")
    owner: ref Account on delete cascade
    title: str
    priority: Priority = Priority.normal
    done: bool = false
    created: datetime
  }

  state {
    accounts: table Account
    items: table Item
    now: datetime
  }

  fn open_items(account_id: str) -> list[Item] =
    [i for i in items if i.owner == account_id and not i.done]
'''

_TOOLS = [
    '''
  query get_account_{n}(account_id: str "The account's id") -> Account {{
    """Return one account ({n})."""
    let a = accounts.get(account_id) else f"account {{account_id}} not found"
    return a
  }}
''',
    '''
  query list_items_{n}(account_id: str, limit: int = 10 "At most this many") -> list[Item] {{
    """List the open items of an account, most urgent first ({n})."""
    require limit > 0 else "limit must be positive"
    let found = sorted(open_items(account_id), key=lambda i: i.created, reverse=true)
    return found[:limit]
  }}
''',
    '''
  action add_item_{n}(account_id: str, title: str, priority: Priority = Priority.normal) -> Item {{
    """Add an item for an active account ({n})."""
    let a = accounts.get(account_id) else "account not found"
    require a.status == Status.active else "account is not active"
    require len(title.strip()) > 0 else "title must not be empty"
    return items.insert(Item(owner=account_id, title=title, priority=priority, created=now))
  }}
''',
    '''
  action complete_{n}(item_id: str) -> Item {{
    """Mark an item as done ({n})."""
    let i = items.get(item_id) else "item not found"
    if i.done {{
      fail "already done"
    }} elif i.owner.status != Status.active {{
      fail "account is not active"
    }}
    i.done = true
    return i
  }}
''',
    '''
  action move_{n}(account_id: str, street: str, city: str, zip: str) -> Account {{
    """Change an account's address and tag it ({n})."""
    let a = accounts.get(account_id) else "account not found"
    a.address = Address(street=street, city=city, zip=zip)
    if "moved" not in a.tags {{
      a.tags.append("moved")
    }}
    for i in items {{
      if i.owner == account_id and i.priority == Priority.low {{
        i.priority = Priority.normal
      }}
    }}
    return a
  }}
''',
]

_TASK = '''
  task smoke {
    """Add an item for A1."""
    init {
      now = datetime("2024-05-01T09:00:00Z")
      accounts = [Account(account_id="A1", name="Ana", email="ana@x.org")]
      items = []
    }
    solution {
      add_item_2(account_id="A1", title="buy milk")
    }
    check "one item": count(i for i in items if i.owner == "A1") == 1
  }
}
'''


def synthesize(tool_count: int) -> str:
    """A spec with `tool_count` tools, cycling through a few realistic tool shapes."""
    tools = [_TOOLS[n % len(_TOOLS)].format(n=n) for n in range(tool_count)]
    return _HEADER + "".join(tools) + _TASK


# ---- measurements ----------------------------------------------------------------------------


def time_in_process(
    name: str, text: str, runs: int, verify: bool = False
) -> tuple[float, CompileResult]:
    """Median milliseconds of `check_source` over `runs` runs, after two warm-up runs.

    verify=False times the static stages (the target); verify=True adds running the tasks
    on the generated environment, which is what `envdsl check` does by default."""
    source_text = text
    for _ in range(2):
        result = check_source(SourceFile(name, source_text), verify=verify)
    samples = []
    for _ in range(runs):
        start = time.process_time()
        result = check_source(SourceFile(name, source_text), verify=verify)
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples), result


def time_parse(name: str, text: str, runs: int) -> float:
    """Median milliseconds of the syntax stages alone (parse + build), the rest is semantics."""
    from envdsl.diagnostics import DiagnosticSink
    from envdsl.syntax.build import build_ast
    from envdsl.syntax.parse import parse_file

    samples = []
    for attempt in range(runs + 2):
        source = SourceFile(name, text)
        sink = DiagnosticSink()
        start = time.process_time()
        tree = parse_file(source, sink)
        if tree is not None:
            build_ast(tree, source, sink)
        if attempt >= 2:
            samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


def bare_lark() -> Any:
    """The baseline parser: lark LALR with the same grammar and post-lexer, building a plain
    tree (no positions, no checks, no AST)."""
    from lark import Lark

    from envdsl.syntax.postlex import NewlinePostLexer
    from envdsl.util.resources import grammar_path

    return Lark(
        grammar_path().read_text(encoding="utf-8"),
        parser="lalr",
        lexer="basic",
        maybe_placeholders=True,
        postlex=NewlinePostLexer(),
        start=["start", "expr"],
    )


def static_ratio(parser: Any, name: str, text: str, runs: int) -> tuple[float, float, float]:
    """(static check ms, bare lark ms, median of their ratios), the two timed in turns run by
    run in CPU time of this process: other jobs on shared cores then slow neither side of a
    pair more than the other (timed apart, the ratios moved by 2x between runs)."""
    check: list[float] = []
    bare: list[float] = []
    for attempt in range(runs + 2):
        start = time.process_time()
        check_source(SourceFile(name, text), verify=False)
        middle = time.process_time()
        parser.parse(text, start="start")
        end = time.process_time()
        if attempt >= 2:
            check.append((middle - start) * 1000)
            bare.append((end - middle) * 1000)
    ratios = [c / b for c, b in zip(check, bare) if b > 0]
    return statistics.median(check), statistics.median(bare), statistics.median(ratios)


def time_load(spec: Path, runs: int) -> tuple[float, float]:
    """Median milliseconds of compiling a spec for execution in memory (`envdsl.load`'s path,
    unformatted) and of the same with black formatting the generated module."""
    from envdsl.pipeline import compile_file

    medians = []
    for formatted in (False, True):
        samples = []
        for attempt in range(runs + 1):
            start = time.perf_counter()
            compile_file(spec, formatted=formatted)
            if attempt >= 1:
                samples.append((time.perf_counter() - start) * 1000)
        medians.append(statistics.median(samples))
    return medians[0], medians[1]


def _subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    # Bytecode as an installed package has it: lark, the baseline, loads its .pyc files, so
    # envdsl's own must not be compiled from source in every timed process (the warm-up run
    # writes them to __pycache__/, which git ignores). With PYTHONDONTWRITEBYTECODE=1 in the
    # environment, compiling envdsl's modules was 70-80 ms of every cold start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["NO_COLOR"] = "1"
    return env


def cli_command() -> list[str]:
    """The installed console script if it runs this checkout, else `python -m envdsl`."""
    script = shutil.which("envdsl")
    if script is not None:
        probe = subprocess.run(
            [script, "--version"], capture_output=True, text=True, env=_subprocess_env()
        )
        if probe.returncode == 0:
            return [script]
    return [sys.executable, "-m", "envdsl"]


def time_cold(commands: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Wall-clock milliseconds of fresh processes, the commands run in turns (one unmeasured
    warm-up round, which fills the OS file cache and the parser caches)."""
    env = _subprocess_env()
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for attempt in range(runs + 1):
        for name, command in commands.items():
            start = time.perf_counter()
            completed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
            elapsed = (time.perf_counter() - start) * 1000
            if completed.returncode not in (0, 1):  # 1 = the spec has errors, a full run
                raise RuntimeError(f"{command} failed:\n{completed.stderr}")
            if attempt > 0:
                samples[name].append(elapsed)
    return samples


_IMPORT_PROBE = """
import json, sys
from envdsl.cli import main
try:
    main(["check", "--no-verify", sys.argv[1]], prog_name="envdsl", standalone_mode=False)
except SystemExit:
    pass
print("@@" + json.dumps({name: name in sys.modules for name in sys.argv[2:]}))
"""


def heavy_imports(spec: Path) -> dict[str, bool]:
    completed = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, str(spec), *HEAVY_MODULES],
        cwd=REPO,
        env=_subprocess_env(),
        capture_output=True,
        text=True,
    )
    marker = [line for line in completed.stdout.splitlines() if line.startswith("@@")]
    if not marker:
        raise RuntimeError(f"import probe failed:\n{completed.stdout}\n{completed.stderr}")
    loaded: dict[str, bool] = json.loads(marker[-1][2:])
    return loaded


# ---- report ----------------------------------------------------------------------------------


def _verdict(value: float, target: float) -> str:
    return "ok" if value < target else "SLOW"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="in-process runs per spec")
    parser.add_argument("--cold", type=int, default=5, help="cold-start runs per command")
    parser.add_argument("--tools", type=int, default=20, help="tools in the synthesized spec")
    parser.add_argument(
        "--quick", action="store_true", help="one example, one run (keeps the script working)"
    )
    args = parser.parse_args()
    examples = sorted(p for p in (REPO / "examples").glob("*.env") if not is_task_file(p))
    if args.quick:
        args.runs, args.cold, args.tools = 1, 1, 4
        examples = [REPO / "examples" / "sleep_tracking.env"]

    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores; median of {args.runs} runs")
    print("lark ms: bare lark LALR parse of the file (same grammar and post-lexer, no positions)")
    print("in-process times are CPU time of this process (other jobs on shared cores add none)")
    print("static and lark ms: timed in turns; static/lark: the median of the runs' ratios")
    print()
    print(
        f"{'spec':<36} {'tools':>5} {'lines':>6} {'diags':>5} {'static ms':>9} {'parse ms':>9}"
        f" {'lark ms':>8} {'static/lark':>11} {'+tasks ms':>9}"
    )
    print("-" * 106)
    baseline_parser = bare_lark()
    ratios = []
    for path in examples:
        text = path.read_text(encoding="utf-8")
        _, result = time_in_process(str(path), text, 1)
        tools = len(result.checked.tools) if result.checked is not None else 0  # type: ignore[attr-defined]
        lines = text.count("\n")
        ms, lark_ms, ratio = static_ratio(baseline_parser, str(path), text, args.runs)
        parse_ms = time_parse(str(path), text, args.runs)
        ratios.append(ratio)
        with_tasks, _ = time_in_process(str(path), text, max(3, args.runs // 4), verify=True)
        print(
            f"{path.name:<36} {tools:>5} {lines:>6} {len(result.diagnostics):>5} {ms:>9.1f} "
            f"{parse_ms:>9.1f} {lark_ms:>8.1f} {ratio:>10.2f}x {with_tasks:>9.1f}"
        )
    print(
        f"static check / bare lark parse: {min(ratios):.2f}-{max(ratios):.2f}x "
        f"(goal <= {STATIC_RATIO_GOAL}x)"
    )

    synthetic = synthesize(args.tools)
    ms, result = time_in_process("synthetic.env", synthetic, args.runs)
    tools = len(result.checked.tools) if result.checked is not None else 0  # type: ignore[attr-defined]
    name = f"synthesized ({args.tools} tools)"
    with_tasks, _ = time_in_process("synthetic.env", synthetic, max(3, args.runs // 4), True)
    print(
        f"{name:<36} {tools:>5} {synthetic.count(chr(10)):>6} {len(result.diagnostics):>5} "
        f"{ms:>9.1f} {time_parse('synthetic.env', synthetic, args.runs):>9.1f} {with_tasks:>9.1f}"
        f"  static target < {IN_PROCESS_TARGET_MS:.0f} ms: {_verdict(ms, IN_PROCESS_TARGET_MS)}"
    )
    if result.diagnostics:
        errors = [f"{d.code.code} {d.message}" for d in result.diagnostics if d.is_error]
        if errors:
            print("  warning: the synthesized spec has errors:", *errors[:5], sep="\n    ")

    print()
    spec = REPO / "examples" / "sleep_tracking.env"
    command = cli_command()
    shown = "envdsl" if len(command) == 1 else "python -m envdsl"
    target = str(spec.relative_to(REPO))
    try:
        cold = time_cold(
            {
                "pass": [sys.executable, "-c", "pass"],
                "lark": [sys.executable, "-c", "import lark"],
                "check": [*command, "check", "--no-verify", target],
                "tasks": [*command, "check", target],
            },
            args.cold,
        )
    except (OSError, RuntimeError) as error:
        print(f"cold start: skipped ({error})")
    else:
        baseline, lark_import, check, tasks = (
            statistics.median(cold[name]) for name in ("pass", "lark", "check", "tasks")
        )
        paired = statistics.median(c / b for c, b in zip(cold["check"], cold["lark"]))
        print(f"cold start, median of {args.cold} (the commands in turns, after a warm-up round)")
        print(f"  {'python -c pass':<46}{baseline:>7.1f} ms")
        print(
            f"  {shown} check --no-verify sleep_tracking.env".ljust(48)
            + f"{check:>7.1f} ms  target < {COLD_TARGET_MS:.0f} ms: "
            + _verdict(check, COLD_TARGET_MS)
        )
        print(f"  {'python -c import lark':<46}{lark_import:>7.1f} ms")
        print(f"  difference {check - baseline:.1f} ms, ratio {check / baseline:.1f}x")
        print(
            f"  ratio to `import lark`: {check / lark_import:.2f}x (of the medians), "
            f"{paired:.2f}x (median of the rounds' ratios) (goal <= {COLD_RATIO_GOAL:g}x)"
        )
        print(f"  {shown} check sleep_tracking.env (runs 3 tasks)".ljust(48) + f"{tasks:>7.1f} ms")

    print()
    unformatted, formatted = time_load(spec, max(1, args.runs // 4))
    print(f"compile for execution in memory (envdsl.load's path) {spec.name}")
    print(f"  unformatted (what envdsl.load does) {unformatted:>7.1f} ms")
    print(
        f"  formatted with black (compile -o)   {formatted:>7.1f} ms; "
        f"black would be {1 - unformatted / formatted:.0%} of a load"
    )

    print()
    loaded = heavy_imports(spec)
    for module in HEAVY_MODULES:
        state = "IMPORTED (should not be)" if loaded[module] else "not imported"
        print(f"  {module:<8} during `envdsl check --no-verify`: {state}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
