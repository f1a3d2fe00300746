"""`envdsl check` over many files: argument expansion, jsonl and the summary, --jobs, progress,
unreadable files and crashes in a batch (envdsl/cli/check_batch.py)."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import example_specs
import jsonschema
import pytest
from click.testing import CliRunner

from envdsl.cli import check_batch as batch
from envdsl.cli import main
from envdsl.cli.check_batch import FileRecord, Progress, Summary, check_one, run_check, run_checks
from envdsl.pipeline import CompileResult

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = example_specs.EXAMPLES  # the specs, without task files
SCHEMA = json.loads((Path(__file__).parent / "diagnostics.schema.json").read_text("utf-8"))
DIAGNOSTIC_SCHEMA = {"$defs": SCHEMA["$defs"], **SCHEMA["$defs"]["diagnostic"]}

CLEAN = "env X {\n}\n"
UNCLOSED = "env X {"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(output: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    lines = [json.loads(line) for line in output.splitlines()]
    assert "summary" in lines[-1] and all("summary" not in line for line in lines[:-1])
    return lines[:-1], lines[-1]["summary"]


def without_timing(summary: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value for key, value in summary.items() if key not in ("seconds", "specs_per_second")
    }


def mutate_examples(directory: Path, count: int, seed: int = 7) -> list[Path]:
    """Specs made from the examples by deleting, duplicating or swapping a few lines."""
    rng = random.Random(seed)
    texts = [path.read_text("utf-8").splitlines(keepends=True) for path in EXAMPLES]
    made = []
    for number in range(count):
        lines = list(rng.choice(texts))
        for _ in range(rng.randrange(0, 3)):  # 0 mutations: the example itself
            at = rng.randrange(len(lines))
            kind = rng.choice(["delete", "duplicate", "swap"])
            if kind == "delete":
                del lines[at]
            elif kind == "duplicate":
                lines.insert(at, lines[at])
            elif at + 1 < len(lines):
                lines[at], lines[at + 1] = lines[at + 1], lines[at]
        made.append(write(directory / f"spec_{number:03d}.env", "".join(lines)))
    return made


def run_envdsl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    return subprocess.run(
        [sys.executable, "-m", "envdsl", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


# ---- expanding the arguments -----------------------------------------------------------------


def test_quoted_patterns_are_expanded_by_envdsl(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "gen" / "b.env", CLEAN)
    write(tmp_path / "gen" / "a.env", CLEAN)
    write(tmp_path / "gen" / "deep" / "c.env", CLEAN)
    write(tmp_path / "gen" / "notes.txt", "not a spec")
    flat = runner.invoke(main, ["check", "--format", "jsonl", "gen/*.env"])
    assert flat.exit_code == 0, flat.output
    assert [record["file"] for record in jsonl(flat.stdout)[0]] == ["gen/a.env", "gen/b.env"]
    deep = runner.invoke(main, ["check", "--format", "jsonl", "gen/**/*.env"])
    files = [record["file"] for record in jsonl(deep.stdout)[0]]
    assert files == ["gen/a.env", "gen/b.env", "gen/deep/c.env"]
    single = runner.invoke(main, ["check", "--format", "jsonl", "gen/?.env"])
    assert len(jsonl(single.stdout)[0]) == 2


def test_a_directory_means_every_spec_below_it_sorted(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "specs" / "z.env", CLEAN)
    write(tmp_path / "specs" / "a" / "y.env", CLEAN)
    write(tmp_path / "specs" / "b.env", CLEAN)
    write(tmp_path / "specs" / ".env", "SECRET=1\n")  # a dotenv file, not a spec
    write(tmp_path / "specs" / ".git" / "x.env", CLEAN)
    write(tmp_path / "specs" / "README.md", "# specs\n")
    result = runner.invoke(main, ["check", "--format", "jsonl", "specs"])
    assert result.exit_code == 0, result.output
    files = [record["file"] for record in jsonl(result.stdout)[0]]
    assert files == ["specs/a/y.env", "specs/b.env", "specs/z.env"]


def test_mixed_arguments_keep_their_order_without_duplicates(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "one.env", CLEAN)
    write(tmp_path / "specs" / "a.env", CLEAN)
    write(tmp_path / "specs" / "b.env", UNCLOSED)
    write(tmp_path / "gen" / "c.env", CLEAN)
    arguments = ["gen/*.env", "one.env", "specs", "specs/a.env", "./one.env", "gen"]
    result = runner.invoke(main, ["check", "--format", "jsonl", *arguments])
    assert result.exit_code == 1
    records, summary = jsonl(result.stdout)
    assert [record["file"] for record in records] == [
        "gen/c.env",
        "one.env",
        "specs/a.env",
        "specs/b.env",
    ]
    assert summary["files"] == 4 and summary["with_errors"] == 1


def test_patterns_and_directories_that_match_nothing_are_usage_errors(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "ok.env", CLEAN)
    (tmp_path / "empty").mkdir()
    result = runner.invoke(main, ["check", "ok.env", "gen/*.env", "empty", "missing.env"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "envdsl: error: no files match 'gen/*.env'\n"
        "envdsl: error: no *.env files under directory 'empty'\n"
        "envdsl: error: cannot read 'missing.env': no such file\n"
    )
    process = run_envdsl("check", "--format", "jsonl", "nothing/**/*.env", cwd=tmp_path)
    assert process.returncode == 2
    assert (process.stdout, process.stderr) == (
        "",
        "envdsl: error: no files match 'nothing/**/*.env'\n",
    )


def test_a_file_whose_name_looks_like_a_pattern_is_a_file(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "odd[1].env", CLEAN)
    result = runner.invoke(main, ["check", "odd[1].env"])
    assert (result.exit_code, result.stdout) == (0, "odd[1].env: ok\n")


# ---- jsonl and the summary -------------------------------------------------------------------


def test_jsonl_lines_parse_and_the_summary_adds_up(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "clean.env", CLEAN)
    write(tmp_path / "broken.env", UNCLOSED)
    write(tmp_path / "other.env", "env Y {\n  query q( {\n}\n")
    typo = (REPO / "examples" / "sleep_tracking.env").read_text("utf-8")
    write(tmp_path / "typo.env", typo.replace("    return u\n", "    return u.emial\n", 1))
    result = runner.invoke(main, ["check", "--format", "jsonl", "--no-verify", str(tmp_path)])
    assert result.exit_code == 1
    records, summary = jsonl(result.stdout)
    assert [Path(record["file"]).name for record in records] == [
        "broken.env",
        "clean.env",
        "other.env",
        "typo.env",
    ]
    for record in records:
        assert set(record) == {"file", "ok", "errors", "warnings", "diagnostics"}
        for diagnostic in record["diagnostics"]:
            jsonschema.validate(diagnostic, DIAGNOSTIC_SCHEMA)
            assert diagnostic["span"]["file"] == record["file"]
        severities = [diagnostic["severity"] for diagnostic in record["diagnostics"]]
        assert record["errors"] == severities.count("error")
        assert record["warnings"] == severities.count("warning")
        assert record["ok"] is (record["errors"] == 0)
    codes = [d["code"] for record in records for d in record["diagnostics"]]
    assert without_timing(summary) == {
        "files": 4,
        "ok": sum(record["ok"] for record in records),
        "with_errors": sum(not record["ok"] for record in records),
        "unreadable": 0,
        "errors": sum(record["errors"] for record in records),
        "warnings": sum(record["warnings"] for record in records),
        "by_code": {
            code: codes.count(code)
            for code in sorted(set(codes), key=lambda c: (-codes.count(c), c))
        },
    }
    assert summary["by_code"]["E0001"] == 2 and len(summary["by_code"]) == 2
    assert summary["seconds"] > 0 and summary["specs_per_second"] > 0


def test_the_json_document_covers_every_file_of_a_batch(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "a.env", UNCLOSED)
    write(tmp_path / "b.env", CLEAN)
    write(tmp_path / "c.env", UNCLOSED)
    result = runner.invoke(main, ["check", "--format", "json", str(tmp_path)])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, SCHEMA)
    assert [Path(d["span"]["file"]).name for d in document["diagnostics"]] == ["a.env", "c.env"]


def test_text_ends_with_a_summary_only_for_several_files(runner: CliRunner, tmp_path: Path) -> None:
    one = write(tmp_path / "a.env", UNCLOSED)
    write(tmp_path / "b.env", CLEAN)
    write(tmp_path / "c.env", UNCLOSED)
    single = runner.invoke(main, ["check", str(one)])
    assert single.stdout.endswith(f"error: 1 error in {one}\n")
    several = runner.invoke(main, ["check", str(tmp_path)])
    assert several.exit_code == 1
    tail = several.stdout.split("\n\nchecked ", 1)[1]
    assert tail.startswith("3 specs: 1 ok, 2 with errors (2 errors, 0 warnings)\n")
    assert "  E0001  syntax-error       2\n" in tail
    assert tail.endswith(" specs/s\n")
    assert several.stdout.index(f"{tmp_path / 'b.env'}: ok") < several.stdout.index("checked 3")


# ---- parallel --------------------------------------------------------------------------------


def test_jobs_2_gives_the_same_results_as_jobs_1(tmp_path: Path) -> None:
    mutate_examples(tmp_path / "specs", 16, seed=3)
    write(tmp_path / "specs" / "latin1.env", "")
    (tmp_path / "specs" / "latin1.env").write_bytes(b"env Caf\xe9 {\n}\n")
    outputs = {}
    for jobs in ("1", "2", "0"):
        process = run_envdsl("check", "specs", "--format", "jsonl", "--jobs", jobs, cwd=tmp_path)
        assert process.returncode in (0, 1), process.stderr
        assert process.stderr == ""  # no progress bar when stderr is not a terminal
        records, summary = jsonl(process.stdout)
        outputs[jobs] = (records, without_timing(summary))
    assert outputs["1"] == outputs["2"] == outputs["0"]
    assert outputs["1"][1]["files"] == 17 and outputs["1"][1]["unreadable"] == 1
    text = [
        run_envdsl("check", "--no-verify", "-j", jobs, "specs", cwd=tmp_path).stdout
        for jobs in ("1", "2")
    ]
    assert text[0].rsplit("\n", 2)[0] == text[1].rsplit("\n", 2)[0]  # all but the timing line


def test_worker_processes_work_with_spawn(tmp_path: Path) -> None:
    paths = [str(write(tmp_path / f"{n}.env", UNCLOSED if n % 2 else CLEAN)) for n in range(5)]
    arguments: dict[str, Any] = {"verify": False, "output_format": "jsonl", "color": False}
    sequential = list(run_checks(paths, **arguments))
    spawned = list(
        run_checks(paths, jobs=2, mp_context=multiprocessing.get_context("spawn"), **arguments)
    )
    assert spawned == sequential
    assert [record.ok for record in spawned] == [True, False, True, False, True]


def _dying_worker(
    path: str, verify: bool, output_format: str, color: bool, task_files: tuple[str, ...]
) -> FileRecord:
    if "crash" in path:
        os._exit(3)
    return check_one(path, verify, output_format, color, task_files)


def test_a_worker_process_that_dies_yields_an_e9001_record(tmp_path: Path) -> None:
    names = ["a", "b", "crash", "c", "d", "e", "f"]
    paths = [str(write(tmp_path / f"{name}.env", CLEAN)) for name in names]
    records = list(
        run_checks(
            paths, verify=False, output_format="jsonl", color=False, jobs=2, worker=_dying_worker
        )
    )
    assert [record.path for record in records] == paths
    assert [record.ok for record in records] == [name != "crash" for name in names]
    crashed = records[names.index("crash")]
    assert crashed.codes == ("E9001",) and crashed.errors == 1
    assert "worker process" in crashed.diagnostics[0]["message"]
    jsonschema.validate(crashed.diagnostics[0], DIAGNOSTIC_SCHEMA)


# ---- unreadable files and internal errors ----------------------------------------------------


def test_an_unreadable_file_in_a_batch_is_a_record(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "specs" / "good.env", CLEAN)
    (tmp_path / "specs" / "latin1.env").write_bytes(b"env Caf\xe9 {\n}\n")
    result = runner.invoke(main, ["check", "--format", "jsonl", str(tmp_path / "specs")])
    assert result.exit_code == 1  # a batch that read something: the file counts as a failure
    records, summary = jsonl(result.stdout)
    unreadable = records[1]
    assert unreadable["unreadable"] == "not valid UTF-8 (byte 0xe9 at offset 7)"
    assert unreadable["ok"] is False and unreadable["diagnostics"] == []
    assert (summary["files"], summary["ok"], summary["unreadable"]) == (2, 1, 1)
    assert summary["with_errors"] == 0
    text = runner.invoke(main, ["check", str(tmp_path / "specs")])
    assert text.exit_code == 1
    latin1 = tmp_path / "specs" / "latin1.env"
    assert f"error: cannot read '{latin1}': not valid UTF-8" in text.stdout
    assert "1 ok, 0 with errors, 1 unreadable" in text.stdout
    as_json = runner.invoke(main, ["check", "--format", "json", str(tmp_path / "specs")])
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["ok"] is False
    assert f"envdsl: error: cannot read '{latin1}'" in as_json.stderr


def test_a_batch_where_nothing_can_be_read_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.env").write_bytes(b"\xff")
    (tmp_path / "b.env").write_bytes(b"\xfe")
    result = runner.invoke(main, ["check", "--format", "jsonl", str(tmp_path)])
    assert result.exit_code == 2
    records, summary = jsonl(result.stdout)
    assert summary["unreadable"] == summary["files"] == 2


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any file"
)
def test_a_file_without_permission_in_a_batch(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "good.env", CLEAN)
    secret = write(tmp_path / "secret.env", CLEAN)
    secret.chmod(0)
    try:
        result = runner.invoke(main, ["check", "--format", "jsonl", str(tmp_path)])
    finally:
        secret.chmod(0o644)
    records, summary = jsonl(result.stdout)
    assert records[1]["unreadable"] == "permission denied" and summary["unreadable"] == 1


def test_a_spec_that_breaks_the_checker_still_yields_a_record(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import envdsl.pipeline

    real_check_file = envdsl.pipeline.check_file

    def fragile(path: str, verify: bool = True, task_files: Sequence[str] = ()) -> CompileResult:
        if path.endswith("boom.env"):
            raise RecursionError("maximum recursion depth exceeded")
        return real_check_file(path, verify=verify, task_files=task_files)

    monkeypatch.setattr("envdsl.pipeline.check_file", fragile)
    write(tmp_path / "a.env", CLEAN)
    write(tmp_path / "boom.env", CLEAN)
    write(tmp_path / "c.env", CLEAN)
    result = runner.invoke(main, ["check", "--format", "jsonl", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    records, summary = jsonl(result.stdout)
    assert [record["ok"] for record in records] == [True, False, True]
    (diagnostic,) = records[1]["diagnostics"]
    assert diagnostic["code"] == "E9001" and "RecursionError" in diagnostic["message"]
    jsonschema.validate(diagnostic, DIAGNOSTIC_SCHEMA)
    assert summary["by_code"] == {"E9001": 1}
    text = runner.invoke(main, ["check", str(tmp_path)])
    assert "error[E9001]: internal error while checking this file: RecursionError" in text.stdout


def test_an_internal_error_inside_the_pipeline_is_a_record(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_builder(*args: object) -> None:
        raise KeyError("node")

    monkeypatch.setattr("envdsl.syntax.build.build_ast", broken_builder)
    write(tmp_path / "a.env", CLEAN)
    write(tmp_path / "b.env", UNCLOSED)
    result = runner.invoke(main, ["check", "--format", "jsonl", str(tmp_path)])
    records, summary = jsonl(result.stdout)
    assert [d["code"] for d in records[0]["diagnostics"]] == ["E9001"]
    assert [d["code"] for d in records[1]["diagnostics"]] == ["E0001"]
    assert summary["by_code"] == {"E0001": 1, "E9001": 1}


# ---- a corpus of mutated examples ------------------------------------------------------------


def test_sixty_mutated_examples_give_a_consistent_summary(tmp_path: Path) -> None:
    mutate_examples(tmp_path / "corpus", 60)
    process = run_envdsl(
        "check", "corpus", "--format", "jsonl", "--no-verify", "--jobs", "2", cwd=tmp_path
    )
    assert process.returncode in (0, 1), process.stderr
    assert process.stderr == ""
    records, summary = jsonl(process.stdout)
    assert len(records) == summary["files"] == 60
    assert summary["ok"] + summary["with_errors"] == 60 and summary["unreadable"] == 0
    assert summary["ok"] == sum(record["ok"] for record in records)
    assert summary["errors"] == sum(record["errors"] for record in records)
    assert sum(summary["by_code"].values()) == summary["errors"] + summary["warnings"]
    assert 0 < summary["with_errors"] < 60  # some mutations break a spec, some do not
    assert "E9001" not in summary["by_code"]  # no mutation crashes the compiler
    counts = list(summary["by_code"].values())
    assert counts == sorted(counts, reverse=True)
    text = run_envdsl("check", "corpus", "--no-verify", "-j", "2", cwd=tmp_path)
    assert f"checked 60 specs: {summary['ok']} ok, {summary['with_errors']} with errors" in (
        text.stdout
    )


# ---- progress --------------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for number in range(25):
        write(tmp_path / f"{number:02d}.env", UNCLOSED if number % 5 == 0 else CLEAN)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(batch, "PROGRESS_INTERVAL", 0.0)
    code = run_check([str(tmp_path)], output_format="jsonl", color=False, verify=False)
    assert code == 1
    shown = terminal.getvalue()
    assert "\rchecked 1/25 specs  1 with errors" in shown
    assert "\rchecked 25/25 specs  5 with errors" in shown and " specs/s" in shown
    assert shown.endswith("\r")  # cleared: the last write blanks the line
    assert shown.rsplit("\r", 2)[1].strip() == ""
    assert "\r" not in capsys.readouterr().out

    quiet = io.StringIO()  # not a terminal: nothing at all
    monkeypatch.setattr(sys, "stderr", quiet)
    run_check([str(tmp_path)], output_format="jsonl", color=False, verify=False)
    assert quiet.getvalue() == ""
    few = FakeTerminal()
    assert not Progress.wanted(20, few) and Progress.wanted(21, few)


def test_summary_sorts_codes_by_count() -> None:
    summary = Summary()
    summary.add(FileRecord("a", False, 2, 1, ("E0001", "E2001", "W5001")))
    summary.add(FileRecord("b", False, 1, 0, ("E2001",)))
    summary.add(FileRecord("c", True))
    summary.add(FileRecord("d", False, unreadable="permission denied"))
    summary.finish()
    assert list(summary.as_json()["by_code"].items()) == [("E2001", 2), ("E0001", 1), ("W5001", 1)]
    assert summary.as_json()["with_errors"] == 2 and summary.as_json()["unreadable"] == 1
