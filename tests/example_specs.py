"""The example specs and the task files written for them (examples/<name>.tasks.env).

Loops over the examples take EXAMPLES (the specs only: a task file is not a spec to mutate,
rename or explore on its own); what compiles or verifies an example takes its TASK_FILES too,
as `envdsl compile examples/*.env` does.
"""

from __future__ import annotations

from pathlib import Path

from envdsl.tasks.task_files import bundle_paths

REPO = Path(__file__).resolve().parent.parent
BUNDLES = bundle_paths(sorted(str(path) for path in (REPO / "examples").glob("*.env")))
EXAMPLES = [Path(bundle.path) for bundle in BUNDLES]
TASK_FILES = {Path(b.path).stem: [Path(path) for path in b.task_files] for b in BUNDLES}
