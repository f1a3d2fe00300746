"""`envdsl report`: the data of the report (`--format json`) against what the compiler itself
says about the specs, the HTML's escaping of hostile spec text, rollout figures from real
`envdsl rollout` files, and usage errors. The pages in a real browser: test_report_browser.py.
"""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer
from click.testing import CliRunner
from report_rollouts import write_rollouts

from envdsl.cli import main
from envdsl.pipeline import check_file
from envdsl.semantics.model import CheckedSpec
from envdsl.tasks import verify

TESTS = Path(__file__).parent
REPO = TESTS.parent
HOSTILE = TESTS / "report_specs" / "hostile.env"
COUNTER = TESTS / "rollout_specs" / "counter.env"
LIBRARY = [
    REPO / "examples" / "library_lending.env",
    REPO / "examples" / "library_lending.tasks.env",
]
WITH_ERRORS = TESTS / "fixtures" / "types" / "compare_enum_with_int.env"


def report_json(*arguments: str | Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["report", "--format", "json", *map(str, arguments)])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)
    return document


def by_code(document: dict[str, Any], code: str) -> dict[str, Any]:
    row = next(row for row in document["batch"]["by_code"] if row["code"] == code)
    return {name: row[name] for name in ("severity", "count", "specs")}


def test_a_spec_page_holds_what_the_compiler_knows_of_the_spec() -> None:
    spec = report_json(*LIBRARY)["specs"][0]
    result = check_file(LIBRARY[0], task_files=[LIBRARY[1]])
    checked = result.checked
    assert isinstance(checked, CheckedSpec)
    entities = [info for info in checked.records.values() if info.is_entity]
    assert [e["name"] for e in spec["entities"]] == [info.name for info in entities]
    assert [e["table"] for e in spec["entities"]] == [info.table for info in entities]
    # one state diagram per field with a transitions clause, and an ER node per entity
    with_transitions = [
        (info.name, f.name) for info in entities for f in info.fields.values() if f.transitions
    ]
    assert [(s["entity"], s["field"]) for s in spec["diagrams"]["states"]] == with_transitions
    er = spec["diagrams"]["entities"]
    for info in entities:
        assert f'["{info.name}"]' in er
    refs = [f for info in entities for f in info.fields.values() if "ref" in str(f.type)]
    assert er.count("}o--") == len(refs)
    # tools with the effect analysis' reads and writes
    for tool in spec["tools"]:
        effects = checked.effects[tool["name"]]
        assert tool["reads"] == sorted(effects.reads)
        assert tool["writes"] == sorted(effects.writes)
    # every task with its verification report, as `envdsl verify` gives it
    expected = {report.task: report.as_json() for report in result.task_reports}
    assert {task["name"]: task["verification"] for task in spec["tasks"]} == expected
    assert all(task["solution"] for task in spec["tasks"])
    public = [tool["name"] for tool in spec["tools"] if not tool["internal"]]
    assert sorted(spec["coverage"]["tools"]) == sorted(public)
    assert spec["summary"]["clean"] and spec["summary"]["tasks"] == len(expected)


def test_the_index_of_a_batch_counts_errors_and_warnings_by_code(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copy(COUNTER, batch / "a_counter.env")
    shutil.copy(WITH_ERRORS, batch / "b_broken.env")
    (batch / "c_unreadable.env").write_bytes(b"env X { \xff\xfe }")
    (batch / "d_syntax.env").write_text("env Y {\n  entity {\n}\n", encoding="utf-8")
    document = report_json(batch)
    specs = {Path(spec["path"]).name: spec for spec in document["specs"]}
    assert list(specs) == ["a_counter.env", "b_broken.env", "c_unreadable.env", "d_syntax.env"]
    checked = CliRunner().invoke(main, ["check", "--format", "json", str(batch / "b_broken.env")])
    codes = [d["code"] for d in json.loads(checked.output)["diagnostics"]]
    broken = specs["b_broken.env"]
    assert not broken["ok"] and broken["errors"] == len(codes) and broken["codes"]
    assert sum(broken["codes"].values()) == len(codes)
    assert all(d["source_lines"] for d in broken["diagnostics"])
    start = broken["diagnostics"][0]["span"]["start"]
    text = (batch / "b_broken.env").read_text("utf-8").splitlines()[start["line"] - 1]
    shown = broken["diagnostics"][0]["source_lines"][0]
    assert (shown["line"], shown["text"], shown["span"][0]) == (start["line"], text, start["col"])
    assert by_code(document, "E2002") == {"severity": "error", "count": 1, "specs": 1}
    assert "read_error" in specs["c_unreadable.env"] and not specs["c_unreadable.env"]["ok"]
    assert specs["d_syntax.env"]["codes"] and specs["d_syntax.env"]["env"] is None
    assert specs["a_counter.env"]["summary"]["clean"]
    batch_summary = document["batch"]
    assert batch_summary["specs"] == 4 and batch_summary["clean"] == 1
    assert batch_summary["with_errors"] == 3
    for code, count in broken["codes"].items():
        assert batch_summary["codes"][code] >= count
    # and the site: a page per spec, linked from the index
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", str(batch), "-o", str(out)])
    assert result.exit_code == 0, result.output
    index = (out / "index.html").read_text("utf-8")
    for spec in document["specs"]:
        assert (out / spec["page"]).is_file()
        assert f'href="{spec["page"]}"' in index
    assert (out / "assets" / "mermaid.min.js").stat().st_size > 1_000_000


def test_hostile_spec_text_is_escaped_everywhere(tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", str(HOSTILE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    for page in [out / "index.html", *sorted((out / "specs").glob("*.html"))]:
        html = page.read_text("utf-8")
        tags = re.findall(r"<script[^>]*>", html)
        prefix = "" if page.name == "index.html" else "../"
        assert tags == [
            f'<script src="{prefix}assets/mermaid.min.js">',
            f'<script src="{prefix}assets/report.js">',
        ]
        for markup in ("<img", "<svg", "<b ", "<!--"):  # as text, escaped, they are inert
            assert markup not in html
    page = next((out / "specs").glob("*.html")).read_text("utf-8")
    # the text is there, escaped, not dropped
    assert "&lt;script&gt;alert(&#34;task instruction&#34;)&lt;/script&gt;" in page
    assert "&lt;/code&gt;&lt;script&gt;alert(&#39;param&#39;)" in page
    assert "}}{{ 7*7 }}&lt;/td&gt;" in page  # a template in the data is not evaluated
    # Mermaid sources hold no spec string: only generated ids and identifier labels
    sources = [unescape(s) for s in re.findall(r'<pre class="mermaid">(.*?)</pre>', page, re.S)]
    assert len(sources) == 2
    for source in sources:
        assert "<" not in source and "alert" not in source and "e0 --> e1" not in source


def test_the_csp_of_every_page_allows_only_the_shipped_scripts(tmp_path: Path) -> None:
    out = tmp_path / "site"
    CliRunner().invoke(main, ["report", str(COUNTER), "-o", str(out)])
    for page in [out / "index.html", *(out / "specs").glob("*.html")]:
        assert "script-src 'self';" in page.read_text("utf-8")


def test_new_verification_fields_appear_without_a_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the grading branches add to TaskReport.as_json (a frame, a mutation score) shows up
    on the task and, for a score, as an index column."""
    original = verify.TaskReport.as_json

    def with_more(self: verify.TaskReport) -> dict[str, Any]:
        document = original(self)
        document["frame"] = {"items": {"updated": ["count"]}}
        document["mutation_score"] = 0.75 if self.task == "bump_once" else 0.25
        return document

    monkeypatch.setattr(verify.TaskReport, "as_json", with_more)
    spec = report_json(COUNTER)["specs"][0]
    assert spec["summary"]["mean mutation_score"] == 0.5
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", str(COUNTER), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "<th>mean mutation score</th>" in (out / "index.html").read_text("utf-8")
    page = (out / spec["page"]).read_text("utf-8")
    assert "<th>frame</th>" in page and "<th>updated</th>" in page
    assert "<th>mutation_score</th><td>0.75</td>" in page


@pytest.fixture
def server() -> Any:
    chat = ChatServer()
    yield chat
    chat.close()


def test_rollouts_give_each_model_its_figures_side_by_side(
    server: ChatServer, tmp_path: Path
) -> None:
    trajectories = tmp_path / "traj.jsonl"
    write_rollouts(server, COUNTER, trajectories, samples=4)
    document = report_json(COUNTER, "--rollouts", trajectories)
    rollouts = document["rollouts"]
    assert rollouts["models"] == ["model-flaky", "model-idle", "model-solver"]
    assert rollouts["overall"]["model-solver"]["success_rate"] == 1.0
    assert rollouts["overall"]["model-idle"]["mean_reward"] == 0.0
    tasks = {entry["task"]: entry for entry in rollouts["tasks"]}
    assert sorted(tasks) == ["bump_once", "read_count"]
    flaky = tasks["bump_once"]["models"]["model-flaky"]
    # the flaky agent solves the samples with an even seed: 2 of 4
    assert flaky["success_rate"] == 0.5
    assert flaky["pass_at_k"] == {"1": 0.5, "2": 0.8333, "3": 1.0, "4": 1.0}
    assert flaky["pass_hat_k"] == {"1": 0.5, "2": 0.1667, "3": 0.0, "4": 0.0}
    assert flaky["reward_histogram"]["0.0"] == 2 and flaky["reward_histogram"]["1.0"] == 2
    assert flaky["failed_call_rate"] == 0.5  # its failing samples call with an unknown id
    idle = tasks["bump_once"]["models"]["model-idle"]
    assert idle["failed_call_rate"] == 0.0 and idle["mean_turns"] == 1.0
    assert idle["reward_histogram"]["0.0"] == 4
    assert "line [0.5, 0.8333, 1, 1]" in flaky["charts"]["pass"]
    assert "bar [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]" in flaky["charts"]["rewards"]
    spec = document["specs"][0]
    assert [entry["task"] for entry in spec["rollouts"]] == ["bump_once", "read_count"]
    # another spec's page gets none of these tasks
    other = report_json(HOSTILE, "--rollouts", trajectories)["specs"][0]
    assert other["rollouts"] == []


def test_rollout_lines_that_are_not_records_are_skipped(tmp_path: Path, server: ChatServer) -> None:
    trajectories = tmp_path / "traj.jsonl"
    write_rollouts(server, COUNTER, trajectories, samples=1)
    lines = trajectories.read_text("utf-8").splitlines()
    broken = dict(json.loads(lines[0]), reward="high")  # hand-edited: not a number
    lines += [json.dumps(broken), '{"key": "torn', "[1, 2]"]
    trajectories.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rollouts = report_json(COUNTER, "--rollouts", trajectories)["rollouts"]
    assert sum(o["records"] for o in rollouts["overall"].values()) == len(lines) - 3


def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(main, ["report", str(COUNTER), "--rollouts", str(tmp_path / "no")])
    assert missing.exit_code == 2 and "cannot read rollouts" in missing.output
    assert len(missing.output.strip().splitlines()) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    none = runner.invoke(main, ["report", str(empty), "-o", str(tmp_path / "site")])
    assert none.exit_code == 2 and len(none.output.strip().splitlines()) == 1
    blocked = tmp_path / "a_file"
    blocked.write_text("", encoding="utf-8")
    written = runner.invoke(main, ["report", str(COUNTER), "-o", str(blocked)])
    assert written.exit_code == 2 and "cannot write the report" in written.output
    assert "Traceback" not in missing.output + none.output + written.output


def test_worker_processes_give_the_same_report() -> None:
    assert report_json(COUNTER, HOSTILE, "--jobs", "2") == report_json(COUNTER, HOSTILE)


def test_a_spec_whose_report_fails_is_an_internal_error_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from envdsl.report import collect

    original = collect.collect_spec

    def failing(bundle: Any, index: int) -> Any:
        if index == 0:
            raise RuntimeError("a bug")
        return original(bundle, index)

    monkeypatch.setattr(collect, "collect_spec", failing)
    document = report_json(COUNTER, HOSTILE)
    broken, fine = document["specs"]
    assert broken["codes"] == {"E9001": 1} and "RuntimeError: a bug" in broken["read_error"]
    assert fine["ok"] and fine["env"] == "Hostile"
