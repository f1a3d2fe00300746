"""Commands about specs themselves: check, explain, fmt, lsp, compile, schema, verify, grammar."""

from __future__ import annotations

import difflib
import json
import sys
import textwrap
from typing import Any, Sequence

import click

from envdsl.cli.group import (
    EXIT_ERRORS,
    EXIT_OK,
    backend_option,
    fail_usage,
    main,
    make_backend,
    stderr_color,
    stdout_color,
)
from envdsl.cli.specs import (
    compile_or_exit,
    failed_file,
    file_paths,
    load_class,
    one_spec,
    spec_bundles,
)
from envdsl.util.spec_paths import describe_read_error


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="FILE|DIR|PATTERN...")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "jsonl"]),
    default="text",
    show_default=True,
    help="text for people; json for tools and LLMs (see docs/diagnostics-json.md); jsonl: "
    "one object per file, then a summary line.",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text output. Default: only when stdout is a terminal and NO_COLOR is unset.",
)
@click.option(
    "--no-verify",
    is_flag=True,
    help="Skip running the tasks (init, solution, checks); only the static stages run.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=0),
    help="Check this many files at a time in worker processes; 0 = one per core. Default 1; "
    "with --backend ray, Ray tasks in flight, default twice the cluster's CPUs.",
)
@click.option(
    "--fix",
    is_flag=True,
    help="First apply the machine fixes the diagnostics carry (rechecking until none applies), "
    "report each on stderr, then check the fixed specs.",
)
@backend_option
def check(
    files: Sequence[str],
    output_format: str,
    color: bool | None,
    no_verify: bool,
    jobs: int | None,
    fix: bool,
    backend: str,
    address: str | None,
) -> None:
    """Check specs and report their diagnostics.

    Besides the static checks, each task is run on the generated environment: its init must
    be valid, its solution must succeed and every check must pass after it.
    A directory means every *.env file below it; a quoted pattern ('gen/*.env', 'specs/**/*.env')
    is expanded by envdsl. With more than one file, text output ends with a summary.
    A task file (`tasks for "shop.env" { ... }`) is checked with the env it names: together
    with it when both are given (one record), else on its own with its env read from disk.
    Exits with 0 when no file has errors (warnings are fine), 1 when any file has errors and
    2 on usage errors: a named file that cannot be read, a directory or pattern that finds no
    file. Files found through a directory or pattern (or with --format jsonl) that cannot be
    read are reported per file and counted; then the exit code is 2 only if none could be read.
    """
    from envdsl.cli.check_batch import run_check

    if fix:
        from envdsl.cli.apply_fixes import fix_files

        fix_files(file_paths(files), sys.stderr)
    use_color = stdout_color(color) if output_format == "text" else False
    if jobs is None:
        jobs = 0 if backend == "ray" else 1
    code = run_check(
        files,
        output_format=output_format,
        color=use_color,
        verify=not no_verify,
        jobs=jobs,
        backend=make_backend(backend, address, jobs),
    )
    sys.exit(code)


@main.command()
@click.argument("code", required=False)
@click.option("--list", "list_codes", is_flag=True, help="List every diagnostic code.")
def explain(code: str | None, list_codes: bool) -> None:
    """Explain a diagnostic code (E2001, e2001) or slug (type-mismatch), with examples."""
    from envdsl.diagnostics.codes import REGISTRY, lookup

    if list_codes:
        if code is not None:
            raise click.UsageError("give either a CODE or --list, not both")
        slug_width = max(len(entry.slug) for entry in REGISTRY.values())
        for listed in REGISTRY.values():
            severity = listed.severity.value
            click.echo(
                f"{listed.code}  {severity:<7}  {listed.slug:<{slug_width}}  {listed.summary}"
            )
        return
    if code is None:
        raise click.UsageError("missing CODE (or use --list to see all codes)")
    entry = lookup(code)
    if entry is None:
        fail_usage(f"unknown diagnostic code '{code}'{_close_matches(code)}")

    from envdsl.diagnostics.explanations import EXPLANATIONS

    click.echo(f"{entry.code} [{entry.slug}]: {entry.summary}")
    click.echo(f"severity: {entry.severity.value}, stage: {entry.stage.value}")
    explanation = EXPLANATIONS.get(entry.code)
    if explanation is None:  # a test keeps the registry and the explanations in step
        return
    click.echo("")
    click.echo(textwrap.fill(explanation.text, width=88))
    shown = [(f"With {name} next to it", text) for name, text in explanation.files.items()]
    shown += [("Wrong", explanation.wrong), ("Right", explanation.right)]
    for title, spec in shown:
        if spec:
            click.echo(f"\n{title}:\n")
            click.echo(textwrap.indent(spec.rstrip("\n"), "    "))


def _close_matches(wanted: str) -> str:
    from envdsl.diagnostics.codes import REGISTRY

    names: dict[str, str] = {}
    for entry in REGISTRY.values():
        names[entry.code] = entry.code
        names[entry.slug] = entry.code
    key = wanted.strip()
    key = key.upper() if key[:1].lower() in ("e", "w") and key[1:].isdigit() else key.lower()
    found = dict.fromkeys(names[m] for m in difflib.get_close_matches(key, names, n=3, cutoff=0.6))
    if not found:
        return "; run `envdsl explain --list` to see all codes"
    suggestions = ", ".join(f"{code} ({REGISTRY[code].slug})" for code in found)
    return f"; did you mean {suggestions}?"


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="FILE|DIR|PATTERN...")
@click.option(
    "--check", "check_only", is_flag=True, help="Write nothing; exit 1 if a file would change."
)
@click.option("--diff", is_flag=True, help="Write nothing; print what would change as a diff.")
@click.option(
    "--color/--no-color", default=None, help="Colour the diagnostics of specs with errors."
)
def fmt(files: Sequence[str], check_only: bool, diff: bool, color: bool | None) -> None:
    """Rewrite specs in the one canonical layout (comments and docstrings kept).

    A spec with syntax errors is not touched (its errors are printed). Exits with 0 when
    done, 1 when a spec could not be formatted or (with --check) when a file would change,
    2 on usage errors.
    """
    from envdsl.fmt.files import run_fmt

    sys.exit(run_fmt(file_paths(files), check=check_only, diff=diff, color=stderr_color(color)))


@main.command()
def lsp() -> None:
    """Run the language server on stdin/stdout (for editors; see editors/vscode)."""
    from envdsl.lsp.server import serve

    serve()


@main.command(name="compile")
@click.argument("files", nargs=-1, required=True, metavar="FILE|DIR|PATTERN...")
@click.option(
    "-o",
    "--output",
    "output_dir",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Directory for <name>.py and <name>.tools.json.",
)
def compile_command(files: Sequence[str], output_dir: str) -> None:
    """Generate the Python environment and its tool schemas from specs.

    A directory means every *.env file below it; a quoted pattern is expanded by envdsl.
    Task files join the module of the env they name (one module per env); a task file
    whose env is not given compiles that env with its tasks.
    Writes nothing for a spec with errors (they are printed as `check` prints them).
    """
    from pathlib import Path

    from envdsl.generated.loader import environment_class, load_module
    from envdsl.pipeline import CompileResult

    outputs: list[tuple[Path, str]] = []
    for bundle in spec_bundles(files):
        result = compile_or_exit(bundle)
        assert isinstance(result, CompileResult)
        name = result.artifacts["name"]
        module = load_module(result.artifacts["module"], name)
        schemas = environment_class(module)().tool_schemas()
        target = Path(output_dir)
        outputs.append((target / f"{name}.py", result.artifacts["module"]))
        tools_json = json.dumps(schemas, indent=2, ensure_ascii=False) + "\n"
        outputs.append((target / f"{name}.tools.json", tools_json))
    try:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        for target_path, text in outputs:
            temporary = target_path.with_name(target_path.name + ".tmp")
            temporary.write_text(text, encoding="utf-8")
            temporary.replace(target_path)  # atomic: never a half-written module
    except OSError as error:
        fail_usage(f"cannot write to '{output_dir}': {error.strerror or error}")
    for target_path, _ in outputs:
        click.echo(f"wrote {target_path}")


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
def schema(files: tuple[str, ...]) -> None:
    """Print the OpenAI function-calling schemas of a spec's tools.

    FILE may be a directory or a quoted pattern that finds one spec."""
    env_class = load_class(one_spec(files))
    click.echo(json.dumps(env_class().tool_schemas(), indent=2, ensure_ascii=False))


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
@click.option(
    "--trace-dir",
    type=click.Path(file_okay=False),
    help="Write each wrong run that survives mutation testing there as a calls file that "
    "`envdsl run --calls` replays (the report prints the command).",
)
def verify(files: tuple[str, ...], output_format: str, trace_dir: str | None) -> None:
    """Run every task of a spec and print a per-task report (init, solution, checks, frame
    and mutation score: the wrong runs derived from the solution that the checks reject).

    FILE may be a directory or a quoted pattern that finds one spec."""
    from envdsl.diagnostics.render_text import render_text
    from envdsl.pipeline import check_file
    from envdsl.tasks.mutation import mutation_score_text

    bundle = one_spec(files)
    file = bundle.path
    try:
        result = check_file(file, task_files=bundle.task_files)
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read '{failed_file(error, bundle)}': {describe_read_error(error)}")
    reports = [report.as_json() for report in result.task_reports]
    replays: dict[str, list[str]] = {}
    if trace_dir is not None:
        from envdsl.cli.mutant_traces import write_survivors

        try:
            replays = write_survivors(reports, trace_dir, bundle)
        except OSError as error:
            fail_usage(f"cannot write traces to '{trace_dir}': {error.strerror or error}")
    if output_format == "json":
        from envdsl.diagnostics.render_json import render_json

        document = {"ok": result.ok, "tasks": reports, "diagnostics": render_json([result])}
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        sys.exit(EXIT_OK if result.ok else EXIT_ERRORS)
    from envdsl.util.terminal import printable

    if result.checked is not None and not reports and result.ok:
        click.echo(f"{file}: no tasks to verify")
    for report in reports:
        solution = {None: "no solution", True: "ok", False: "FAILS"}[report["solution_ok"]]
        if report["refusal"]:
            solution = (
                "none, a refusal"  # doing nothing is its reference
                if report["solution_ok"] is None
                else f"{solution}, a refusal"
            )
        after = "-" if report["passing_after"] is None else report["passing_after"]
        status = "ok" if not report["problems"] else "problems"
        click.echo(
            f"{report['task']}: {status}  init {'ok' if report['init_ok'] else 'INVALID'}, "
            f"solution {solution} ({report['solution_steps_ok']} calls), checks passing "
            f"before {report['passing_before']}/{report['checks']}, after {after}/{report['checks']}"
        )
        controls = [
            f"{label} {report['controls'][key]:.2f}"
            for key, label in (("nothing", "doing nothing"), ("only_reading", "only reading"))
            if report["controls"][key] is not None
        ]
        if controls:
            click.echo(f"    reward of {', '.join(controls)}")
        for left in report["left_out"]:
            click.echo(
                f"    reward without step {left['step']} ({left['tool']}): {left['reward']:.2f}"
            )
        click.echo(f"    frame: {_frame_text(report)}")
        if report["counterexamples"]:
            rewards = ", ".join(f"{reward:.2f}" for reward in report["counterexamples"])
            click.echo(f"    reward of each counterexample: {rewards}")
        mutation = report["mutation"]
        if mutation is not None:
            click.echo(f"    mutation score: {mutation_score_text(mutation)}")
        for command in replays.get(report["task"], []):
            click.echo(f"    replay a survivor: {printable(command, keep_tabs=False)}")
        for problem in report["problems"]:
            click.echo(f"    {printable(problem, keep_tabs=False)}")  # quotes spec strings
    if result.diagnostics:
        click.echo(render_text(result.diagnostics, result.sources))
    sys.exit(EXIT_OK if result.ok else EXIT_ERRORS)


def _frame_text(report: dict[str, Any]) -> str:
    """The task's frame in one line: what the reference changes, which is all a run may."""
    frame = report["frame"]
    if frame is None:
        return "none (no solution to take it from: any change passes)"
    changes: list[str] = frame["changes"]
    if not changes:
        return "empty (nothing may change)" + (", a refusal" if report["refusal"] else "")
    shown = "; ".join(changes[:6])
    return shown + (f"; and {len(changes) - 6} more" if len(changes) > 6 else "")


@main.command()
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["lark", "gbnf"]),
    default="lark",
    show_default=True,
    help="lark: grammar/envdsl.lark as it is; gbnf: converted for llama.cpp / vLLM.",
)
def grammar(output_format: str) -> None:
    """Print the envdsl grammar (GBNF is a superset: see docs/synth.md)."""
    from envdsl.llm.grammar import gbnf_grammar, lark_grammar

    text = lark_grammar() if output_format == "lark" else gbnf_grammar()
    click.echo(text, nl=False)
