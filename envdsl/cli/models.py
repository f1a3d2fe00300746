"""Commands that talk to a model server: rollout and synth."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, TextIO

import click

from envdsl.cli.group import (
    EXIT_ERRORS,
    EXIT_OK,
    backend_option,
    fail_usage,
    main,
    make_backend,
    option_group,
    text_or_json,
)
from envdsl.cli.specs import env_source, spec_bundles, task_file_hint
from envdsl.util.spec_paths import describe_read_error

if TYPE_CHECKING:
    from envdsl.llm.envscaler_fit import EnvScalerFit
    from envdsl.util.backends import Backend


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


_server_option = option_group(_server_options)


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
@backend_option
@text_or_json
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

    from envdsl.llm.client import ClientConfig
    from envdsl.rollout import runner
    from envdsl.rollout.output import OutputBusy
    from envdsl.rollout.records import Sampling
    from envdsl.util.backends import BackendError
    from envdsl.util.terminal import printable

    if not model:
        fail_usage("give --model (or set ENVDSL_MODEL): the name the server serves")
    if (task_list is None) == (not all_tasks):
        fail_usage("give --tasks a,b or --all")
    chosen = None if all_tasks else [t.strip() for t in (task_list or "").split(",") if t.strip()]
    chosen_backend = make_backend(backend, address, concurrency, processes)
    bundles = spec_bundles(specs)
    sources = tuple(env_source(bundle) for bundle in bundles)
    if chosen is not None:
        known = list(dict.fromkeys(task for source in sources for task in source.tasks))
        unknown = [task for task in chosen if task not in known] or ([] if chosen else [""])
        invalid = {name: why for source in sources for name, why in source.invalid_tasks.items()}
        if unknown and unknown[0] in invalid:
            click.echo(f"envdsl: error: task '{unknown[0]}' has errors: {invalid[unknown[0]]}",
                       err=True)  # fmt: skip
            sys.exit(EXIT_ERRORS)
        if unknown:
            hint = "".join(task_file_hint(bundle, unknown[0]) for bundle in bundles)
            fail_usage(f"unknown task '{unknown[0]}'; tasks: {', '.join(known) or 'none'}{hint}")
    writable_output(out_file)
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
    from envdsl.util.terminal import is_terminal

    said: list[str] = []

    def warn(warning: str) -> None:
        said.append(warning)
        click.echo(f"envdsl: warning: {printable(warning)}", err=True)

    try:
        report = runner.run(
            runner.Rollouts(sources, config, sampling, user_config),
            jobs,
            out_file,
            chosen_backend,
            progress=sys.stderr if is_terminal(sys.stderr) else None,
            on_warning=warn,
        )
    except (BackendError, OutputBusy) as error:
        fail_usage(str(error))
    except OSError as error:
        fail_usage(f"cannot write '{out_file}': {error.strerror or error}")
    for warning in report.warnings[len(said) :]:
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


@main.command()
@click.argument("words", nargs=-1, metavar="[TOPIC | tasks SPEC | topics [SEED...]]")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Where the accepted spec goes."
)
@click.option(
    "-n",
    "count",
    default=40,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="synth tasks / topics: how many tasks (topics) the output should hold.",
)
@click.option(
    "--per-round",
    default=5,
    show_default=True,
    type=click.IntRange(1, 50),
    help="synth tasks / topics: tasks (topics) asked for per round.",
)
@click.option(
    "--from-tasks",
    "descriptions_file",
    type=click.Path(dir_okay=False),
    help="synth topics: mine topics from task descriptions (a line each, or JSONL).",
)
@click.option(
    "--rounds",
    "max_rounds",
    type=click.IntRange(1),
    help="synth tasks / topics: stop after this many rounds (default: twice what -n needs, "
    "plus one).",
)
@click.option(
    "--from-envscaler",
    "envscaler_file",
    type=click.Path(dir_okay=False),
    help="Write the spec for an EnvScaler environment record (a JSON list or object).",
)
@click.option("--index", default=0, show_default=True, type=int, help="Which record of the list.")
@click.option(
    "--scenarios",
    "scenarios_file",
    type=click.Path(dir_okay=False),
    help="With --from-envscaler: EnvScaler scenario records (JSON or JSONL) whose start "
    "states the spec must load.",
)
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
    help="Guided decoding: send the GBNF grammar with each request (vLLM, llama.cpp).",
)
@click.option(
    "--grammar-key",
    default="structured_outputs.grammar",
    show_default=True,
    help="Where --grammar goes in the request body, a dotted path: vLLM 0.10.2 and later "
    "structured_outputs.grammar; llama.cpp's server grammar; vLLM before 0.12 guided_grammar.",
)
@click.option("--no-tasks", is_flag=True, help="Do not ask for tasks when the spec has none.")
@backend_option
def synth(
    words: tuple[str, ...],
    output: str | None,
    count: int,
    per_round: int,
    descriptions_file: str | None,
    max_rounds: int | None,
    envscaler_file: str | None,
    index: int,
    scenarios_file: str | None,
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
      envdsl synth --from-envscaler envs.json --scenarios scen.json -o docs.env --model M
      envdsl synth --batch topics.jsonl --out-dir specs --log log.jsonl --model M
      envdsl synth tasks shop.env -n 40 -o shop.tasks.env --model M
      envdsl synth topics retail healthcare -n 50 -o topics.jsonl --model M

    A spec is accepted when it has no errors; without a task, tasks are asked for and
    repaired the same way. Only accepted specs are written; a failed synth leaves its last
    attempt in <out>.failed.env. Exits 0 when the spec was accepted (a batch: when every
    request reached the server), 1 when it could not be made clean or the server failed,
    2 on usage errors. See docs/synth.md.

    `synth tasks` writes a task file of -n new verified tasks for a spec, in rounds steered by
    the coverage report (envdsl tasks --report); it resumes from the file it writes.

    `synth topics` writes -n de-duplicated environment topics (JSONL, the input of --batch)
    from seed domains or, with --from-tasks, from task descriptions; it resumes too.
    """

    if words and words[0] == "topics":
        if output is None or not model:
            fail_usage("synth topics takes -o FILE and --model")
        if use_grammar:  # the grammar is the spec language's; topics come as JSON
            fail_usage("--grammar is for specs, not `synth topics`")
        from envdsl.llm.client import ClientConfig

        topics_config = ClientConfig(
            base_url=base_url,
            model=model,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        _synth_topics(
            words[1:],
            descriptions_file,
            output,
            log_file,
            topics_config,
            count,
            per_round,
            max_rounds,
        )
        return
    if descriptions_file is not None:
        fail_usage("--from-tasks is for `synth topics`")
    tasks_mode = len(words) >= 1 and words[0] == "tasks" and len(words) == 2
    if len(words) > 1 and not tasks_mode:
        fail_usage("give one TOPIC (quoted), or `synth tasks SPEC`")
    topic = None if tasks_mode or not words else words[0]
    sources = [s for s in (topic, envscaler_file, batch_file) if s is not None]
    if tasks_mode:
        sources.append(words[1])
    if len(sources) != 1:
        fail_usage("give exactly one of TOPIC, tasks SPEC, --from-envscaler FILE or --batch FILE")
    if not model:
        fail_usage("give --model (or set ENVDSL_MODEL): the name the server serves")
    if batch_file is not None:
        if output is not None or out_dir is None or log_file is None:
            fail_usage("--batch takes --out-dir DIR and --log FILE (not -o)")
    elif output is None:
        fail_usage("give -o FILE for the spec")
    if scenarios_file is not None and envscaler_file is None:
        fail_usage("--scenarios goes with --from-envscaler FILE")
    if backend == "ray" and batch_file is None:
        fail_usage("--backend ray runs a --batch")
    chosen_backend = make_backend(backend, address, concurrency)
    from envdsl.llm.client import ChatClient, ClientConfig, LLMError, grammar_key_fields

    try:
        grammar_key_fields(grammar_key)
    except ValueError as error:
        fail_usage(str(error))
    if use_grammar:
        from envdsl.llm.grammar import gbnf_grammar

        grammar: str | None = gbnf_grammar()
    else:
        grammar = None
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
        from envdsl.llm.synth_tasks import SynthTasksOptions

        options = SynthTasksOptions(count, per_round, max_repairs, max_rounds)
        _synth_tasks(words[1], output, log_file, config, options)
        return

    from envdsl.llm import batch, loop, prompts

    assert output is not None
    fit = None
    if topic is not None:
        request = prompts.topic_prompt(topic)
    else:
        assert envscaler_file is not None
        request, fit = _envscaler_request(envscaler_file, index, scenarios_file)
    target = writable_output(output)
    log_handle = open_log(log_file)

    def on_attempt(attempt: loop.Attempt) -> None:
        shown = {
            loop.CLEAN: "clean",
            loop.ERRORS: f"{attempt.errors} error{'s' if attempt.errors != 1 else ''}",
            loop.NO_SPEC: "no spec in the reply",
            loop.NO_TASKS: "no task",
            loop.DIFFERS: f"clean, but {len(attempt.problems)} difference"
            f"{'s' if len(attempt.problems) != 1 else ''} from the original",
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
            vet=fit,
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
        fail_usage(f"cannot write '{output}': {error.strerror or error}")
    if log_file is not None:
        with open(log_file, "a", encoding="utf-8") as handle:
            record = batch.done_record(target.name, result, target if result.spec else written)
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    if result.status == loop.FAILED:
        where = f"; last attempt written to {written}" if written else ""
        click.echo(
            f"envdsl: error: could not make the spec clean: {result.message}{where}", err=True
        )
        _echo_start_states(fit, result.last_spec, err=True)
        sys.exit(EXIT_ERRORS)
    click.echo(f"wrote {target} ({result.message})")
    _echo_start_states(fit, result.spec, err=False)
    if result.status == loop.ACCEPTED_WITHOUT_TASKS and written:
        click.echo(f"envdsl: warning: the last tasks attempt is in {written}", err=True)


def _synth_tasks(
    spec: str, output: str, log_file: str | None, config: object, options: object
) -> None:
    from envdsl.llm.client import ChatClient, ClientConfig, LLMError
    from envdsl.llm.synth_tasks import SynthTasksOptions, TaskSynthError, run_synth_tasks

    assert isinstance(config, ClientConfig) and isinstance(options, SynthTasksOptions)
    if not Path(spec).is_file():
        fail_usage(f"cannot read '{spec}': no such file")
    writable_output(output)
    try:
        result = run_synth_tasks(
            ChatClient(config), Path(spec), Path(output), options, log_file, sys.stderr
        )
    except TaskSynthError as error:
        fail_usage(str(error))
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot synthesize tasks: {describe_read_error(error)}")
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


def _envscaler_request(
    path: str, index: int, scenarios_file: str | None
) -> tuple[str, "EnvScalerFit"]:
    """The first message for an EnvScaler record and the vet of its specs: its tools, and the
    start states of its scenarios when --scenarios gives them."""
    from envdsl.llm import prompts
    from envdsl.llm.envscaler import ScenarioError, read_scenarios, record_tools, scenarios_of
    from envdsl.llm.envscaler_fit import EnvScalerFit

    record = _envscaler_record(path, index)
    scenarios = []
    if scenarios_file is not None:
        try:
            scenarios = scenarios_of(record, read_scenarios(scenarios_file))
        except (OSError, UnicodeDecodeError) as error:
            fail_usage(f"cannot read '{scenarios_file}': {describe_read_error(error)}")
        except ScenarioError as error:
            fail_usage(str(error))
        if not scenarios:
            fail_usage(f"'{scenarios_file}' has no scenario of {record.get('env_id')}")
    tools = record_tools(record)
    request = prompts.envscaler_prompt(record, tools, [s.init_config for s in scenarios])
    return request, EnvScalerFit(tools, scenarios)


def _echo_start_states(fit: "EnvScalerFit | None", spec: str | None, *, err: bool) -> None:
    """One line per scenario of --scenarios: whether its start state loads into the spec (a
    spec with errors was never tried: nothing is said)."""
    states = fit.states_of(spec) if fit is not None else []
    if not states:
        return
    loaded = sum(1 for _, message in states if message is None)
    click.echo(f"start states: {loaded} of {len(states)} load", err=err)
    for scenario_id, message in states:
        click.echo(f"  scenario {scenario_id}: {message or 'loads'}", err=err)


def writable_output(output: str) -> Path:
    """The path of an output file, after checking that its directory exists."""
    target = Path(output)
    if not target.parent.is_dir():
        fail_usage(f"cannot write '{output}': no such directory '{target.parent}'")
    return target


def open_log(log_file: str | None) -> TextIO | None:
    """A `--log` file opened for appending (None without one); a file that cannot be
    written is a usage error."""
    if log_file is None:
        return None
    try:
        return open(log_file, "a", encoding="utf-8")
    except OSError as error:
        fail_usage(f"cannot write '{log_file}': {error.strerror or error}")


def _synth_topics(
    seeds: Sequence[str],
    descriptions_file: str | None,
    output: str,
    log_file: str | None,
    config: object,
    count: int,
    per_round: int,
    max_rounds: int | None,
) -> None:
    from envdsl.llm.client import ChatClient, ClientConfig, LLMError
    from envdsl.llm.topics import (
        TopicRound,
        TopicsInputError,
        TopicsRequest,
        mine_topics,
        read_descriptions,
    )

    assert isinstance(config, ClientConfig)
    if bool(seeds) == (descriptions_file is not None):
        fail_usage("synth topics takes seed domains (words) or --from-tasks FILE, one of them")
    try:
        descriptions = read_descriptions(descriptions_file) if descriptions_file else []
        request = TopicsRequest(seeds=tuple(seeds), descriptions=tuple(descriptions))
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read '{descriptions_file}': {describe_read_error(error)}")
    except TopicsInputError as error:
        fail_usage(str(error))
    target = writable_output(output)
    log_handle = open_log(log_file)

    def on_round(outcome: TopicRound) -> None:
        click.echo(
            f"topics round {outcome.round} ({outcome.source}): {outcome.kept} kept, "
            f"{outcome.duplicates} duplicates, {outcome.invalid} invalid",
            err=True,
        )
        if log_handle is not None:
            log_handle.write(json.dumps(outcome.log_record(), ensure_ascii=False) + "\n")
            log_handle.flush()

    try:
        result = mine_topics(
            ChatClient(config),
            request,
            target,
            count=count,
            per_round=per_round,
            max_rounds=max_rounds,
            on_round=on_round,
        )
    except OSError as error:
        fail_usage(f"cannot write '{output}': {error.strerror or error}")
    except LLMError as error:
        click.echo(f"envdsl: error: {error}", err=True)
        sys.exit(EXIT_ERRORS)
    finally:
        if log_handle is not None:
            log_handle.close()
    click.echo(f"wrote {target} ({result.message})")
    if len(result.kept) < count:
        click.echo(
            f"envdsl: error: {len(result.kept)} of {count} topics kept; run again to resume",
            err=True,
        )
        sys.exit(EXIT_ERRORS)


def _envscaler_record(path: str, index: int) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read '{path}': {describe_read_error(error)}")
    except json.JSONDecodeError as error:
        fail_usage(f"'{path}' is not JSON: {error.msg} (line {error.lineno})")
    records = data if isinstance(data, list) else [data]
    if not -len(records) <= index < len(records):
        fail_usage(f"--index {index} is out of range: '{path}' has {len(records)} record(s)")
    record = records[index]
    if not isinstance(record, dict) or "environment_summary" not in record:
        fail_usage(f"record {index} of '{path}' is not an EnvScaler environment record")
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
    from envdsl.llm.batch import BatchInputError, progress_stream, read_items, run_batch
    from envdsl.llm.client import ChatClient, ClientConfig
    from envdsl.util.backends import BackendError

    assert isinstance(config, ClientConfig)
    try:
        items = read_items(batch_file)
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read '{batch_file}': {describe_read_error(error)}")
    except BatchInputError as error:
        fail_usage(str(error))
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
        fail_usage(str(error))
    except OSError as error:
        fail_usage(f"cannot write the batch outputs: {error}")
    click.echo(summary.text())
    from envdsl.llm.corpus import corpus_report

    click.echo(corpus_report(Path(out_dir), Path(log_file)).text())
    if summary.errors:
        click.echo(
            f"envdsl: error: {summary.errors} request(s) failed at the server (see the log); "
            "run again to retry them",
            err=True,
        )
    sys.exit(EXIT_ERRORS if summary.errors else EXIT_OK)


@main.command("import-envscaler")
@click.argument("scenarios_file", metavar="SCENARIOS")
@click.option("--spec", "spec_file", help="The migrated spec the tasks are for.")
@click.option("-o", "--output", help="The task file to write (in the spec's directory or above).")
@click.option("--env-id", help="Only the scenarios of this env_id (default: all in the file).")
@click.option("--model", envvar="ENVDSL_MODEL", help="The model name the server knows.")
@_server_option
@click.option("--max-repairs", default=2, show_default=True, type=click.IntRange(0, 50))
@click.option(
    "--log", "log_file", type=click.Path(dir_okay=False), help="JSONL log of every attempt."
)
def import_envscaler(
    scenarios_file: str,
    spec_file: str | None,
    output: str | None,
    env_id: str | None,
    model: str | None,
    base_url: str,
    temperature: float | None,
    max_tokens: int | None,
    timeout: float,
    retries: int,
    backoff: float,
    max_repairs: int,
    log_file: str | None,
) -> None:
    """Turn EnvScaler scenario records into a verified task file for a migrated spec.

    \b
      envdsl import-envscaler scenarios.json --spec ocr.env -o ocr.tasks.env --model M

    Each scenario becomes a task: its start state (init_config) goes to
    <output>.states/<task>.json, which the task's `init from` reads; its instruction is the
    task's docstring; the model writes the solution and translates the Python check
    functions into checks. Each task is verified and repaired like `synth tasks`; scenarios
    that cannot be made clean are listed with the reason. A rerun resumes from the task file.
    Exits 0 when every scenario is a task, 1 when some are not or the server failed, 2 on
    usage errors. See docs/synth.md.
    """

    from envdsl.llm.client import ChatClient, ClientConfig, LLMError
    from envdsl.llm.envscaler import ScenarioError, read_scenarios
    from envdsl.llm.import_scenarios import import_scenarios
    from envdsl.llm.synth_tasks import TaskAttempt, TaskSynthError

    if spec_file is None or output is None:
        fail_usage("give --spec SPEC and -o TASK_FILE")
    if not model:
        fail_usage("give --model (or set ENVDSL_MODEL): the name the server serves")
    if not Path(spec_file).is_file():
        fail_usage(f"cannot read '{spec_file}': no such file")
    writable_output(output)
    try:
        scenarios = read_scenarios(scenarios_file)
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read '{scenarios_file}': {describe_read_error(error)}")
    except ScenarioError as error:
        fail_usage(str(error))
    if env_id is not None:
        scenarios = [s for s in scenarios if s.env_id == env_id]
        if not scenarios:
            fail_usage(f"'{scenarios_file}' has no scenario of {env_id}")
    config = ClientConfig(
        base_url=base_url,
        model=model,
        timeout=timeout,
        retries=retries,
        backoff=backoff,
        temperature=temperature,
        max_tokens=max_tokens,
    )
    log = open_log(log_file)

    def on_attempt(attempt: TaskAttempt) -> None:
        if log is not None:
            log.write(json.dumps({"id": Path(output).name, **attempt.log_record()}) + "\n")
            log.flush()

    try:
        result = import_scenarios(
            ChatClient(config),
            Path(spec_file),
            Path(output),
            scenarios,
            max_repairs=max_repairs,
            on_attempt=on_attempt,
        )
    except TaskSynthError as error:
        fail_usage(str(error))
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot import the scenarios: {describe_read_error(error)}")
    except LLMError as error:
        click.echo(f"envdsl: error: {error}", err=True)
        sys.exit(EXIT_ERRORS)
    finally:
        if log is not None:
            log.close()
    for outcome in result.outcomes:
        verdict = (
            "resumed" if outcome.resumed else "accepted" if outcome.accepted else "not made clean"
        )
        reason = f": {outcome.reason}" if outcome.reason else ""
        click.echo(f"scenario {outcome.scenario} -> {outcome.task}: {verdict}{reason}")
    if Path(output).exists():
        click.echo(f"wrote {output} ({result.message})")
    else:
        click.echo(f"nothing written to {output} ({result.message})")
    left = len(result.outcomes) - result.accepted
    if left:
        click.echo(
            f"envdsl: error: {left} of {len(result.outcomes)} scenarios could not be made clean "
            "(listed above); run again to retry them",
            err=True,
        )
        sys.exit(EXIT_ERRORS)
