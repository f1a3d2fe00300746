"""Migrating an EnvScaler environment with its scenarios (issue 26, points 4 and 5).

The environment is EnvScaler's real OCR processing service record (env_112_sft of
/work/shared/reference/envscaler/envs_sample17.json); its scenarios are
tests/envscaler/ocr_scenarios.json, in the layout of EnvScaler's ScenGenerator (see the README
there). The model is tests/chat_server.py's scripted server; its specs are the repository's port
of that environment (examples/ocr_processing_service.env, one task kept), as written wrong and
then repaired.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_synth import ChatServer, fenced, server  # noqa: F401 - the fixture

from envdsl.cli import main
from envdsl.llm.batch import request_for
from envdsl.llm.envscaler import read_scenarios, record_tools, scenarios_of, tool_differences
from envdsl.llm.envscaler_states import convert_state, environment_of_checked, load_failures
from envdsl.llm.import_scenarios import pin_task
from envdsl.llm.loop import check_spec
from envdsl.llm.prompts import envscaler_prompt
from envdsl.pipeline import check_file

HERE = Path(__file__).parent
ENVSCALER = Path("/work/shared/reference/envscaler/envs_sample17.json")
SCENARIOS = HERE / "envscaler" / "ocr_scenarios.json"
OCR_INDEX = 6  # env_112_sft
RECORD = json.loads(ENVSCALER.read_text("utf-8"))[OCR_INDEX]
NOW = '    now: datetime "the current time; stamps submissions and failures, drives purging"\n'


def _port() -> str:
    """The example port with its first task only (the others cost checking time)."""
    text = (HERE.parent / "examples" / "ocr_processing_service.env").read_text("utf-8")
    head, tasks = text.split("  # ---- tasks", 1)
    first = tasks.split("  task retry_crashed_scan", 1)[0].split("\n", 1)[1]
    return head + first.rstrip() + "\n}\n"


PORT = _port()  # `now` has no default: EnvScaler's start states do not set it
MIGRATED = PORT.replace(NOW, NOW.rstrip("\n") + ' = datetime("2024-06-12T00:00:00Z")\n')
RENAMED = PORT.replace("purge_expired_results", "purge_results").replace(
    "original_request_id", "request_id"
)


def env_of(spec: str) -> Any:
    checked = check_spec(spec, "ocr.env")
    assert checked.ok, checked.document
    return environment_of_checked(checked.checked)


# ---- the record's tools and the prompt ------------------------------------------------------


def test_record_tools_keep_names_parameters_and_requiredness() -> None:
    tools = {tool.name: tool for tool in record_tools(RECORD)}
    assert len(tools) == 14 and RECORD["env_id"] == "env_112_sft"
    complete = tools["complete_ocr_request"]
    assert complete.signature() == (
        "complete_ocr_request(request_id: string, extracted_text: string, "
        "confidence_scores: array, processing_timestamp: number)"
    )
    assert tools["list_queued_requests"].params == ()
    assert "Args:" not in complete.description and complete.description.startswith("Mark")


def test_the_prompt_shows_the_tools_and_a_start_state() -> None:
    scenarios = read_scenarios(str(SCENARIOS))
    states = [s.init_config for s in scenarios]
    text = envscaler_prompt(RECORD, record_tools(RECORD), states)
    assert "- retry_ocr_request(original_request_id: string): Re-submit" in text
    assert "exactly these names and parameter" in text
    assert '"queued_request_ids"' in text and '"req_0"' in text  # the first start state
    assert '"req_2"' in text and '"req_5"' not in text  # the second; not the third
    plain = envscaler_prompt(RECORD)
    assert "retry_ocr_request(original" not in plain and "Keep the tool names." in plain
    # a batch of EnvScaler records asks for the tools too (it does not compare them)
    assert "- retry_ocr_request(original_request_id: string)" in request_for(RECORD)


def test_tool_differences_name_missing_and_renamed_tools_and_parameters() -> None:
    tools = record_tools(RECORD)
    assert tool_differences(tools, env_of(MIGRATED)) == []
    problems = tool_differences(tools, env_of(RENAMED))
    assert problems == [
        "tool `purge_expired_results` is missing (the original's purge_expired_results()); "
        "the spec has `purge_results`: rename it to `purge_expired_results`",
        "tool `retry_ocr_request` has no parameter `original_request_id` (the original's "
        "retry_ocr_request(original_request_id: string)); rename `request_id` to "
        "`original_request_id`",
    ]
    # a parameter the original's callers never send, and a tool with no look-alike
    extra = MIGRATED.replace(
        "  query check_request_existence(request_id: str",
        "  query check_request_existence(verbose: bool, request_id: str",
    ).replace("  action clear_completed_request(", "  action remove_done(")
    problems = tool_differences(tools, env_of(extra))
    assert problems == [
        "tool `check_request_existence` requires `verbose`, which the original does not have "
        "(check_request_existence(request_id: string)): drop it or give it a default",
        "tool `clear_completed_request` is missing (the original's "
        "clear_completed_request(request_id: string))",
    ]


# ---- start states -----------------------------------------------------------------------------


def test_start_states_convert_from_envscalers_layout() -> None:
    env_class = env_of(MIGRATED)
    first, second, _ = read_scenarios(str(SCENARIOS))
    state = convert_state(first.init_config, env_class)
    assert "job_queue" not in state and state["queued_request_ids"] == ["req_0", "req_1"]
    assert state["requests"]["req_0"]["submission_time"] == "2024-06-11T08:00:00Z"
    assert state["requests"]["req_0"]["completion_time"] is None
    assert convert_state(second.init_config, env_class)["next_request_id"] == "req_2"
    # a naive ISO text is UTC; a key that is no field and no holder stays, for the load to name
    odd = {"requests": {"r": {**first.init_config["requests"]["req_0"], "request_id": "r"}}}
    odd["requests"]["r"]["submission_time"] = "2024-06-11 08:00:00"
    odd["queue"] = {"items": []}
    converted = convert_state(odd, env_class)
    assert converted["requests"]["r"]["submission_time"] == "2024-06-11T08:00:00Z"
    env = env_class()
    with pytest.raises(Exception, match="unknown state field 'queue'"):
        env.reset(state=converted)


def test_load_failures_say_why_per_scenario() -> None:
    scenarios = read_scenarios(str(SCENARIOS))
    assert load_failures(scenarios, env_of(MIGRATED)) == [(s.id, None) for s in scenarios]
    # a status the enum lacks (the original's operation_list speaks of cancelled requests)
    config = json.loads(json.dumps(scenarios[1].init_config))
    config["requests"]["req_3"]["status"] = "cancelled"
    config["job_queue"]["queued_request_ids"] = []
    cancelled = replace(scenarios[1], init_config=config)
    [(_, why)] = load_failures([cancelled], env_of(MIGRATED))
    assert why is not None and "requests.req_3.status" in why and "cancelled" in why
    wider = MIGRATED.replace(
        "enum OCRStatus { submitted, processing, completed, failed }",
        "enum OCRStatus { submitted, processing, completed, failed, cancelled }",
    )
    assert load_failures([cancelled], env_of(wider)) == [(cancelled.id, None)]
    report = load_failures(scenarios, env_of(PORT))
    assert report == [(s.id, "missing state field 'now'") for s in scenarios]
    other = {**RECORD, "env_id": "env_999"}
    assert scenarios_of(other, scenarios) == [] and scenarios_of(RECORD, scenarios) == scenarios


def test_scenario_files_are_checked(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for content, message in [
        ("[1]", "scenario 0 of"),
        ('[{"task": "x"}]', "has no `init_config` object"),
        ('{"init_config": {}}', "has no `task`"),
        ("{", "is not JSON"),
        ("[]", "holds no scenario"),
    ]:
        bad.write_text(content)
        with pytest.raises(Exception, match=message):
            read_scenarios(str(bad))
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text('{"init_config": {}, "task": "a"}\n{"init_config": {}, "task": "b"}\n')
    assert [s.task for s in read_scenarios(str(jsonl))] == ["a", "b"]


# ---- pinning a scenario's task ----------------------------------------------------------------


def test_pin_task_keeps_the_scenarios_name_instruction_and_init() -> None:
    candidate = (
        "task my_name {\n"
        '  """Another instruction\n\n  in two paragraphs"""\n'
        "  init { count = 3 }\n\n"
        "  solution { add(n=1) }\n"
        '  check "four": count == 4\n'
        "}\n"
    )
    pinned = pin_task(candidate, "scenario_a", 'Say "hi" \\ now', "x.states/a.json")
    assert pinned == (
        "task scenario_a {\n"
        '  """Say \\"hi\\" \\\\ now"""\n'
        '  init from "x.states/a.json"\n\n'
        "  solution { add(n=1) }\n"
        '  check "four": count == 4\n'
        "}\n"
    )
    bare = 'task t {\n  solution { add(n=1) }\n  check "four": count == 4\n}\n'
    assert pin_task(bare, "s", "Go.", "a.json").startswith(
        'task s {\n  """Go."""\n  init from "a.json"\n  solution'
    )
    broken = "task t {\n  solution { add(n=1 }\n}\n"
    assert pin_task(broken, "s", "Go.", "a.json") == broken  # its diagnostics go back


# ---- end to end: the spec, its start states, the task file ----------------------------------

PROCESS = """
    solution {
      start_processing_request(request_id="req_0")
      complete_ocr_request(
        request_id="req_0",
        extracted_text="INVOICE 117",
        confidence_scores=[0.98, 0.95],
        processing_timestamp=datetime("2024-06-11T10:00:00Z"),
      )
    }
    check "Has request req_0 been marked as completed?":
      requests["req_0"].status == OCRStatus.completed
"""
PROCESS_REPAIRED = PROCESS + """\
    check "Has the extracted text INVOICE 117 with scores [0.98, 0.95] been stored for req_0?":
      (
        result_repository["req_0"].extracted_text == "INVOICE 117"
        and result_repository["req_0"].confidence_scores == [0.98, 0.95]
      )
    check "the request and its result say when it completed, and the text":
      (
        requests["req_0"].completion_time == datetime("2024-06-11T10:00:00Z")
        and requests["req_0"].result_text == "INVOICE 117"
        and result_repository["req_0"].processing_timestamp == datetime("2024-06-11T10:00:00Z")
      )
"""
RETRY = """
    solution {
      fail_ocr_request(request_id="req_2")
      retry_ocr_request(original_request_id="req_2")
    }
    check "Has request req_2 been marked as failed?": requests["req_2"].status == OCRStatus.failed
    GUARD
    check "Has a new request for s3://scans/passport.png been submitted?":
      any(
        r.request_id not in initial.requests
        and r.document_reference == "s3://scans/passport.png"
        and r.status == OCRStatus.submitted
        for r in requests
      )
"""
GUARD = (
    'check "Has the document reference of req_2 remained s3://scans/passport.png?":\n'
    '      requests["req_2"].document_reference == "s3://scans/passport.png"'
)
CLEAR = """
    solution { clear_completed_request(request_id="req_5") }
    check "Has request req_5 been removed together with its result?":
      "req_5" not in requests and "req_5" not in result_repository
"""


def task_reply(name: str, body: str, *, header: bool = True) -> str:
    """A reply as a model writes it: the header as the prompt gave it (or a name of its own
    and an init block of its own, which are pinned back), then its solution and checks."""
    top = (
        f'  task {name} {{\n    """(the instruction)"""\n    init from "elsewhere.json"\n'
        if header
        else '  task my_own_name {\n    init { now = datetime("2024-01-01T00:00:00Z") }\n'
    )
    return fenced(f'tasks for "ocr.env" {{\n{top}{body}  }}\n}}\n')


def import_responder(guard: bool) -> Any:
    """Scenario prompts and repair requests, told apart by the instruction they quote."""

    def reply(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        repair = "rejected this task" in prompt
        if "the oldest request in the OCR queue" in prompt:
            return task_reply("s", PROCESS_REPAIRED if repair else PROCESS, header=repair)
        if "The OCR engine crashed" in prompt:
            return task_reply("s", RETRY.replace("GUARD", GUARD if guard else ""))
        return task_reply("s", CLEAR)

    return reply


def test_an_envscaler_environment_migrates_with_its_scenarios(
    server: ChatServer, tmp_path: Path
) -> None:
    spec = tmp_path / "ocr.env"
    log = tmp_path / "log.jsonl"
    server.replies = [fenced(RENAMED), fenced(PORT), fenced(MIGRATED)]
    args = ["--base-url", server.url, "--model", "m", "--backoff", "0"]
    result = CliRunner().invoke(
        main,
        ["synth", "--from-envscaler", str(ENVSCALER), "--index", str(OCR_INDEX), "--scenarios",
         str(SCENARIOS), "-o", str(spec), "--log", str(log), *args],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert spec.read_text("utf-8") == MIGRATED
    first, tools_repair, states_repair = (server.user_messages(i)[-1] for i in range(3))
    assert "- complete_ocr_request(request_id: string, extracted_text: string" in first
    assert '"job_queue"' in first
    assert "rename it to `purge_expired_results`" in tools_repair
    assert "rename `request_id` to `original_request_id`" in tools_repair
    assert "missing state field 'now'" in tools_repair + states_repair
    assert "purge_expired_results" not in states_repair.split("What differs")[1]
    statuses = [json.loads(line).get("status") for line in log.read_text().splitlines()]
    assert statuses == ["differs", "differs", "clean", "accepted"]
    assert "start states: 3 of 3 load" in result.output
    assert "scenario 1765843200_2: loads" in result.output

    # the scenarios become a task file: two are clean (one after repair), the one whose
    # check holds before the agent acts cannot be made clean and is listed with the reason
    server.replies, server.responder = [], import_responder(guard=True)
    tasks = tmp_path / "ocr.tasks.env"
    command = ["import-envscaler", str(SCENARIOS), "--spec", str(spec), "-o", str(tasks), *args]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert "scenario 1765843200_0 -> scenario_1765843200_0: accepted" in lines
    assert "scenario 1765843200_2 -> scenario_1765843200_2: accepted" in lines
    [stuck] = [line for line in lines if line.startswith("scenario 1765843200_1")]
    assert stuck.startswith(
        'scenario 1765843200_1 -> scenario_1765843200_1: not made clean: W5013 check "Has the document reference'
    )
    assert "2 of 3 scenarios are tasks" in result.output
    assert "1 of 3 scenarios could not be made clean" in result.output
    states = tmp_path / "ocr.tasks.states"
    start = json.loads((states / "scenario_1765843200_0.json").read_text("utf-8"))
    assert start["queued_request_ids"] == ["req_0", "req_1"]
    text = tasks.read_text("utf-8")
    assert 'init from "ocr.tasks.states/scenario_1765843200_0.json"' in text
    assert "Start processing the oldest request in the OCR queue" in text
    assert "my_own_name" not in text and "elsewhere.json" not in text
    checked = check_file(spec, task_files=[tasks])
    assert checked.ok and not checked.diagnostics
    assert len(checked.task_reports) == 3  # the spec's own task and the two imported

    # a rerun keeps the two and retries the third, now without the guard
    server.responder = import_responder(guard=False)
    requests_before = len(server.requests)
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert "scenario 1765843200_0 -> scenario_1765843200_0: resumed" in result.output
    assert "scenario 1765843200_1 -> scenario_1765843200_1: accepted" in result.output
    assert len(server.requests) == requests_before + 1
    checked = check_file(spec, task_files=[tasks])
    assert checked.ok and not checked.diagnostics and len(checked.task_reports) == 4


def test_the_scenario_prompt_carries_the_check_functions_and_the_pinned_start() -> None:
    from envdsl.llm.import_scenarios import pinned_header
    from envdsl.llm.prompts import fit_repair_prompt, scenario_task_prompt

    scenario = read_scenarios(str(SCENARIOS))[1]
    header = pinned_header("scenario_x", scenario.task, "ocr.tasks.states/scenario_x.json")
    checks = [(check.item, check.function) for check in scenario.checks]
    text = scenario_task_prompt(MIGRATED, "ocr.env", header, scenario.task, checks)
    assert scenario.task in text and "initial_state" in text
    assert "2. Has the document reference of req_2 remained" in text
    assert 'for rid, r in final_state["requests"].items()' in text  # the function itself
    assert '  task scenario_x {\n    """The OCR engine crashed' in text
    assert '    init from "ocr.tasks.states/scenario_x.json"' in text
    problems = [f"tool `t{n}` is missing" for n in range(20)]
    repair = fit_repair_prompt(MIGRATED, problems)
    assert "What differs (20):" in repair and "- tool `t10` is missing" in repair
    assert "- tool `t11` is missing" not in repair and "- ... and 9 more" in repair


@pytest.mark.parametrize(
    "args, message",
    [
        (["synth", "topic", "-o", "x.env", "--scenarios", "s.json"], "--scenarios goes with"),
        (["import-envscaler", str(SCENARIOS), "-o", "x.tasks.env"], "give --spec SPEC and -o"),
        (["import-envscaler", str(SCENARIOS), "--spec", "nope.env", "-o", "x"], "cannot read"),
        (["import-envscaler", "nope.json", "--spec", __file__, "-o", "x"], "cannot read 'nope"),
    ],
)
def test_usage_errors_are_one_line(server: ChatServer, args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, [*args, "--base-url", server.url, "--model", "m"])
    assert result.exit_code == 2 and message in result.output, result.output
    assert len(result.output.splitlines()) == 1 and not server.requests


def test_usage_errors_about_the_files(server: ChatServer, tmp_path: Path) -> None:
    args = ["--base-url", server.url, "--model", "m"]
    spec = tmp_path / "ocr.env"
    spec.write_text(MIGRATED)
    synth = ["synth", "--from-envscaler", str(ENVSCALER), "--index", "0", "-o", str(spec)]
    result = CliRunner().invoke(main, [*synth, "--scenarios", str(SCENARIOS), *args])
    assert result.exit_code == 2 and "has no scenario of env_103_sft" in result.output
    command = ["import-envscaler", str(SCENARIOS), "--spec", str(spec), *args]
    result = CliRunner().invoke(main, [*command, "-o", str(tmp_path / "x.env"), "--env-id", "e"])
    assert result.exit_code == 2 and "has no scenario of e" in result.output
    outside = tmp_path / "sub"
    outside.mkdir()
    result = CliRunner().invoke(main, [*command, "-o", str(outside / "x.tasks.env")])
    assert result.exit_code == 2 and "must be in the spec's directory" in result.output
    # a start state the spec cannot load is listed without asking the model
    broken = json.loads(SCENARIOS.read_text("utf-8"))[:1]
    broken[0]["init_config"]["job_queue"]["queued_request_ids"] = ["req_9"]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    broken_file = str(tmp_path / "broken.json")
    output = str(tmp_path / "b.tasks.env")
    result = CliRunner().invoke(
        main, ["import-envscaler", broken_file, "--spec", str(spec), "-o", output, *args]
    )
    assert result.exit_code == 1, result.output
    assert "scenario 1765843200_0 -> scenario_1765843200_0: not made clean: its start state " in (
        result.output
    )
    assert "nothing written to" in result.output and not (tmp_path / "b.tasks.env").exists()
    spec.write_text(MIGRATED.replace("requests.get(request_id)", "requestz.get(request_id)", 1))
    result = CliRunner().invoke(main, [*command, "-o", str(tmp_path / "x.tasks.env")])
    assert result.exit_code == 2 and "the spec or the existing task file has errors" in (
        result.output
    )
    assert not server.requests
