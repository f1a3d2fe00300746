"""`envdsl verify --trace-dir DIR`: each wrong run that survives mutation testing as a calls
file (the JSONL `envdsl run --calls` reads, as `envdsl explore --trace-dir` writes), so that
an author replays it and sees the full reward it gets."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from envdsl.tasks.task_files import Bundle
from envdsl.util.recorded_calls import calls_lines


def write_survivors(
    reports: list[dict[str, Any]], directory: str, bundle: Bundle
) -> dict[str, list[str]]:
    """Write `<task>-<n>-<kind>.jsonl` per survivor of each report (the JSON form of
    verify's TaskReport); returns, per task, the `envdsl run` command replaying each."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    files = " ".join(shlex.quote(p) for p in (bundle.path, *bundle.task_files))
    commands: dict[str, list[str]] = {}
    for report in reports:
        mutation = report.get("mutation")
        for index, survivor in enumerate(mutation["survivors"] if mutation else [], start=1):
            task = report["task"]
            path = folder / f"{_file_part(task)}-{index:02d}-{survivor['kind']}.jsonl"
            calls = [(c["name"], c["arguments"]) for c in survivor["calls"]]
            path.write_text("".join(line + "\n" for line in calls_lines(calls)), encoding="utf-8")
            command = (
                f"envdsl run {files} --task {shlex.quote(task)} --calls {shlex.quote(str(path))}"
            )
            if survivor["answer"]:
                command += f" --answer {shlex.quote(survivor['answer'])}"
            commands.setdefault(task, []).append(command)
    return commands


def _file_part(name: str) -> str:
    """A task name as part of a file name (task names are identifiers; this is a safeguard)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]
