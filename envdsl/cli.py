"""The `envdsl` command line: parse options, call the pipeline, render. Nothing else lives here.

Exit codes: 0 no errors (warnings allowed), 1 the specs have errors, 2 usage errors (bad
options, a file that cannot be read, an unknown code). Imports of the compiler stages are
lazy so that `envdsl check` never loads the code generator (black, jinja2) or the LLM client.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
import textwrap
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence

import click

from envdsl import __version__

if TYPE_CHECKING:
    from envdsl.backends import Backend
    from envdsl.rollout.plan import EnvSource
    from envdsl.rollout.replay import Replay
    from envdsl.runtime import Environment
    from envdsl.task_files import Bundle

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2


_text_or_json = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people; json for tools.",
)


def _fail_usage(message: str) -> NoReturn:
    click.echo(f"envdsl: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


class _Group(click.Group):
    """Usage errors in one line on stderr (`envdsl: error: ...`, exit 2), as every other
    usage error, instead of click's usage block."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.UsageError as error:
            message = " ".join(error.format_message().split())
            command = error.ctx.command_path if error.ctx is not None else "envdsl"
            hint = f" (see '{command} --help')" if "--help" not in message else ""
            _fail_usage(message + hint)
        except click.ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(EXIT_ERRORS)
        sys.exit(code if isinstance(code, int) else EXIT_OK)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="envdsl")
def main() -> None:
    """envdsl: a typed DSL and compiler for tool-interaction environments of LLM agents."""


# ---- the OpenAI-compatible server (rollout, synth) -------------------------------------------

_server_options = [
    click.option(
        "--base-url",
        default="http://127.0.0.1:8000/v1",
        show_default=True,
        envvar="OPENAI_BASE_URL",
        help="An OpenAI-compatible server (vLLM, llama.cpp, ...). Key: $OPENAI_API_KEY.",
    ),
    click.option("--temperature", type=click.FloatRange(0.0, 2.0)),
    click.option("--max-tokens", type=click.IntRange(1), help="Completion token limit per reply."),
    click.option("--timeout", default=300.0, show_default=True, type=click.FloatRange(0.1)),
    click.option("--retries", default=4, show_default=True, type=click.IntRange(0, 100)),
    click.option(
        "--backoff",
        default=1.0,
        show_default=True,
        type=click.FloatRange(0.0),
        help="Seconds before the first retry; doubles each time.",
    ),
]


def _options(options: list[Any]) -> Callable[[Any], Any]:
    """One decorator applying a group of click options that several commands share."""

    def apply(function: Any) -> Any:
        for option in reversed(options):
            function = option(function)
        return function

    return apply


_server_option = _options(_server_options)


# ---- where batches run (check, rollout, synth --batch) --------------------------------------

_backend_options = [
    click.option(
        "--backend",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="local: processes and threads here; ray: one Ray task per item (pip install "
        "'envdsl[ray]').",
    ),
    click.option(
        "--address",
        help="With --backend ray: the cluster (ray://HEAD:10001, or auto on a cluster node); "
        "default $RAY_ADDRESS, else a local Ray.",
    ),
]


_backend_option = _options(_backend_options)


def _backend(kind: str, address: str | None, concurrency: int, processes: int = 1) -> "Backend":
    from envdsl.backends import Backend

    if address is not None and kind != "ray":
        _fail_usage("--address is for --backend ray")
    return Backend(kind, concurrency=concurrency, processes=processes, address=address)


# ---- check -----------------------------------------------------------------------------------


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
@_backend_option
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
    from envdsl.batch import run_check

    if fix:
        from envdsl.fixes import fix_files

        fix_files(_file_paths(files), sys.stderr)
    use_color = _use_color(color) if output_format == "text" else False
    if jobs is None:
        jobs = 0 if backend == "ray" else 1
    code = run_check(
        files,
        output_format=output_format,
        color=use_color,
        verify=not no_verify,
        jobs=jobs,
        backend=_backend(backend, address, jobs),
    )
    sys.exit(code)


def _describe_read_error(error: OSError | UnicodeDecodeError) -> str:
    from envdsl.batch import describe_read_error

    return describe_read_error(error)


def _use_color(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


# ---- explain ---------------------------------------------------------------------------------


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
        _fail_usage(f"unknown diagnostic code '{code}'{_close_matches(code)}")

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


# ---- fmt -------------------------------------------------------------------------------------


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

    sys.exit(
        run_fmt(_file_paths(files), check=check_only, diff=diff, color=_use_color_stderr(color))
    )


def _use_color_stderr(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return not os.environ.get("NO_COLOR") and sys.stderr.isatty()


@main.command()
def lsp() -> None:
    """Run the language server on stdin/stdout (for editors; see editors/vscode)."""
    from envdsl.lsp.server import serve

    serve()


# ---- compile, schema, run --------------------------------------------------------------------


def _compile_or_exit(
    bundle: "Bundle", color: bool | None = None, *, formatted: bool = True
) -> object:
    """Compile one spec with its task files; on errors print them like `check` does and
    exit 1."""
    from envdsl.diagnostics.render_text import render_text
    from envdsl.pipeline import compile_file

    try:
        result = compile_file(bundle.path, formatted=formatted, task_files=bundle.task_files)
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot read '{_failed_file(error, bundle)}': {_describe_read_error(error)}")
    if not result.ok:
        use_color = _use_color(color)
        click.echo(
            render_text(result.diagnostics, result.sources, color=use_color), color=use_color
        )
        sys.exit(EXIT_ERRORS)
    return result


def _failed_file(error: OSError | UnicodeDecodeError, bundle: "Bundle") -> str:
    """The file of a bundle whose reading raised `error` (a decode error names none)."""
    filename = getattr(error, "filename", None)
    return str(filename) if filename else bundle.path


def _file_paths(arguments: Sequence[str]) -> list[str]:
    """Files, directories and patterns, expanded as `check` expands them: specs and task
    files alike (fmt and --fix rewrite each file on its own)."""
    from envdsl.batch import BatchUsageError, expand_arguments

    try:
        return expand_arguments(arguments).files
    except BatchUsageError as error:
        _fail_usage("; ".join(error.messages))


def _spec_bundles(arguments: Sequence[str]) -> "list[Bundle]":
    """The files of `arguments`, each env with the task files given for it
    (envdsl.task_files)."""
    from envdsl.task_files import bundle_paths

    return bundle_paths(_file_paths(arguments))


def _one_spec(arguments: Sequence[str]) -> "Bundle":
    """The one env a single-env command takes: a spec and task files for it, a task file
    alone, or a directory or pattern that finds exactly one env."""
    bundles = _spec_bundles(arguments)
    if len(bundles) != 1:
        paths = [bundle.path for bundle in bundles]
        shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
        named = " ".join(f"'{argument}'" for argument in arguments)
        verb = "names" if len(arguments) == 1 else "name"
        _fail_usage(f"{named} {verb} {len(paths)} specs ({shown}); give one")
    return bundles[0]


def _load_class(bundle: "Bundle") -> "type[Environment]":
    from envdsl.loader import environment_class, load_module
    from envdsl.pipeline import CompileResult

    result = _compile_or_exit(bundle, formatted=False)  # only executed, never written
    assert isinstance(result, CompileResult)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)


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

    from envdsl.loader import environment_class, load_module
    from envdsl.pipeline import CompileResult

    outputs: list[tuple[Path, str]] = []
    for bundle in _spec_bundles(files):
        result = _compile_or_exit(bundle)
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
        _fail_usage(f"cannot write to '{output_dir}': {error.strerror or error}")
    for target_path, _ in outputs:
        click.echo(f"wrote {target_path}")


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
def schema(files: tuple[str, ...]) -> None:
    """Print the OpenAI function-calling schemas of a spec's tools.

    FILE may be a directory or a quoted pattern that finds one spec."""
    env_class = _load_class(_one_spec(files))
    click.echo(json.dumps(env_class().tool_schemas(), indent=2, ensure_ascii=False))


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option(
    "--task", "task_name", help="Start from this task's initial state; print its evaluation."
)
@click.option(
    "--state",
    "state_file",
    type=click.Path(dir_okay=False),
    help="Start from a JSON state (checked against the schema).",
)
@click.option(
    "--calls",
    "calls_file",
    type=click.Path(dir_okay=False, allow_dash=True),
    help='JSONL of {"name", "arguments"} or OpenAI assistant messages with tool_calls; - for stdin.',
)
@click.option(
    "--rollout",
    "rollout_file",
    type=click.Path(dir_okay=False),
    help="Replay a record of `envdsl rollout` (its task, calls and answer) and re-grade it.",
)
@click.option(
    "--index",
    default=0,
    show_default=True,
    type=int,
    help="With --rollout: which record (0 the first, -1 the last).",
)
@click.option(
    "--answer",
    "answer",
    default="",
    help="The agent's final message to the user, for checks on `answer` (with --task).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when the task's evaluation does not succeed (with --task) or a call fails.",
)
def run(
    files: tuple[str, ...],
    task_name: str | None,
    state_file: str | None,
    calls_file: str | None,
    rollout_file: str | None,
    index: int,
    answer: str,
    output_format: str,
    strict: bool,
) -> None:
    """Replay tool calls against an environment and print each result and the final state hash.

    With --rollout FILE --index N, the calls are those of a recorded rollout, run from its
    task's initial state, and its answer is graded by the task's checks as they are now.
    Exits 0 whatever the calls and the evaluation give, unless --strict."""
    from envdsl.runtime import InvalidState

    if rollout_file is not None and (calls_file or task_name or state_file or answer):
        _fail_usage("--rollout replays a record's task, calls and answer: give no --calls, "
                    "--task, --state or --answer")  # fmt: skip
    if task_name and state_file:
        _fail_usage("give --task or --state, not both")
    if answer and not task_name:
        _fail_usage("--answer is graded by a task's checks: give --task too")
    replay = None
    if rollout_file is not None:
        source = _env_source(_one_spec(files))
        env_class = source.environment_class()
        replay = _load_replay(rollout_file, index, source)
        task_name, answer, calls = replay.task, replay.answer, replay.calls
    elif calls_file is None:
        _fail_usage("give --calls FILE (or --rollout FILE --index N)")
    else:
        env_class = _load_class(_one_spec(files))
    env = env_class()
    try:
        if state_file:
            with open(state_file, encoding="utf-8") as handle:
                text = handle.read()
            try:
                data = json.loads(text)
            except (ValueError, RecursionError) as error:  # bad JSON, too deep, huge numbers
                _fail_usage(f"cannot read state '{state_file}': {_one_line(error)}")
            env.reset(state=data)
        else:
            env.reset(task=task_name)
    except KeyError:
        _fail_usage(f"unknown task '{task_name}'; tasks: {', '.join(env_class.TASKS) or 'none'}")
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot read state '{state_file}': {_describe_read_error(error)}")
    except InvalidState as error:
        _fail_usage(f"invalid initial state: {_one_line(error)}")
    if calls_file is not None:
        calls = _read_calls(calls_file)
    from envdsl.terminal import printable  # tool names, arguments, results: agent/spec text

    results = []
    for index, (name, arguments) in enumerate(calls, start=1):
        outcome = env.call(name, arguments)
        results.append({"name": name, "arguments": arguments, "result": outcome})
        if output_format == "text":
            shown = json.dumps(arguments, ensure_ascii=False)
            line = f"[{index}] {name}({shown}) -> {json.dumps(outcome, ensure_ascii=False)}"
            click.echo(_encodable(printable(line, keep_tabs=False)))
    evaluation = env.evaluate(answer=answer) if task_name else None
    failed = (evaluation is not None and not evaluation["success"]) or (
        evaluation is None and not all(r["result"]["success"] for r in results)
    )
    exit_code = EXIT_ERRORS if strict and failed else EXIT_OK
    if replay is not None:
        for warning in replay.warnings:
            click.echo(f"envdsl: warning: {warning}", err=True)
    if output_format == "json":
        document: dict[str, Any] = {
            "calls": results,
            "state_hash": env.state_hash(),
            "evaluation": evaluation,
        }
        if replay is not None:
            document["recorded"] = replay.recorded
            document["warnings"] = replay.warnings
        click.echo(_encodable(json.dumps(document, indent=2, ensure_ascii=False)))
        sys.exit(exit_code)
    click.echo(f"state hash: {env.state_hash()}")
    if evaluation is not None:
        for check_result in evaluation["checks"]:
            mark = "pass" if check_result["passed"] else "FAIL"
            reason = f" ({check_result['reason']})" if "reason" in check_result else ""
            shown_check = printable(f"{check_result['check']}{reason}", keep_tabs=False)
            click.echo(_encodable(f"  {mark}  {shown_check}"))
        click.echo(
            f"reward: {evaluation['reward']:.3f}  success: {str(evaluation['success']).lower()}"
        )
    if replay is not None:
        recorded = replay.recorded
        same = "same" if recorded["state_hash"] == env.state_hash() else "different"
        click.echo(
            f"recorded: reward {recorded['reward']}, success {recorded['success']}, "
            f"state hash {same}"
        )
    sys.exit(exit_code)


def _read_calls(calls_file: str) -> list[tuple[str, Any]]:
    from envdsl.replay import CallParseError, parse_calls

    try:
        if calls_file == "-":
            return parse_calls(sys.stdin.read())
        with open(calls_file, encoding="utf-8") as handle:
            return parse_calls(handle.read())
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot read '{calls_file}': {_describe_read_error(error)}")
    except CallParseError as error:
        _fail_usage(_one_line(error))


def _env_source(bundle: "Bundle") -> "EnvSource":
    """A spec with its task files as rollout workers load it (with its hashes); errors exit
    as `check` does."""
    from envdsl.pipeline import CompileResult, read_sources
    from envdsl.rollout.plan import env_source

    result = _compile_or_exit(bundle, formatted=False)
    assert isinstance(result, CompileResult)
    texts = [source.text for source in read_sources(bundle.path, bundle.task_files)]
    return env_source(bundle.path, "\0".join(texts), result)  # hashed as `tasks` does


def _load_replay(rollout_file: str, index: int, source: "EnvSource") -> "Replay":
    from envdsl.rollout.replay import ReplayError, load_replay

    if not os.path.exists(rollout_file):
        _fail_usage(f"cannot read '{rollout_file}': no such file")
    try:
        return load_replay(rollout_file, index, source)
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot read '{rollout_file}': {_describe_read_error(error)}")
    except ReplayError as error:
        _fail_usage(str(error))


def _encodable(text: str) -> str:
    """Text that UTF-8 can encode: a lone surrogate from a call's JSON (`"\\ud800"`) is
    printed as that escape instead of ending the command with a traceback."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _one_line(error: Exception) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:297] + "..."


# ---- tasks and verify ------------------------------------------------------------------------


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "jsonl"]),
    default="text",
    show_default=True,
    help="jsonl: one dataset record per task (datasets.load_dataset('json', ...) reads it).",
)
@click.option("--report", is_flag=True, help="Print the task set's coverage report instead.")
def tasks(files: tuple[str, ...], output_format: str, report: bool) -> None:
    """List a spec's tasks with their instructions (JSON for rollout harnesses).

    With task files (or a task file alone), their tasks are listed after the spec's own.
    --report: the coverage of the task set instead (tools, solution lengths, read/write mix,
    tables and fields, rules); text or --format json."""
    bundle = _one_spec(files)
    if report:
        _coverage_report(bundle, output_format)
        return
    env_class = _load_class(bundle)
    if output_format == "jsonl":
        from envdsl.adapters.records import task_records
        from envdsl.pipeline import read_sources

        texts = [source.text for source in read_sources(bundle.path, bundle.task_files)]
        for record in task_records(env_class, "\0".join(texts)):
            click.echo(json.dumps(record, ensure_ascii=False))
        return
    listing = [
        {
            "name": spec.name,
            "instruction": spec.instruction,
            "checks": [text for text, _ in spec.checks],
        }
        for spec in env_class.TASKS.values()
    ]
    if output_format == "json":
        document = {"env": env_class.NAME, "tasks": listing}
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    if not listing:
        click.echo(f"{bundle.path}: no tasks")
    from envdsl.terminal import printable  # spec strings: no escape sequence reaches the tty

    for item in listing:
        click.echo(f"{item['name']}:")
        instruction = printable(str(item["instruction"])) or "(no instruction)"
        click.echo(textwrap.indent(instruction, "    "))
        for text in item["checks"]:
            click.echo(f"    - check: {printable(str(text), keep_tabs=False)}")


def _coverage_report(bundle: "Bundle", output_format: str) -> None:
    from envdsl.task_coverage import coverage_report, render_text
    from envdsl.pipeline import CompileResult

    if output_format == "jsonl":
        _fail_usage("--report prints text or --format json")
    result = _compile_or_exit(bundle, formatted=False)
    assert isinstance(result, CompileResult)
    report = coverage_report(result)
    if output_format == "json":
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(report))


def _read_state_file(state_file: str) -> Any:
    """The JSON of a --state file; anything unreadable is a usage error (exit 2)."""
    try:
        with open(state_file, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot read state '{state_file}': {_describe_read_error(error)}")
    except (ValueError, RecursionError) as error:  # bad JSON, too deep, huge numbers
        _fail_usage(f"cannot read state '{state_file}': {_one_line(error)}")


def _start_state(
    env_class: "type[Environment]", task_name: str | None, state_file: str | None
) -> "dict[str, object] | None":
    """Check --task / --state as a usage error (exit 2) and return the JSON state, if any."""
    from envdsl.runtime import InvalidState

    if task_name and state_file:
        _fail_usage("give --task or --state, not both")
    if task_name is not None and task_name not in env_class.TASKS:
        _fail_usage(f"unknown task '{task_name}'; tasks: {', '.join(env_class.TASKS) or 'none'}")
    state: dict[str, object] | None = None
    if state_file:
        state = _read_state_file(state_file)
        try:
            env_class().reset(state=state)
        except InvalidState as error:
            _fail_usage(f"invalid initial state: {_one_line(error)}")
    return state


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option("--task", "task_name", required=True, help="The task whose initial state to print.")
def state(files: tuple[str, ...], task_name: str) -> None:
    """Print a task's initial state as canonical JSON."""
    env_class = _load_class(_one_spec(files))
    _start_state(env_class, task_name, None)
    env = env_class()
    env.reset(task=task_name)
    click.echo(json.dumps(env.state_json(), indent=2, ensure_ascii=False))


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option("--task", "task_name", help="Each session starts from this task's initial state.")
@click.option(
    "--state",
    "state_file",
    type=click.Path(dir_okay=False),
    help="Each session starts from this JSON state.",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http", "openenv"]),
    default="stdio",
    show_default=True,
    help="MCP over stdio (one client) or streamable HTTP at /mcp; openenv: the OpenEnv "
    "contract, and MCP at /mcp too.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="HTTP port."
)
def serve(
    files: tuple[str, ...],
    task_name: str | None,
    state_file: str | None,
    transport: str,
    host: str,
    port: int,
) -> None:
    """Serve the environment's tools over MCP (one environment per MCP session) or OpenEnv."""
    from envdsl.serve.episodes import Episodes

    try:
        if transport == "openenv":
            from envdsl.serve import openenv as openenv_server
        else:
            import anyio

            from envdsl.serve import mcp as mcp_server
    except ImportError as error:
        extra = "openenv" if transport == "openenv" else "mcp"
        _fail_usage(f"envdsl serve --transport {transport} needs the [{extra}] extra ({error}): "
                    f"pip install 'envdsl[{extra}]'")  # fmt: skip
    env_class = _load_class(_one_spec(files))
    episodes = Episodes(
        env_class, task=task_name, state=_start_state(env_class, task_name, state_file)
    )
    try:
        if transport == "openenv":
            openenv_server.serve_openenv(episodes, host, port)
        elif transport == "stdio":
            anyio.run(mcp_server.serve_stdio, episodes)
        else:
            mcp_server.serve_http(episodes, host, port)
    except KeyboardInterrupt:
        pass


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def verify(files: tuple[str, ...], output_format: str) -> None:
    """Run every task of a spec and print a per-task report (init, solution, checks).

    FILE may be a directory or a quoted pattern that finds one spec."""
    from envdsl.diagnostics.render_text import render_text
    from envdsl.pipeline import check_file

    bundle = _one_spec(files)
    file = bundle.path
    try:
        result = check_file(file, task_files=bundle.task_files)
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot read '{_failed_file(error, bundle)}': {_describe_read_error(error)}")
    reports = [report.as_json() for report in result.task_reports]
    if output_format == "json":
        from envdsl.diagnostics.render_json import render_json

        document = {"ok": result.ok, "tasks": reports, "diagnostics": render_json([result])}
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        sys.exit(EXIT_OK if result.ok else EXIT_ERRORS)
    from envdsl.terminal import printable

    if result.checked is not None and not reports and result.ok:
        click.echo(f"{file}: no tasks to verify")
    for report in reports:
        solution = {None: "no solution", True: "ok", False: "FAILS"}[report["solution_ok"]]
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
        for problem in report["problems"]:
            click.echo(f"    {printable(problem, keep_tabs=False)}")  # quotes spec strings
    if result.diagnostics:
        click.echo(render_text(result.diagnostics, result.sources))
    sys.exit(EXIT_OK if result.ok else EXIT_ERRORS)


# ---- explore ---------------------------------------------------------------------------------


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option(
    "--task", "task_name", help="Explore from this task (its init and its solution's states)."
)
@click.option(
    "--state",
    "state_file",
    type=click.Path(dir_okay=False),
    help="Explore from a JSON state instead of the tasks.",
)
@click.option("--max-calls", default=2000, show_default=True, type=click.IntRange(1, 10_000_000))
@click.option("--seed", default=0, show_default=True, type=int, help="Same seed, same report.")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option(
    "--trace-dir",
    type=click.Path(file_okay=False),
    help="Write each counterexample there as JSONL; the printed replay commands use them.",
)
@_text_or_json
def explore(
    files: tuple[str, ...],
    task_name: str | None,
    state_file: str | None,
    max_calls: int,
    seed: int,
    strict: bool,
    trace_dir: str | None,
    output_format: str,
) -> None:
    """Run generated calls against the environment and report what the spec gets wrong.

    Errors (exit 1): a runtime exception, nondeterminism, a tool that never succeeded.
    Warnings (exit 1 with --strict): calls rejected only by a declarative rule, with a shrunk
    counterexample `envdsl run` replays; require/let-else conditions that never failed or held;
    a tool that failed only on lookups by free text; runs that reach a task's success without
    being its solution (reward hacks).
    """
    from envdsl.explore import ExploreOptions
    from envdsl.explore import explore as run_exploration
    from envdsl.explore.report import render_json as explore_json
    from envdsl.explore.report import render_text as explore_text
    from envdsl.explore.report import render_timing

    if task_name and state_file:
        _fail_usage("give --task or --state, not both")
    bundle = _one_spec(files)
    file = bundle.path
    env_class = _load_class(bundle)
    if task_name is not None and task_name not in env_class.TASKS:
        _fail_usage(f"unknown task '{task_name}'; tasks: {', '.join(env_class.TASKS) or 'none'}")
    state: dict[str, object] | None = None
    if state_file:
        state = _read_state_file(state_file)
        if not isinstance(state, dict):
            _fail_usage(f"state '{state_file}' must be a JSON object")
    from envdsl.explore import ExploreError

    options = ExploreOptions(max_calls=max_calls, seed=seed, task=task_name, state=state)
    try:
        report = run_exploration(env_class, options)
    except ExploreError as error:
        _fail_usage(str(error))
    if trace_dir is not None:
        from envdsl.explore.report import write_traces

        try:
            write_traces(report, trace_dir)
        except OSError as error:
            _fail_usage(f"cannot write traces to '{trace_dir}': {error}")
    if output_format == "json":
        click.echo(json.dumps(explore_json(report, file, seed), indent=2, ensure_ascii=False))
    else:
        from envdsl.terminal import printable  # failure messages and conditions are spec text

        click.echo(_encodable(printable(explore_text(report, file, seed))))
        click.echo(render_timing(report))
    failed = bool(report.errors) or (strict and bool(report.warnings))
    sys.exit(EXIT_ERRORS if failed else EXIT_OK)


# ---- rollout ---------------------------------------------------------------------------------


@main.command()
@click.argument("specs", nargs=-1, required=True, metavar="SPEC|DIR|PATTERN...")
@click.option("--model", envvar="ENVDSL_MODEL", help="The agent model's name on the server.")
@_server_option
@click.option(
    "--tasks", "task_list", help="Comma-separated task names (each spec runs those it has)."
)
@click.option("--all", "all_tasks", is_flag=True, help="Every task of every spec.")
@click.option("-n", "--samples", default=1, show_default=True, type=click.IntRange(1, 10_000))
@click.option(
    "--concurrency",
    default=4,
    show_default=True,
    type=click.IntRange(1, 1024),
    help="Rollouts in flight at once.",
)
@click.option(
    "--processes",
    default=1,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Local backend: worker processes sharing --concurrency (1: threads in this one).",
)
@click.option("--max-turns", default=20, show_default=True, type=click.IntRange(1, 10_000))
@click.option(
    "--out",
    "out_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="JSONL of trajectory records; appended to, and a rerun skips what it holds.",
)
@click.option("--seed", type=int, help="Sent to the server; sample k gets SEED + k.")
@click.option(
    "--user-model",
    help="A simulated user (this model, same server) is given the instruction and talks to "
    "the agent, which sees only the user's messages.",
)
@_backend_option
@_text_or_json
def rollout(
    specs: Sequence[str],
    model: str | None,
    base_url: str,
    task_list: str | None,
    all_tasks: bool,
    samples: int,
    concurrency: int,
    processes: int,
    max_turns: int,
    out_file: str,
    temperature: float | None,
    seed: int | None,
    max_tokens: int | None,
    user_model: str | None,
    timeout: float,
    retries: int,
    backoff: float,
    backend: str,
    address: str | None,
    output_format: str,
) -> None:
    """Run an agent model over specs' tasks and record its trajectories and rewards.

    \b
      envdsl rollout examples/online_shop.env --all -n 4 --model M --out traj.jsonl
      envdsl rollout specs/ --tasks refund,cancel --model M --out traj.jsonl --backend ray

    Each record holds the OpenAI messages (tool calls and results, ready for SFT), each
    check's result, the reward and provenance (spec, task and checks hashes, model, sampling).
    A rerun skips the records already in --out; the summary counts only records of these
    specs and settings. Exits 0 when every rollout ran, 1 when the server failed some (rerun
    to retry them), 2 on usage errors.
    """
    import dataclasses

    from envdsl.backends import BackendError
    from envdsl.llm.client import ClientConfig
    from envdsl.rollout import runner
    from envdsl.rollout.records import Sampling

    if not model:
        _fail_usage("give --model (or set ENVDSL_MODEL): the name the server serves")
    if (task_list is None) == (not all_tasks):
        _fail_usage("give --tasks a,b or --all")
    chosen = None if all_tasks else [t.strip() for t in (task_list or "").split(",") if t.strip()]
    chosen_backend = _backend(backend, address, concurrency, processes)
    sources = tuple(_env_source(bundle) for bundle in _spec_bundles(specs))
    if chosen is not None:
        known = list(dict.fromkeys(task for source in sources for task in source.tasks))
        unknown = [task for task in chosen if task not in known] or ([] if chosen else [""])
        if unknown:
            _fail_usage(f"unknown task '{unknown[0]}'; tasks: {', '.join(known) or 'none'}")
    out_dir = os.path.dirname(out_file) or "."
    if not os.path.isdir(out_dir):
        _fail_usage(f"cannot write '{out_file}': no such directory '{out_dir}'")
    config = ClientConfig(
        base_url=base_url,
        model=model,
        timeout=timeout,
        retries=retries,
        backoff=backoff,
        temperature=temperature,
        max_tokens=max_tokens,
    )
    sampling = Sampling(model, temperature, max_tokens, seed, max_turns, user_model)
    user_config = dataclasses.replace(config, model=user_model) if user_model else None
    jobs = runner.plan(sources, chosen, samples, sampling)
    from envdsl.terminal import is_terminal

    try:
        report = runner.run(
            runner.Rollouts(sources, config, sampling, user_config),
            jobs,
            out_file,
            chosen_backend,
            progress=sys.stderr if is_terminal(sys.stderr) else None,
        )
    except BackendError as error:
        _fail_usage(str(error))
    except OSError as error:
        _fail_usage(f"cannot write '{out_file}': {error.strerror or error}")
    for warning in report.warnings:
        click.echo(f"envdsl: warning: {warning}", err=True)
    if output_format == "json":
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(report.as_text())
    if report.stopped is not None:
        click.echo(f"envdsl: error: {report.stopped}; stopped", err=True)
    elif report.errors:
        click.echo(
            f"envdsl: error: {report.errors} rollout(s) failed at the server (their records say "
            "why); run again to retry them",
            err=True,
        )
    sys.exit(EXIT_ERRORS if report.errors else EXIT_OK)


# ---- synth and grammar (LLM authoring) -------------------------------------------------------


@main.command()
@click.argument("words", nargs=-1, metavar="[TOPIC | tasks SPEC]")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Where the accepted spec goes."
)
@click.option(
    "-n",
    "count",
    default=40,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="synth tasks: how many tasks the task file should hold.",
)
@click.option(
    "--per-round",
    default=5,
    show_default=True,
    type=click.IntRange(1, 50),
    help="synth tasks: tasks asked for per round.",
)
@click.option(
    "--rounds",
    "max_rounds",
    type=click.IntRange(1),
    help="synth tasks: stop after this many " "rounds (default: twice what -n needs, plus one).",
)
@click.option(
    "--from-envscaler",
    "envscaler_file",
    type=click.Path(dir_okay=False),
    help="Write the spec for an EnvScaler environment record (a JSON list or object).",
)
@click.option("--index", default=0, show_default=True, type=int, help="Which record of the list.")
@click.option(
    "--batch",
    "batch_file",
    type=click.Path(dir_okay=False),
    help='JSONL of {"id", "topic"} objects or EnvScaler records.',
)
@click.option("--out-dir", type=click.Path(file_okay=False), help="Batch: where specs go.")
@click.option(
    "--log", "log_file", type=click.Path(dir_okay=False), help="JSONL log of every attempt."
)
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 256))
@click.option("--model", envvar="ENVDSL_MODEL", help="The model name the server knows.")
@_server_option
@click.option("--max-repairs", default=3, show_default=True, type=click.IntRange(0, 50))
@click.option(
    "--grammar",
    "use_grammar",
    is_flag=True,
    help="Guided decoding: send the GBNF grammar with each request (vLLM).",
)
@click.option(
    "--grammar-key",
    default="guided_grammar",
    show_default=True,
    help="The request field for --grammar (llama.cpp's server: grammar).",
)
@click.option("--no-tasks", is_flag=True, help="Do not ask for tasks when the spec has none.")
@_backend_option
def synth(
    words: tuple[str, ...],
    output: str | None,
    count: int,
    per_round: int,
    max_rounds: int | None,
    envscaler_file: str | None,
    index: int,
    batch_file: str | None,
    out_dir: str | None,
    log_file: str | None,
    concurrency: int,
    base_url: str,
    model: str | None,
    max_repairs: int,
    temperature: float | None,
    max_tokens: int | None,
    timeout: float,
    retries: int,
    backoff: float,
    use_grammar: bool,
    grammar_key: str,
    no_tasks: bool,
    backend: str,
    address: str | None,
) -> None:
    """Write a spec with an LLM, check it and repair it from the diagnostics.

    \b
      envdsl synth "a hotel booking desk" -o hotel.env --model M
      envdsl synth --from-envscaler envs.json --index 3 -o docs.env --model M
      envdsl synth --batch topics.jsonl --out-dir specs --log log.jsonl --model M
      envdsl synth tasks shop.env -n 40 -o shop.tasks.env --model M

    A spec is accepted when it has no errors; without a task, tasks are asked for and
    repaired the same way. Only accepted specs are written; a failed synth leaves its last
    attempt in <out>.failed.env. Exits 0 when the spec was accepted (a batch: when every
    request reached the server), 1 when it could not be made clean or the server failed,
    2 on usage errors. See docs/synth.md.

    `synth tasks` writes a task file of -n new verified tasks for a spec, in rounds steered by
    the coverage report (envdsl tasks --report); it resumes from the file it writes.
    """
    from pathlib import Path

    tasks_mode = len(words) >= 1 and words[0] == "tasks" and len(words) == 2
    if len(words) > 1 and not tasks_mode:
        _fail_usage("give one TOPIC (quoted), or `synth tasks SPEC`")
    topic = None if tasks_mode or not words else words[0]
    sources = [s for s in (topic, envscaler_file, batch_file) if s is not None]
    if tasks_mode:
        sources.append(words[1])
    if len(sources) != 1:
        _fail_usage("give exactly one of TOPIC, tasks SPEC, --from-envscaler FILE or --batch FILE")
    if not model:
        _fail_usage("give --model (or set ENVDSL_MODEL): the name the server serves")
    if batch_file is not None:
        if output is not None or out_dir is None or log_file is None:
            _fail_usage("--batch takes --out-dir DIR and --log FILE (not -o)")
    elif output is None:
        _fail_usage("give -o FILE for the spec")
    if backend == "ray" and batch_file is None:
        _fail_usage("--backend ray runs a --batch")
    chosen_backend = _backend(backend, address, concurrency)
    if use_grammar:
        from envdsl.llm.grammar import gbnf_grammar

        grammar: str | None = gbnf_grammar()
    else:
        grammar = None

    from envdsl.llm.client import ChatClient, ClientConfig, LLMError

    config = ClientConfig(
        base_url=base_url,
        model=model,
        timeout=timeout,
        retries=retries,
        backoff=backoff,
        temperature=temperature,
        max_tokens=max_tokens,
        grammar=grammar,
        grammar_key=grammar_key,
    )
    if batch_file is not None:
        assert out_dir is not None and log_file is not None
        _synth_batch(batch_file, out_dir, log_file, config, chosen_backend, max_repairs, no_tasks)
        return
    if tasks_mode:
        assert output is not None
        from envdsl.llm.tasks import SynthTasksOptions

        options = SynthTasksOptions(count, per_round, max_repairs, max_rounds)
        _synth_tasks(words[1], output, log_file, config, options)
        return

    from envdsl.llm import batch, loop, prompts

    assert output is not None
    if topic is not None:
        request = prompts.topic_prompt(topic)
    else:
        assert envscaler_file is not None
        request = prompts.envscaler_prompt(_envscaler_record(envscaler_file, index))
    target = Path(output)
    if not target.parent.is_dir():
        _fail_usage(f"cannot write '{output}': no such directory '{target.parent}'")
    log_handle = None
    if log_file is not None:
        try:
            log_handle = open(log_file, "a", encoding="utf-8")
        except OSError as error:
            _fail_usage(f"cannot write '{log_file}': {error.strerror or error}")

    def on_attempt(attempt: loop.Attempt) -> None:
        shown = {
            loop.CLEAN: "clean",
            loop.ERRORS: f"{attempt.errors} error{'s' if attempt.errors != 1 else ''}",
            loop.NO_SPEC: "no spec in the reply",
            loop.NO_TASKS: "no task",
        }[attempt.status]
        click.echo(f"{attempt.phase} round {attempt.round}: {shown}", err=True)
        if log_handle is not None:
            log_handle.write(json.dumps({"id": target.name, **attempt.log_record()}) + "\n")
            log_handle.flush()

    try:
        result = loop.synthesize(
            ChatClient(config),
            request,
            max_repairs=max_repairs,
            want_tasks=not no_tasks,
            path=target.name,
            on_attempt=on_attempt,
        )
    except LLMError as error:
        click.echo(f"envdsl: error: {error}", err=True)
        sys.exit(EXIT_ERRORS)
    finally:
        if log_handle is not None:
            log_handle.close()
    try:
        written = batch.write_outputs(result, target)
    except OSError as error:
        _fail_usage(f"cannot write '{output}': {error.strerror or error}")
    if log_file is not None:
        with open(log_file, "a", encoding="utf-8") as handle:
            record = batch.done_record(target.name, result, target if result.spec else written)
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    if result.status == loop.FAILED:
        where = f"; last attempt written to {written}" if written else ""
        click.echo(
            f"envdsl: error: could not make the spec clean: {result.message}{where}", err=True
        )
        sys.exit(EXIT_ERRORS)
    click.echo(f"wrote {target} ({result.message})")
    if result.status == loop.ACCEPTED_WITHOUT_TASKS and written:
        click.echo(f"envdsl: warning: the last tasks attempt is in {written}", err=True)


def _synth_tasks(
    spec: str, output: str, log_file: str | None, config: object, options: object
) -> None:
    from pathlib import Path

    from envdsl.llm.client import ChatClient, ClientConfig, LLMError
    from envdsl.llm.tasks import SynthTasksOptions, TaskSynthError, run_synth_tasks

    assert isinstance(config, ClientConfig) and isinstance(options, SynthTasksOptions)
    if not Path(spec).is_file():
        _fail_usage(f"cannot read '{spec}': no such file")
    if not Path(output).parent.is_dir():
        _fail_usage(f"cannot write '{output}': no such directory '{Path(output).parent}'")
    try:
        result = run_synth_tasks(
            ChatClient(config), Path(spec), Path(output), options, log_file, sys.stderr
        )
    except TaskSynthError as error:
        _fail_usage(str(error))
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot synthesize tasks: {_describe_read_error(error)}")
    except LLMError as error:
        click.echo(f"envdsl: error: {error}", err=True)
        sys.exit(EXIT_ERRORS)
    click.echo(f"wrote {output} ({result.message})")
    if len(result.accepted) < options.count:
        click.echo(
            f"envdsl: error: {len(result.accepted)} of {options.count} tasks accepted; run "
            "again to resume",
            err=True,
        )
        sys.exit(EXIT_ERRORS)


def _envscaler_record(path: str, index: int) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot read '{path}': {_describe_read_error(error)}")
    except json.JSONDecodeError as error:
        _fail_usage(f"'{path}' is not JSON: {error.msg} (line {error.lineno})")
    records = data if isinstance(data, list) else [data]
    if not -len(records) <= index < len(records):
        _fail_usage(f"--index {index} is out of range: '{path}' has {len(records)} record(s)")
    record = records[index]
    if not isinstance(record, dict) or "environment_summary" not in record:
        _fail_usage(f"record {index} of '{path}' is not an EnvScaler environment record")
    return record


def _synth_batch(
    batch_file: str,
    out_dir: str,
    log_file: str,
    config: object,
    backend: "Backend",
    max_repairs: int,
    no_tasks: bool,
) -> None:
    from pathlib import Path

    from envdsl.backends import BackendError
    from envdsl.llm.batch import BatchInputError, progress_stream, read_items, run_batch
    from envdsl.llm.client import ChatClient, ClientConfig

    assert isinstance(config, ClientConfig)
    try:
        items = read_items(batch_file)
    except (OSError, UnicodeDecodeError) as error:
        _fail_usage(f"cannot read '{batch_file}': {_describe_read_error(error)}")
    except BatchInputError as error:
        _fail_usage(str(error))
    try:
        summary = run_batch(
            items,
            ChatClient(config),
            Path(out_dir),
            Path(log_file),
            concurrency=backend.concurrency,
            max_repairs=max_repairs,
            want_tasks=not no_tasks,
            progress=progress_stream(),
            backend=backend,
        )
    except BackendError as error:
        _fail_usage(str(error))
    except OSError as error:
        _fail_usage(f"cannot write the batch outputs: {error}")
    click.echo(summary.text())
    if summary.errors:
        click.echo(
            f"envdsl: error: {summary.errors} request(s) failed at the server (see the log); "
            "run again to retry them",
            err=True,
        )
    sys.exit(EXIT_ERRORS if summary.errors else EXIT_OK)


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
