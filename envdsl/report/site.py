"""Writing the report as a static site: index.html, one page per spec under specs/, and the
assets (Mermaid, the stylesheet, the page script) under assets/. It opens from the file system:
no server, no network, nothing loaded from elsewhere.

Everything shown comes from the report document (envdsl.report.document) and may have been
written by an LLM, so the templates run with autoescape on; no spec text is ever put into a
script, a style or an attribute other than an escaped `title`/`href` the report makes itself.
Each page also carries a Content-Security-Policy that allows scripts only from files (the
shipped assets): even markup that slipped through could not run inline.

Diagrams: Mermaid (https://mermaid.js.org), its official build from the npm package, is
shipped gzipped in envdsl/report/assets/ (1.6 MB; MIT license beside it) and written out as
assets/mermaid.min.js. It draws entity-relationship and state diagrams and xy charts from short
text sources, so one well-kept library covers the schema, the transitions and the rollout
plots, and the report needs no Python plotting stack and no system package.
"""

from __future__ import annotations

import functools
import gzip
import os
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

ASSETS = ("report.js", "report.css")


@functools.cache
def _templates() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("envdsl.report", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=True,  # every value is untrusted text: escaped unless a template says so
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment


def write_site(report: dict[str, Any], directory: str | os.PathLike[str]) -> list[Path]:
    """Write the site into `directory` (created if missing; files of an earlier report with
    the same names are replaced). Returns the pages written, the index first."""
    root = Path(directory)
    (root / "specs").mkdir(parents=True, exist_ok=True)
    _write_assets(root / "assets")
    templates = _templates()
    index = root / "index.html"
    index.write_text(
        templates.get_template("index.html.j2").render(report=report, root=""), encoding="utf-8"
    )
    pages = [index]
    page = templates.get_template("spec.html.j2")
    for spec in report["specs"]:
        path = root / spec["page"]
        path.write_text(page.render(spec=spec, report=report, root="../"), encoding="utf-8")
        pages.append(path)
    return pages


def _write_assets(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    shipped = resources.files("envdsl.report") / "assets"
    for name in ASSETS:
        (directory / name).write_bytes((shipped / name).read_bytes())
    mermaid = gzip.decompress((shipped / "mermaid.min.js.gz").read_bytes())
    (directory / "mermaid.min.js").write_bytes(mermaid)
    (directory / "mermaid.LICENSE").write_bytes((shipped / "mermaid.LICENSE").read_bytes())
