"""The `envdsl` command line: exit codes, output formats, usage errors, `explain`, lazy imports.

Specs with errors are syntax errors only: the parser is the one stage whose diagnostics these
tests can rely on while the semantic stages are being written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import jsonschema
import pytest
from click.testing import CliRunner

from envdsl import __version__
from envdsl.cli import main
from envdsl.diagnostics.codes import REGISTRY
from envdsl.diagnostics.diagnostic import DiagnosticSink
from envdsl.diagnostics.explanations import EXPLANATIONS
from envdsl.pipeline import CompileResult
from envdsl.util.source import SourceFile, SourceMap

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((Path(__file__).parent / "diagnostics.schema.json").read_text("utf-8"))

CLEAN = "env X {\n}\n"
UNCLOSED = "env X {"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run_envdsl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real thing in a fresh interpreter, whether or not the package is installed."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "envdsl", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# ---- check: exit codes and output ------------------------------------------------------------


def test_clean_file_exits_0(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "clean.env", CLEAN)
    result = runner.invoke(main, ["check", path])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{path}: ok\n"
    assert result.stderr == ""


def test_syntax_error_exits_1_with_e0001(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "broken.env", UNCLOSED)
    result = runner.invoke(main, ["check", path])
    assert result.exit_code == 1
    assert result.stdout.startswith("error[E0001]: ")
    assert f"--> {path}:1:8" in result.stdout
    assert result.stdout.endswith(f"error: 1 error in {path}\n")
    assert result.stderr == ""


def test_any_file_with_errors_makes_the_exit_code_1(runner: CliRunner, tmp_path: Path) -> None:
    clean = write(tmp_path, "clean.env", CLEAN)
    broken = write(tmp_path, "broken.env", UNCLOSED)
    result = runner.invoke(main, ["check", clean, broken])
    assert result.exit_code == 1
    assert result.stdout.index(f"{clean}: ok") < result.stdout.index("error[E0001]")


def test_warnings_alone_exit_0(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "warn.env", "env X {\n  query q() -> int { return 1 }\n}\n")

    def check_with_a_warning(
        file: str, verify: bool = True, task_files: Sequence[str] = ()
    ) -> CompileResult:
        source = SourceFile(file, Path(file).read_text("utf-8"))
        sources = SourceMap()
        sources.add(source)
        sink = DiagnosticSink()
        start = source.text.index("q(")
        sink.report(REGISTRY["W5001"], "query 'q' has no docstring", source.span(start, start + 1))
        return CompileResult(file, sources, sink)

    monkeypatch.setattr("envdsl.pipeline.check_file", check_with_a_warning)
    result = runner.invoke(main, ["check", path])
    assert result.exit_code == 0
    assert result.stdout.startswith("warning[W5001]: query 'q' has no docstring\n")
    assert result.stdout.endswith(f"warning: 1 warning in {path}\n")
    as_json = runner.invoke(main, ["check", "--format", "json", path])
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["ok"] is True


def test_json_format_is_one_valid_document(runner: CliRunner, tmp_path: Path) -> None:
    clean = write(tmp_path, "clean.env", CLEAN)
    broken = write(tmp_path, "broken.env", UNCLOSED)
    other = write(tmp_path, "other.env", "env Y {\n  query q( {\n}\n")
    result = runner.invoke(main, ["check", "--format", "json", other, clean, broken])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, SCHEMA)
    assert document["version"] == 1 and document["ok"] is False
    assert [d["span"]["file"] for d in document["diagnostics"]] == [other, broken]
    first_error = document["diagnostics"][-1]
    assert first_error["code"] == "E0001" and first_error["slug"] == "syntax-error"
    assert first_error["span"]["start"] == {"line": 1, "col": 8, "offset": 7}


def test_json_format_of_a_clean_file(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "clean.env", CLEAN)
    result = runner.invoke(main, ["check", path, "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"version": 1, "ok": True, "diagnostics": []}


def test_colour_is_off_unless_asked_for(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "broken.env", UNCLOSED)
    assert "\x1b[" not in runner.invoke(main, ["check", path]).stdout
    assert "\x1b[" in runner.invoke(main, ["check", "--color", path], color=True).stdout
    assert "\x1b[" not in runner.invoke(main, ["check", "--no-color", path]).stdout


def test_bundled_example_checks(runner: CliRunner) -> None:
    result = runner.invoke(main, ["check", str(REPO / "examples" / "sleep_tracking.env")])
    assert result.exit_code in (0, 1), result.output  # a verdict, never a usage error or a crash
    assert "E9001" not in result.stdout
    assert result.exception is None or isinstance(result.exception, SystemExit)


# ---- check: usage errors ---------------------------------------------------------------------


def test_missing_file_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["check", str(tmp_path / "nope.env")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"envdsl: error: cannot read '{tmp_path / 'nope.env'}': no such file\n"


def test_directory_without_specs_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    """A directory means every *.env below it (tests/test_batch.py); none at all is a mistake."""
    result = runner.invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"envdsl: error: no *.env files under directory '{tmp_path}'\n"


def test_non_utf8_file_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "latin1.env"
    path.write_bytes("env Caf\xe9 {\n}\n".encode("latin-1"))
    result = runner.invoke(main, ["check", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"envdsl: error: cannot read '{path}': not valid UTF-8 (byte 0xe9 at offset 7)\n"
    )


def test_unreadable_file_is_a_usage_error(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(file: str, verify: bool = True, task_files: Sequence[str] = ()) -> CompileResult:
        raise PermissionError(13, "Permission denied", file)

    monkeypatch.setattr("envdsl.pipeline.check_file", denied)
    result = runner.invoke(main, ["check", "secret.env"])
    assert result.exit_code == 2
    assert result.stderr == "envdsl: error: cannot read 'secret.env': permission denied\n"


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any file"
)
def test_unreadable_file_on_disk(tmp_path: Path) -> None:
    path = Path(write(tmp_path, "secret.env", CLEAN))
    path.chmod(0)
    try:
        result = run_envdsl("check", str(path), cwd=tmp_path)
    finally:
        path.chmod(0o644)
    assert result.returncode == 2
    assert result.stderr == f"envdsl: error: cannot read '{path}': permission denied\n"


def test_one_unreadable_file_among_good_ones_prints_only_the_error(
    runner: CliRunner, tmp_path: Path
) -> None:
    clean = write(tmp_path, "clean.env", CLEAN)
    result = runner.invoke(main, ["check", "--format", "json", clean, str(tmp_path / "x.env")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "no such file" in result.stderr


def test_bad_options_are_usage_errors(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "clean.env", CLEAN)
    assert runner.invoke(main, ["check"]).exit_code == 2
    assert runner.invoke(main, ["check", "--format", "xml", path]).exit_code == 2
    assert runner.invoke(main, ["frobnicate"]).exit_code == 2


def test_version(runner: CliRunner) -> None:
    result = runner.invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"envdsl, version {__version__}\n"


# ---- explain ---------------------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_explain_every_code(runner: CliRunner, code: str) -> None:
    entry = REGISTRY[code]
    result = runner.invoke(main, ["explain", code])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith(f"{code} [{entry.slug}]: {entry.summary}\n")
    assert f"severity: {entry.severity.value}, stage: {entry.stage.value}\n" in out
    explanation = EXPLANATIONS[code]
    assert explanation.text.split()[0] in out
    if explanation.wrong:
        assert "\nWrong:\n" in out and "\nRight:\n" in out
        assert out.index("Wrong:") < out.index("Right:")
        first_line = explanation.wrong.splitlines()[0]
        assert f"    {first_line}\n" in out


@pytest.mark.parametrize(
    "spelling", ["E2001", "e2001", " E2001 ", "type-mismatch", "Type-Mismatch"]
)
def test_explain_accepts_codes_and_slugs(runner: CliRunner, spelling: str) -> None:
    result = runner.invoke(main, ["explain", spelling])
    assert result.exit_code == 0
    assert result.stdout.startswith("E2001 [type-mismatch]")


def test_explain_unknown_code_suggests_close_matches(runner: CliRunner) -> None:
    result = runner.invoke(main, ["explain", "E20091"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(
        "envdsl: error: unknown diagnostic code 'E20091'; did you mean "
    )
    assert "E2009 (key-count)" in result.stderr
    slug = runner.invoke(main, ["explain", "type-mismach"])
    assert slug.exit_code == 2
    assert "did you mean E2001 (type-mismatch)?" in slug.stderr


def test_explain_unknown_code_without_close_matches(runner: CliRunner) -> None:
    result = runner.invoke(main, ["explain", "zzzzzz"])
    assert result.exit_code == 2
    assert "envdsl explain --list" in result.stderr


def test_explain_list_names_every_code(runner: CliRunner) -> None:
    result = runner.invoke(main, ["explain", "--list"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == len(REGISTRY)
    for line, entry in zip(lines, REGISTRY.values()):
        assert line.split()[:3] == [entry.code, entry.severity.value, entry.slug]
        assert line.endswith(entry.summary)


def test_explain_needs_a_code_or_list(runner: CliRunner) -> None:
    assert runner.invoke(main, ["explain"]).exit_code == 2
    assert runner.invoke(main, ["explain", "E2001", "--list"]).exit_code == 2


# ---- real processes ----------------------------------------------------------------------------


def test_subprocess_exit_codes_and_streams(tmp_path: Path) -> None:
    write(tmp_path, "clean.env", CLEAN)
    write(tmp_path, "broken.env", UNCLOSED)
    (tmp_path / "binary.env").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "folder.env").mkdir()

    clean = run_envdsl("check", "clean.env", cwd=tmp_path)
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "clean.env: ok\n", "")

    broken = run_envdsl("check", "broken.env", cwd=tmp_path)
    assert broken.returncode == 1
    assert "error[E0001]" in broken.stdout and "\x1b[" not in broken.stdout  # not a tty
    assert broken.stderr == ""

    as_json = run_envdsl("check", "--format", "json", "broken.env", cwd=tmp_path)
    assert as_json.returncode == 1
    jsonschema.validate(json.loads(as_json.stdout), SCHEMA)

    for name, reason in [
        ("missing.env", "no such file"),
        ("binary.env", "not valid UTF-8 (byte 0xff at offset 0)"),
    ]:
        failed = run_envdsl("check", name, cwd=tmp_path)
        assert failed.returncode == 2, name
        assert failed.stdout == ""
        assert failed.stderr == f"envdsl: error: cannot read '{name}': {reason}\n"
        assert "Traceback" not in failed.stderr
    empty = run_envdsl("check", "folder.env", cwd=tmp_path)  # a directory: the *.env below it
    assert (empty.returncode, empty.stdout) == (2, "")
    assert empty.stderr == "envdsl: error: no *.env files under directory 'folder.env'\n"

    unknown = run_envdsl("explain", "E9999", cwd=tmp_path)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    usage = run_envdsl("check", cwd=tmp_path)
    assert usage.returncode == 2 and "Traceback" not in usage.stderr


@pytest.mark.parametrize(
    "output_format, verify", [("text", False), ("json", False), ("text", True)]
)
def test_check_never_imports_the_code_generator_or_the_llm_client(
    tmp_path: Path, output_format: str, verify: bool
) -> None:
    """Static checking never loads jinja2, black or openai; running the tasks needs the
    generated environment (jinja2) but never the formatter or the LLM client."""
    write(tmp_path, "broken.env", UNCLOSED)
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    process = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "envdsl"]
        + [
            "check",
            "--format",
            output_format,
            *([] if verify else ["--no-verify"]),
            "broken.env",
            str(REPO / "examples" / "sleep_tracking.env"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode in (0, 1), process.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in process.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert "envdsl.cli" in imported  # the importtime output was read correctly
    forbidden = {"black", "openai"} if verify else {"black", "jinja2", "openai"}
    heavy = {name for name in imported if name.split(".")[0] in forbidden}
    assert heavy == set()
