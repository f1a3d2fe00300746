"""Commands that run a compiled environment: run, tasks, state, serve, explore."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import click

from envdsl.cli.group import (
    EXIT_ERRORS,
    EXIT_OK,
    encodable,
    fail_usage,
    main,
    one_line,
    text_or_json,
)
from envdsl.cli.specs import (
    compile_or_exit,
    env_source,
    load_class,
    one_spec,
    read_state_file,
    require_task,
    spec_bundles,
)
from envdsl.util.spec_paths import describe_read_error

if TYPE_CHECKING:
    from envdsl.rollout.plan import EnvSource
    from envdsl.rollout.replay import Replay
    from envdsl.runtime import Environment
    from envdsl.tasks.task_files import Bundle


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
        fail_usage("--rollout replays a record's task, calls and answer: give no --calls, "
                    "--task, --state or --answer")  # fmt: skip
    if task_name and state_file:
        fail_usage("give --task or --state, not both")
    if answer and not task_name:
        fail_usage("--answer is graded by a task's checks: give --task too")
    replay = None
    if rollout_file is None and calls_file is None:
        fail_usage("give --calls FILE (or --rollout FILE --index N)")
    bundle = one_spec(files)
    if rollout_file is not None:
        source = env_source(bundle)
        env_class = source.environment_class()
        replay = _load_replay(rollout_file, index, source)
        task_name, answer, calls = replay.task, replay.answer, replay.calls
    else:
        env_class = load_class(bundle, valid_tasks=True)
    if task_name is not None:
        require_task(env_class, task_name, bundle)
    env = env_class()
    try:
        if state_file:
            with open(state_file, encoding="utf-8") as handle:
                text = handle.read()
            try:
                data = json.loads(text)
            except (ValueError, RecursionError) as error:  # bad JSON, too deep, huge numbers
                fail_usage(f"cannot read state '{state_file}': {one_line(error)}")
            env.reset(state=data)
        else:
            env.reset(task=task_name)
    except KeyError:
        fail_usage(f"unknown task '{task_name}'; tasks: {', '.join(env_class.TASKS) or 'none'}")
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read state '{state_file}': {describe_read_error(error)}")
    except InvalidState as error:
        fail_usage(f"invalid initial state: {one_line(error)}")
    if calls_file is not None:
        calls = _read_calls(calls_file)
    from envdsl.util.terminal import printable  # tool names, arguments, results: agent/spec text

    results = []
    for index, (name, arguments) in enumerate(calls, start=1):
        outcome = env.call(name, arguments)
        results.append({"name": name, "arguments": arguments, "result": outcome})
        if output_format == "text":
            shown = json.dumps(arguments, ensure_ascii=False)
            line = f"[{index}] {name}({shown}) -> {json.dumps(outcome, ensure_ascii=False)}"
            click.echo(encodable(printable(line, keep_tabs=False)))
    evaluation = env.evaluate(answer=answer) if task_name else None
    failed = (evaluation is not None and not evaluation["success"]) or (
        evaluation is None and not all(r["result"]["success"] for r in results)
    )
    # --strict: another task's errors count too (without it they are reported, not fatal)
    failed = failed or bool(env_class.INVALID_TASKS)
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
        click.echo(encodable(json.dumps(document, indent=2, ensure_ascii=False)))
        sys.exit(exit_code)
    click.echo(f"state hash: {env.state_hash()}")
    if evaluation is not None:
        for check_result in evaluation["checks"]:
            mark = "pass" if check_result["passed"] else "FAIL"
            reason = f" ({check_result['reason']})" if "reason" in check_result else ""
            kind = " [guard]" if check_result.get("kind") == "guard" else ""
            shown_check = printable(f"{check_result['check']}{reason}{kind}", keep_tabs=False)
            click.echo(encodable(f"  {mark}  {shown_check}"))
        frame = evaluation["frame"]
        if frame["checked"]:
            held = frame["held"]
            shown_frame = "held" if held else printable(frame["violation"], keep_tabs=False)
            click.echo(encodable(f"  {'pass' if held else 'FAIL'}  frame: {shown_frame}"))
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
    from envdsl.util.recorded_calls import CallParseError, parse_calls

    try:
        if calls_file == "-":
            return parse_calls(sys.stdin.read())
        with open(calls_file, encoding="utf-8") as handle:
            return parse_calls(handle.read())
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read '{calls_file}': {describe_read_error(error)}")
    except CallParseError as error:
        fail_usage(one_line(error))


def _load_replay(rollout_file: str, index: int, source: "EnvSource") -> "Replay":
    from envdsl.rollout.replay import ReplayError, load_replay

    if not os.path.exists(rollout_file):
        fail_usage(f"cannot read '{rollout_file}': no such file")
    try:
        return load_replay(rollout_file, index, source)
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read '{rollout_file}': {describe_read_error(error)}")
    except ReplayError as error:
        fail_usage(str(error))


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "jsonl"]),
    default="text",
    show_default=True,
    help="jsonl: one dataset record per task of every spec given "
    "(datasets.load_dataset('json', ...) reads it).",
)
@click.option("--report", is_flag=True, help="Print the task set's coverage report instead.")
def tasks(files: tuple[str, ...], output_format: str, report: bool) -> None:
    """List a spec's tasks with their instructions (JSON for rollout harnesses).

    With task files (or a task file alone), their tasks are listed after the spec's own.
    --format jsonl writes one dataset of the tasks of every spec named (files, directories,
    patterns, as `check` takes them; each spec with the task files found for it): a record
    per task, its env named (README: Datasets).
    --report: the coverage of the task set instead (tools, solution lengths, read/write mix,
    tables and fields, rules); text or --format json."""
    if output_format == "jsonl" and not report:
        _dataset(files)
        return
    bundle = one_spec(files)
    if report:
        _coverage_report(bundle, output_format)
        return
    env_class = load_class(bundle)
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
    from envdsl.util.terminal import printable  # spec strings: no escape sequence reaches the tty

    for item in listing:
        click.echo(f"{item['name']}:")
        instruction = printable(str(item["instruction"])) or "(no instruction)"
        click.echo(textwrap.indent(instruction, "    "))
        for text in item["checks"]:
            click.echo(f"    - check: {printable(str(text), keep_tabs=False)}")


def _dataset(files: tuple[str, ...]) -> None:
    """The records of every task of every spec: all specs are compiled before the first
    record is written, so a spec with errors (reported as `check` does, exit 1) leaves no
    partial dataset behind."""
    from envdsl.adapters.dataset_records import task_records
    from envdsl.pipeline import read_sources

    loaded = []
    for bundle in spec_bundles(files):
        env_class = load_class(bundle)
        texts = [source.text for source in read_sources(bundle.path, bundle.task_files)]
        loaded.append((bundle, env_class, "\0".join(texts)))
    for bundle, env_class, text in loaded:
        for record in task_records(env_class, text, bundle.path, bundle.task_files):
            click.echo(encodable(json.dumps(record, ensure_ascii=False)))


def _coverage_report(bundle: "Bundle", output_format: str) -> None:
    from envdsl.pipeline import CompileResult
    from envdsl.tasks.coverage import coverage_report, render_text

    if output_format == "jsonl":
        fail_usage("--report prints text or --format json")
    result = compile_or_exit(bundle, formatted=False)
    assert isinstance(result, CompileResult)
    report = coverage_report(result)
    if output_format == "json":
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(report))


def _start_state(
    env_class: "type[Environment]",
    bundle: "Bundle",
    task_name: str | None,
    state_file: str | None,
) -> "dict[str, object] | None":
    """Check --task / --state as a usage error (exit 2) and return the JSON state, if any."""
    from envdsl.runtime import InvalidState

    if task_name and state_file:
        fail_usage("give --task or --state, not both")
    if task_name is not None:
        require_task(env_class, task_name, bundle)
    state: dict[str, object] | None = None
    if state_file:
        state = read_state_file(state_file)
        try:
            env_class().reset(state=state)
        except InvalidState as error:
            fail_usage(f"invalid initial state: {one_line(error)}")
    return state


@main.command()
@click.argument("files", nargs=-1, required=True, metavar="SPEC [TASK_FILE]...")
@click.option("--task", "task_name", required=True, help="The task whose initial state to print.")
def state(files: tuple[str, ...], task_name: str) -> None:
    """Print a task's initial state as canonical JSON."""
    bundle = one_spec(files)
    env_class = load_class(bundle, valid_tasks=True)
    _start_state(env_class, bundle, task_name, None)
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
    from envdsl.serve.sessions import Sessions

    try:
        if transport == "openenv":
            from envdsl.serve import openenv as openenv_server
        else:
            import anyio

            from envdsl.serve import mcp as mcp_server
    except ImportError as error:
        extra = "openenv" if transport == "openenv" else "mcp"
        fail_usage(f"envdsl serve --transport {transport} needs the [{extra}] extra ({error}): "
                    f"pip install 'envdsl[{extra}]'")  # fmt: skip
    bundle = one_spec(files)
    env_class = load_class(bundle, valid_tasks=True)
    sessions = Sessions(
        env_class, task=task_name, state=_start_state(env_class, bundle, task_name, state_file)
    )
    try:
        if transport == "openenv":
            openenv_server.serve_openenv(sessions, host, port)
        elif transport == "stdio":
            anyio.run(mcp_server.serve_stdio, sessions)
        else:
            mcp_server.serve_http(sessions, host, port)
    except KeyboardInterrupt:
        pass


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
@text_or_json
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
        fail_usage("give --task or --state, not both")
    bundle = one_spec(files)
    file = bundle.path
    env_class = load_class(bundle)
    if task_name is not None:
        require_task(env_class, task_name, bundle)
    state: dict[str, object] | None = None
    if state_file:
        state = read_state_file(state_file)
        if not isinstance(state, dict):
            fail_usage(f"state '{state_file}' must be a JSON object")
    from envdsl.explore import ExploreError

    options = ExploreOptions(max_calls=max_calls, seed=seed, task=task_name, state=state)
    try:
        report = run_exploration(env_class, options)
    except ExploreError as error:
        fail_usage(str(error))
    if trace_dir is not None:
        from envdsl.explore.report import write_traces

        try:
            write_traces(report, trace_dir)
        except OSError as error:
            fail_usage(f"cannot write traces to '{trace_dir}': {error}")
    if output_format == "json":
        click.echo(json.dumps(explore_json(report, file, seed), indent=2, ensure_ascii=False))
    else:
        from envdsl.util.terminal import printable  # failure messages and conditions are spec text

        click.echo(encodable(printable(explore_text(report, file, seed))))
        click.echo(render_timing(report))
    failed = bool(report.errors) or (strict and bool(report.warnings))
    sys.exit(EXIT_ERRORS if failed else EXIT_OK)
