"""Rendering an exploration report: text for people, a versioned JSON document for tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envdsl.explore.explorer import ExploreReport, Finding
from envdsl.util.recorded_calls import calls_lines


def _replay_command(spec_path: str, finding: Finding) -> str | None:
    if finding.start is None:
        return None
    calls = finding.trace_file or "trace.jsonl"
    if finding.start.task is not None:
        return f"envdsl run {spec_path} --task {finding.start.task} --calls {calls}"
    return f"envdsl run {spec_path} --state {finding.state_file or 'state.json'} --calls {calls}"


def write_traces(report: ExploreReport, directory: str) -> None:
    """Write each counterexample as JSONL (and a JSON start state once) into `directory`, so
    that the replay command the report prints runs as printed."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    state_file: str | None = None
    for index, finding in enumerate(report.findings, start=1):
        if finding.trace is None or finding.start is None:
            continue
        if finding.start.state is not None and state_file is None:
            state_path = folder / "state.json"
            state_path.write_text(
                json.dumps(finding.start.state, indent=2, ensure_ascii=False) + "\n",
                encoding="utf-8",
            )
            state_file = str(state_path)
        path = folder / f"{index:02d}-{finding.kind}.jsonl"
        path.write_text("".join(line + "\n" for line in trace_lines(finding)), encoding="utf-8")
        finding.trace_file = str(path)
        finding.state_file = state_file


def trace_lines(finding: Finding) -> list[str]:
    return calls_lines(finding.replay())


def render_text(report: ExploreReport, spec_path: str, seed: int) -> str:
    lines = [
        f"explored {report.env} from {len(report.starts)} start state(s), seed {seed}: "
        f"{report.calls} calls",
        "",
        f"{'tool':<32} {'calls':>6} {'ok':>6} {'failed':>6}  most frequent failure",
    ]
    for name, stats in report.tools.items():
        top = stats.failures.most_common(1)
        reason = f"{top[0][0]} ({top[0][1]}x)" if top else ""
        failed = stats.calls - stats.successes
        lines.append(f"{name:<32} {stats.calls:>6} {stats.successes:>6} {failed:>6}  {reason}")
    both = sum(1 for c in report.conditions if c[4] and c[5])
    never_failed = sum(1 for c in report.conditions if c[4] and not c[5])
    never_held = sum(1 for c in report.conditions if c[5] and not c[4])
    unreached = sum(1 for c in report.conditions if not c[4] and not c[5])
    lines += [
        "",
        f"conditions: {len(report.conditions)} require/let-else; {both} both held and failed, "
        f"{never_failed} never failed, {never_held} never held, {unreached} never reached",
    ]
    # each condition counted above, so that a count can be traced to its lines
    for label, held, failed_too in (
        ("never failed", True, False),
        ("never held", False, True),
        ("never reached", False, False),
    ):
        for owner, line, kind, text, passed, failed in report.conditions:
            if (passed > 0) == held and (failed > 0) == failed_too:
                lines.append(
                    f"  {label}: line {line}: `{kind} {text}` in '{owner}' "
                    f"(passed {passed}, failed {failed})"
                )
    for finding in report.findings:
        lines += ["", f"{finding.severity}[{finding.kind}]: {finding.message}"]
        if finding.detail:
            lines += ["  " + line for line in finding.detail.rstrip().splitlines()]
        if finding.trace is not None:
            command = _replay_command(spec_path, finding)
            lines.append(f"  counterexample ({len(finding.replay())} calls; replay: {command}):")
            lines += ["    " + line for line in trace_lines(finding)]
    errors, warnings = len(report.errors), len(report.warnings)
    lines += [
        "",
        f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning"
        f"{'s' if warnings != 1 else ''}",
    ]
    return "\n".join(lines)


def render_timing(report: ExploreReport) -> str:
    return f"time: {report.seconds:.2f} s, {report.calls_per_second:,.0f} calls/s"


def render_json(report: ExploreReport, spec_path: str, seed: int) -> dict[str, Any]:
    return {
        "version": 1,
        "env": report.env,
        "seed": seed,
        "ok": not report.errors,
        "calls": report.calls,
        "seconds": round(report.seconds, 3),
        "calls_per_second": round(report.calls_per_second, 1),
        "starts": report.starts,
        "tools": {
            name: {
                "calls": stats.calls,
                "successes": stats.successes,
                "failures": dict(stats.failures.most_common()),
            }
            for name, stats in report.tools.items()
        },
        "conditions": [
            {"owner": o, "line": line, "kind": k, "condition": text, "passed": p, "failed": f}
            for o, line, k, text, p, f in report.conditions
        ],
        "findings": [
            {
                "severity": f.severity,
                "kind": f.kind,
                "message": f.message,
                "tool": f.tool,
                "detail": f.detail,
                "start": f.start.label if f.start is not None else None,
                "trace": (
                    [{"name": n, "arguments": a} for n, a in f.replay()]
                    if f.trace is not None
                    else None
                ),
                "replay": _replay_command(spec_path, f) if f.trace is not None else None,
            }
            for f in report.findings
        ],
    }
