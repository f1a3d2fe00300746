"""How envdsl's own processes set the garbage collector."""

import gc


def collect_less_often() -> None:
    """Compiling a spec makes hundreds of thousands of small objects that all live until the
    spec is done (tokens, the AST, types, the generated module), and at CPython's default
    thresholds the collector walks them over and over: about a third of checking the ten
    examples in one process. Like mypy, envdsl's own processes (this command line and its
    batch workers) collect after 200,000 allocations, not 700; the library leaves a host
    program's settings alone. Garbage with reference cycles is still collected."""
    gc.set_threshold(200_000, 30, 30)
