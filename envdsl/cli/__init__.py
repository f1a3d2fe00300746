"""The `envdsl` command line: parse options, call the pipeline, render. Nothing else lives here.

Exit codes: 0 no errors (warnings allowed), 1 the specs have errors, 2 usage errors (bad
options, a file that cannot be read, an unknown code). Imports of the compiler stages are
lazy so that `envdsl check` never loads the code generator (black, jinja2) or the LLM client.

One module per group of commands registers them on `main` (envdsl/cli/group.py) when imported:
compiling (check, explain, fmt, lsp, compile, schema, verify, grammar), running (run, tasks,
state, serve, explore), models (rollout, synth, import-envscaler) and reporting (report); specs.py reads what commands are given.
"""

from envdsl.cli import (
    compiling,
    models,
    reporting,
    running,
)  # noqa: F401  (they register the commands)
from envdsl.cli.group import main

__all__ = ["main"]
