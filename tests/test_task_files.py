"""Task files (`tasks for "env.env" { task ... }`): resolution, merging, diagnostics in the
task file's own text, and every command and adapter that takes a spec taking them too.

tests/task_files/ holds a small env (demo.env) and a task file for it whose first task starts
from an `init from` file next to the task file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import envdsl
from envdsl.cli import main
from envdsl.diagnostics.render_text import render_text
from envdsl.pipeline import check_file
from envdsl.tasks.task_files import Bundle, bundle_paths

HERE = Path(__file__).parent / "task_files"
OWN_TASKS = ["add_two"]
FILE_TASKS = ["raise_limit", "read_count"]

TASK = '''
  task {name} {{
    """Add {n} to the counter."""
    solution {{ add(n={n}) }}
    check "the counter is {n}": count == {n}
  }}
'''


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of tests/task_files in a temporary directory; returns the directory."""
    target = tmp_path / "demo"
    shutil.copytree(HERE, target)
    return target


def task_file(path: Path, target: str, *names_and_numbers: tuple[str, int]) -> Path:
    body = "".join(TASK.format(name=name, n=n) for name, n in names_and_numbers)
    path.write_text(f'tasks for "{target}" {{{body}}}\n', encoding="utf-8")
    return path


def codes(path: Path, *task_files: Path) -> list[tuple[str, str, int]]:
    """(code, file name, line) of every diagnostic."""
    result = check_file(path, task_files=task_files)
    found = []
    for d in result.diagnostics:
        source = result.sources.get(d.span.file)
        assert source is not None
        found.append((d.code.code, Path(d.span.file).name, source.position(d.span.start).line))
    return found


# ---- merging ---------------------------------------------------------------------------------


def test_a_task_file_alone_is_its_env_with_its_tasks(demo: Path) -> None:
    result = check_file(demo / "demo.tasks.env")
    assert result.ok and result.diagnostics == []
    assert [r.task for r in result.task_reports] == OWN_TASKS + FILE_TASKS
    assert all(not r.problems for r in result.task_reports)


def test_spec_and_several_task_files_give_the_union(demo: Path) -> None:
    more = task_file(demo / "more.tasks.env", "demo.env", ("add_three", 3))
    result = check_file(demo / "demo.env", task_files=[demo / "demo.tasks.env", more])
    assert result.ok, render_text(result.diagnostics, result.sources)
    assert [r.task for r in result.task_reports] == OWN_TASKS + FILE_TASKS + ["add_three"]


def test_init_from_is_relative_to_the_task_file(demo: Path) -> None:
    sub = demo / "sub"
    sub.mkdir()
    (demo / "near_limit.json").rename(sub / "near_limit.json")
    text = (demo / "demo.tasks.env").read_text().replace('"demo.env"', '"../demo.env"')
    (sub / "t.tasks.env").write_text(text)
    # a task file may not name an env above its directory, even if init from would work
    assert codes(sub / "t.tasks.env") == [("E1021", "t.tasks.env", 2)]
    moved = text.replace('"near_limit.json"', '"sub/near_limit.json"').replace("../", "")
    (demo / "t.tasks.env").write_text(moved)
    assert codes(demo / "t.tasks.env") == []


def test_a_task_files_diagnostics_show_its_own_text(demo: Path) -> None:
    text = (demo / "demo.tasks.env").read_text().replace("count == 140", "count == 141")
    (demo / "demo.tasks.env").write_text(text)
    result = check_file(demo / "demo.env", task_files=[demo / "demo.tasks.env"])
    [diagnostic] = result.diagnostics
    assert diagnostic.code.code == "E4005" and diagnostic.span.file.endswith("demo.tasks.env")
    rendered = render_text(result.diagnostics, result.sources)
    assert 'check "the counter is 140": count == 141' in rendered
    assert "demo.tasks.env:" in rendered


# ---- resolution errors -----------------------------------------------------------------------


def test_missing_and_unreadable_envs(demo: Path) -> None:
    assert codes(task_file(demo / "a.tasks.env", "nope.env", ("t", 1))) == [
        ("E1020", "a.tasks.env", 1)
    ]
    (demo / "dir.env").mkdir()
    assert codes(task_file(demo / "b.tasks.env", "dir.env", ("t", 1)))[0][0] == "E1020"


def test_envs_outside_the_task_files_directory(demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.env"
    shutil.copy(demo / "demo.env", outside)
    for target in (str(outside), "../outside.env", "~/x.env"):
        assert codes(task_file(demo / "a.tasks.env", target, ("t", 1)))[0][0] == "E1021"
    os.symlink(outside, demo / "link.env")  # a symlink that leads out
    assert codes(task_file(demo / "a.tasks.env", "link.env", ("t", 1)))[0][0] == "E1021"


def test_a_task_file_must_name_an_env(demo: Path) -> None:
    other = task_file(demo / "other.tasks.env", "demo.env", ("t", 1))
    assert codes(task_file(demo / "a.tasks.env", "other.tasks.env", ("u", 1))) == [
        ("E1022", "a.tasks.env", 1)
    ]
    (demo / "empty.env").write_text("# nothing\n")
    found = codes(task_file(demo / "b.tasks.env", "empty.env", ("u", 1)))
    assert ("E1022", "b.tasks.env", 1) in found and other.exists()


def test_task_names_are_unique_across_files(demo: Path) -> None:
    clash = task_file(demo / "a.tasks.env", "demo.env", ("add_two", 2), ("read_count", 3))
    found = codes(demo / "demo.env", demo / "demo.tasks.env", clash)
    assert found == [("E1023", "a.tasks.env", 2), ("E1023", "a.tasks.env", 8)]
    twice = task_file(demo / "b.tasks.env", "demo.env", ("t", 1), ("t", 3))
    assert [c for c, _, _ in codes(twice)] == ["E1010"]  # one file: as in a spec


def test_a_task_file_given_with_another_spec(demo: Path) -> None:
    shutil.copy(demo / "demo.env", demo / "copy.env")
    found = codes(demo / "copy.env", demo / "demo.tasks.env")
    assert found == [("E1022", "demo.tasks.env", 2)]


def test_task_file_structure(demo: Path) -> None:
    both = demo / "both.env"
    spec = (demo / "demo.env").read_text()
    both.write_text(spec + 'tasks for "demo.env" {\n}\n')
    assert codes(both) == [("E0030", "both.env", 35)]  # the block is left out
    two = demo / "two.tasks.env"
    two.write_text('tasks for "demo.env" {\n}\ntasks for "demo.env" {\n}\n')
    assert codes(two) == [("W5020", "two.tasks.env", 1), ("E0030", "two.tasks.env", 3)]
    assert codes(demo / "demo.env", demo / "demo.env") == [("E0030", "demo.env", 1)]


# ---- grouping command-line files -------------------------------------------------------------


def test_bundles_group_each_env_with_its_task_files(demo: Path) -> None:
    spec, tasks = str(demo / "demo.env"), str(demo / "demo.tasks.env")
    more = str(task_file(demo / "more.tasks.env", "demo.env", ("m", 4)))
    assert bundle_paths([tasks, spec, more]) == [Bundle(spec, (tasks, more))]
    assert bundle_paths([tasks, more]) == [Bundle(tasks, (more,))]
    assert bundle_paths([spec, spec]) == [Bundle(spec)]
    missing = str(demo / "missing.env")
    assert bundle_paths([missing, tasks]) == [Bundle(missing), Bundle(tasks)]


# ---- commands --------------------------------------------------------------------------------


def invoke(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(arguments))
    return result.exit_code, result.output


def test_check_a_directory_checks_each_env_once(demo: Path) -> None:
    code, output = invoke("check", str(demo), "--format", "jsonl")
    [record, summary] = [json.loads(line) for line in output.splitlines()]
    assert code == 0 and record["file"].endswith("demo.env") and record["ok"]
    assert [Path(p).name for p in record["task_files"]] == ["demo.tasks.env"]
    assert json.loads(output.splitlines()[-1])["summary"]["files"] == summary["summary"]["files"]


def test_compile_writes_one_module_per_env_with_the_task_files_tasks(
    demo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, output = invoke(
        "compile", str(demo / "demo.env"), str(demo / "demo.tasks.env"), "-o", str(out)
    )
    assert code == 0, output
    assert sorted(p.name for p in out.iterdir()) == ["demo.py", "demo.tools.json"]
    module = (out / "demo.py").read_text()
    assert all(f'"{name}"' in module for name in OWN_TASKS + FILE_TASKS)
    assert '"count": 90' in module  # the init file, embedded


def test_single_env_commands_take_task_files(demo: Path, tmp_path: Path) -> None:
    spec, tasks = str(demo / "demo.env"), str(demo / "demo.tasks.env")
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"name": "set_limit", "arguments": {"limit_value": 200}}\n'
                     '{"name": "add", "arguments": {"n": 50}}\n')  # fmt: skip
    code, output = invoke("run", spec, tasks, "--task", "raise_limit", "--calls", str(calls))
    assert code == 0 and "success: true" in output
    code, output = invoke("state", tasks, "--task", "raise_limit")
    assert code == 0 and json.loads(output)["count"] == 90
    code, output = invoke("tasks", tasks, "--format", "json")
    assert [t["name"] for t in json.loads(output)["tasks"]] == OWN_TASKS + FILE_TASKS
    code, output = invoke("tasks", spec, tasks, "--format", "jsonl")
    records = [json.loads(line) for line in output.splitlines()]
    assert [r["task"] for r in records] == OWN_TASKS + FILE_TASKS
    code, output = invoke("verify", tasks, "--format", "json")
    assert code == 0 and [t["task"] for t in json.loads(output)["tasks"]][-1] == "read_count"
    code, output = invoke("explore", tasks, "--task", "read_count", "--max-calls", "50")
    assert code == 0, output
    code, output = invoke("schema", spec, tasks)
    assert code == 0 and "set_limit" in output
    code, output = invoke("run", spec, str(demo / "copy.env"), "--calls", str(calls))
    assert code == 2  # two envs named where one is wanted


def test_a_bad_task_file_fails_the_command_with_its_diagnostics(demo: Path, tmp_path: Path) -> None:
    bad = task_file(demo / "bad.tasks.env", "nope.env", ("t", 1))
    code, output = invoke("tasks", str(bad))
    assert code == 1 and "E1020" in output and "nope.env" in output


def test_coverage_report(demo: Path) -> None:
    code, output = invoke("tasks", str(demo / "demo.env"), "--report", "--format", "json")
    report = json.loads(output)
    assert code == 0 and report["unused_tools"] == ["set_limit", "get_count"]
    assert "no read-only question task (queries, then an `answer` check) yet" in report["gaps"]
    code, output = invoke("tasks", str(demo / "demo.tasks.env"), "--report", "--format", "json")
    report = json.loads(output)
    assert report["unused_tools"] == [] and report["tasks"] == 3
    assert report["solution_lengths"] == {"1": 2, "2": 1}
    assert report["calls"] == {"query": 1, "action": 3} and report["question_tasks"] == 1
    assert report["tables"] == {}  # two scalars, no table
    assert report["fields"] == {
        "count": {"read": 3, "changed": 2},
        "limit": {"read": 1, "changed": 1},
    }
    rules = report["rules"]
    # raise_limit's add(n=50) fails without its set_limit step: the invariant refuses it
    assert rules["invariant: the counter stays within the limit"]["failure_provoked"] == [
        "raise_limit"
    ]
    assert rules["add: require n >= 1 (line 13)"]["held"] == ["add_two", "raise_limit"]
    code, text = invoke("tasks", str(demo / "demo.tasks.env"), "--report")
    assert code == 0 and "tools: 3/3 public tools used by some solution" in text
    assert "get_count  query   1 task" in text


# ---- adapters --------------------------------------------------------------------------------


def test_adapters_take_task_files(demo: Path) -> None:
    spec, tasks = demo / "demo.env", demo / "demo.tasks.env"
    assert list(envdsl.load(tasks).TASKS) == OWN_TASKS + FILE_TASKS
    assert list(envdsl.load(spec, [tasks]).TASKS) == OWN_TASKS + FILE_TASKS
    assert list(envdsl.load(spec).TASKS) == OWN_TASKS
    from envdsl.adapters.gymnasium_env import make
    from envdsl.adapters.trl import environment_factory

    env = make(spec, task="raise_limit", task_files=[tasks])
    observation, _ = env.reset()
    assert "raise its limit" in observation
    factory = environment_factory(str(spec), tasks=["read_count"], task_files=[tasks])
    assert "value" in factory().reset()
