"""The report's pages in a real browser: headless Chromium (Debian's `chromium`, which .ci/run
installs) opens each page from the file system, with no server, and the test reads back the
DOM after the scripts ran (`--dump-dom`) and the browser's console (`--enable-logging`).

A page passes when every Mermaid source became an SVG of the expected kind, the page script
says drawing ended well (body[data-diagrams]) and the console is empty: the report's own
script logs only failures, and a script that the page's Content-Security-Policy blocked (an
injection that got past escaping) would be logged there too. In CI a missing Chromium is a
failure; elsewhere the test is skipped.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from chat_server import ChatServer
from click.testing import CliRunner
from report_rollouts import write_rollouts

from envdsl.cli import main

TESTS = Path(__file__).parent
REPO = TESTS.parent
BROWSERS = 3  # pages opened at once
PAGE_SECONDS = 120  # one page under a loaded CI machine; a page takes 2-5 s when idle


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's package `chromium`")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def browse(chromium: str, page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    arguments = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    arguments += ["--enable-logging=stderr", "--v=0", "--virtual-time-budget=30000"]
    arguments += [*extra, page.resolve().as_uri()]
    return subprocess.run(
        arguments, capture_output=True, text=True, timeout=PAGE_SECONDS, check=False
    )


def rendered(chromium: str, page: Path) -> str:
    """The DOM of `page` after its scripts ran; fails on any console message."""
    shown = browse(chromium, page, "--dump-dom")
    assert shown.returncode == 0, shown.stderr[-2000:]
    console = [line for line in shown.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], f"{page.name}: {console}"
    return shown.stdout


def drawn_and_dom(chromium: str, page: Path) -> tuple[list[str], str]:
    """The kinds of the diagrams drawn on `page` (er, stateDiagram, xychart), after checking
    that each Mermaid source became one SVG, and the DOM they were read from (a test that
    checks the DOM too reads it from the same browser run: a run takes 2-5 s)."""
    html = page.read_text("utf-8")
    sources = html.count('<pre class="mermaid">')
    dom = rendered(chromium, page)
    expected = "none" if sources == 0 else "rendered"
    assert f'data-diagrams="{expected}"' in dom, page.name
    drawn = re.findall(
        r'<pre class="mermaid" data-rendered="yes"><svg [^>]*?aria-roledescription="([^"]+)"', dom
    )
    assert len(drawn) == sources, page.name
    svgs = re.findall(r'<svg id="(diagram-\d+)"', dom)
    assert len(set(svgs)) == sources  # each its own SVG
    return drawn, dom


def all_drawn(chromium: str, pages: list[Path]) -> list[tuple[list[str], str]]:
    """drawn_and_dom of each page, a few browsers at a time (most of a page's time is the
    browser starting and waiting, not drawing)."""
    with ThreadPoolExecutor(BROWSERS) as pool:
        return list(pool.map(lambda page: drawn_and_dom(chromium, page), pages))


def report(out: Path, *arguments: str | Path) -> list[Path]:
    result = CliRunner().invoke(main, ["report", *map(str, arguments), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return [out / "index.html", *sorted((out / "specs").glob("*.html"))]


def test_the_examples_report_draws_every_diagram(chromium: str, tmp_path: Path) -> None:
    pages = report(tmp_path / "site", REPO / "examples")
    assert len(pages) == 1 + len(list((REPO / "examples").glob("*.env"))) - len(
        list((REPO / "examples").glob("*.tasks.env"))
    )
    shot = tmp_path / "page.png"
    with ThreadPoolExecutor(1) as screenshot:  # taken while the pages are read
        taking = screenshot.submit(
            browse, chromium, pages[1], f"--screenshot={shot}", "--window-size=1280,900"
        )
        kinds = [kind for drawn, _ in all_drawn(chromium, pages) for kind in drawn]
        taken = taking.result()
    assert kinds.count("er") == len(pages) - 1  # every example has entities
    assert "stateDiagram" in kinds  # some have transitions
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_a_synthesized_batch_draws_and_runs_nothing_it_holds(chromium: str, tmp_path: Path) -> None:
    """Mutants of the examples (tests/spec_mutations.py: odd characters, adversarial names,
    token edits), a hostile spec and specs with errors: every page opens, draws its diagrams
    and logs nothing (so no injected script ran, nor was blocked)."""
    sys.path.insert(0, str(TESTS))
    import spec_mutations

    batch = tmp_path / "batch"
    batch.mkdir()
    rng = random.Random(28)
    for number in range(5):
        example, mutations, text = spec_mutations.mutant(rng)
        name = re.sub(r"[^a-z0-9_]", "_", f"{number}_{example}_{mutations}")
        (batch / f"{name}.env").write_text(text, encoding="utf-8", errors="surrogatepass")
    shutil.copy(TESTS / "report_specs" / "hostile.env", batch / "hostile.env")
    shutil.copy(TESTS / "fixtures" / "types" / "compare_enum_with_int.env", batch / "broken.env")
    pages = report(tmp_path / "site", batch)
    assert len(pages) == 8
    doms = {page.name: dom for page, (_, dom) in zip(pages, all_drawn(chromium, pages))}
    dom = next(dom for name, dom in doms.items() if name.endswith("hostile.html"))
    assert len(re.findall(r"<script", dom)) == 2  # the two shipped files, nothing else


def test_rollouts_add_their_plots(chromium: str, tmp_path: Path) -> None:
    server = ChatServer()
    try:
        trajectories = tmp_path / "traj.jsonl"
        write_rollouts(server, TESTS / "rollout_specs" / "counter.env", trajectories, samples=3)
    finally:
        server.close()
    # a model name is text from the file, as untrusted as a spec's
    hostile = '"]; x-axis</pre><script>alert("model")</script>'
    text = trajectories.read_text("utf-8").replace('"model-idle"', json.dumps(hostile))
    trajectories.write_text(text, encoding="utf-8")
    pages = report(
        tmp_path / "site", TESTS / "rollout_specs" / "counter.env", "--rollouts", trajectories
    )
    index, page = pages
    # the index: one pass@k chart per model; the spec: the ER diagram, then per task and
    # model a reward histogram and a pass@k chart
    (index_drawn, index_dom), (page_drawn, page_dom) = all_drawn(chromium, [index, page])
    assert index_drawn == ["xychart"] * 3
    assert page_drawn == ["er"] + ["xychart"] * (2 * 3 * 2)
    for dom in (index_dom, page_dom):
        assert len(re.findall(r"<script", dom)) == 2 and "&lt;script&gt;alert" in dom
