"""Code generation entry point: checked spec -> formatted Python module source."""

from __future__ import annotations

import functools

import jinja2

from envdsl.codegen.lower import Lowerer
from envdsl.codegen.naming import module_name
from envdsl.semantics.model import CheckedSpec
from envdsl.util.private_dirs import private_dir


@functools.cache
def _templates() -> jinja2.Environment:
    cache = private_dir("jinja2")
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("envdsl.codegen", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # Python, not HTML: every spec string goes through the `py` filter
        keep_trailing_newline=True,
        # compiling the template costs ~40 ms per process; the cache (keyed by the template's
        # checksum) makes `envdsl check` of a spec with tasks start fast.  It is marshalled
        # code, so it lives in the user's private cache directory, or nowhere
        bytecode_cache=jinja2.FileSystemBytecodeCache(cache) if cache is not None else None,
        auto_reload=False,
    )
    environment.filters["py"] = repr
    return environment


def generate(
    checked: CheckedSpec, *, formatted: bool = True, loaders: bool = True, calls: bool = True
) -> str:
    """The module's source; unformatted output is valid Python too (for in-memory use).

    `loaders=False` leaves out the tables' bulk state loaders (codegen/loaders.py; each
    TableSpec's loader is then None): a module that never loads a JSON state, as
    verification's where no task starts `init from` a file, runs the same without them (the
    runtime loads such a table the reference way, which gives the same rows and the same
    errors), and they are a quarter to a third of what `compile` has to do.

    `calls=False` leaves out each tool's whole call and typed-argument method
    (codegen/tool_calls.py; ToolSpec.call and json_arguments are then empty), the row rules
    only the whole calls run (codegen/row_writes.py) and the tools' typed methods (a
    program's way to call them; verification replays through `_solution_call`, `call` and
    `invoke_typed`): every call then takes the
    reference path (the generic parser, `_invoke`, `_verify_touched`), which gives the same
    results, failures, traces and states (tests/test_fast_paths.py compares them). For a
    module whose tools are called a few times each, as verification's, the whole calls cost
    more to compile than they save: they are two fifths of the module. So do the other
    forms written out for the speed of calls, also left out: the tables' inserters and field
    writers (the bodies call `Environment._insert` and `_set`), the record factories (the
    record's class) and sizers (limits' reference walk), a third of what is left to compile
    (verification: 7,080 -> 6,614 M instructions over 31 corpus specs). The JSON writers
    stay: every state hash runs them, and without them verification costs more."""
    view = Lowerer(checked, loaders=loaders, calls=calls).module()
    source = _templates().get_template("module.py.j2").render(vars(view))
    if not formatted:
        return source
    from envdsl.codegen.format import format_python  # black is slow to import: only here

    return format_python(source)


def output_name(checked: CheckedSpec) -> str:
    return module_name(checked.env.name.text)
