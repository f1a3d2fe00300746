"""The `report` command: an HTML site (or a JSON document) of specs, their verification and
their rollouts (envdsl.report); and `corpus`, the summary of a directory of specs (a batch's)."""

from __future__ import annotations

import json

import click

from envdsl.cli.group import fail_usage, main, one_line
from envdsl.cli.specs import spec_bundles


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    "output",
    default="report",
    show_default=True,
    help="The directory the site is written to (index.html, specs/, assets/).",
)
@click.option(
    "--rollouts",
    "rollout_files",
    multiple=True,
    metavar="TRAJ.jsonl",
    help="Trajectory files of `envdsl rollout` (repeatable): per task reward distribution, "
    "pass@k and pass^k curves, failed-call rate, turns; models side by side.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Check and verify this many specs at a time in worker processes; 0 = one per core.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["html", "json"]),
    default="html",
    show_default=True,
    help="html: the static site in --output; json: the same data as one document on stdout.",
)
def report(
    files: tuple[str, ...],
    output: str,
    rollout_files: tuple[str, ...],
    jobs: int,
    output_format: str,
) -> None:
    """Write a static HTML report of specs: an index of the batch and a page per spec (schema
    and state diagrams, tools and their effects, rules, tasks and their verification, coverage,
    diagnostics with source lines). It opens from the file system, with no server and no network.

    FILES are specs, task files, directories or quoted patterns, as for `check`. Specs with
    errors are reported too: the exit status is 0 once the report is written."""
    from envdsl.cli.check_batch import resolve_jobs
    from envdsl.report import build_report, write_site
    from envdsl.report.rollouts import RolloutFileError
    from envdsl.util.backends import Backend

    bundles = spec_bundles(files)
    if not bundles:
        fail_usage(f"no specs found in {' '.join(repr(name) for name in files)}")
    try:
        workers = resolve_jobs(jobs, len(bundles))
        backend = Backend(concurrency=workers, processes=workers)
        document = build_report(bundles, rollout_files, backend)
    except RolloutFileError as error:
        fail_usage(one_line(error))
    if output_format == "json":
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    try:
        pages = write_site(document, output)
    except OSError as error:
        fail_usage(f"cannot write the report to '{output}': {one_line(error)}")
    click.echo(f"wrote {len(pages)} pages to {output}; open {pages[0]}")


@main.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--log",
    "log_file",
    type=click.Path(dir_okay=False),
    help="The batch's JSONL log (`synth --batch --log`): how each id ended.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def corpus(directory: str, log_file: str | None, output_format: str) -> None:
    """Summarize a directory of specs, such as a `synth --batch` output: specs clean, tables,
    tools and tasks, and the environments that are near-duplicates by schema.

    \b
      envdsl corpus specs/ --log log.jsonl
    """
    from pathlib import Path

    from envdsl.llm.corpus import corpus_report

    folder = Path(directory)
    if not folder.is_dir():
        fail_usage(f"cannot read '{directory}': no such directory")
    if log_file is not None and not Path(log_file).is_file():
        fail_usage(f"cannot read '{log_file}': no such file")
    report = corpus_report(folder, Path(log_file) if log_file else None)
    if output_format == "json":
        click.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(report.text())
