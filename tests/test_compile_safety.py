"""`envdsl compile` on the specs that once raised tracebacks or wrote an unsafe module name.

Each is a diagnostic now (exit 1, nothing written) or compiles cleanly; a module is never named
like a module it could shadow for its siblings in the output directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from envdsl.cli import main

FAILING_DEFAULT = '''env Pages {
  """Paged listing."""
  query page(size: int = 1 // 0) -> int {
    """The page size."""
    return size
  }
}
'''
MRO_MEMBER = '''env Colours {
  """Colours, one of them named like a method of every class."""
  enum Colour { red, mro }
  query echo(c: Colour) -> Colour {
    """Echo."""
    return c
  }
}
'''
NESTED_FOR = (
    'env Loops {\n  """Loops."""\n  query count() -> int {\n    """Count."""\n    let n = 0\n'
    + "".join(f"    for x{i} in range(1) {{\n" for i in range(21))
    + "    n += 1\n"
    + "    }\n" * 21
    + "    return n\n  }\n}\n"
)


def compile_spec(tmp_path: Path, text: str, name: str = "spec.env") -> tuple[int, str, Path]:
    spec = tmp_path / name
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["compile", str(spec), "-o", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output, out


@pytest.mark.parametrize(
    "text, code", [(FAILING_DEFAULT, "E4023"), (NESTED_FOR, "E0021")], ids=["default", "for"]
)
def test_a_spec_without_tasks_gets_a_diagnostic_not_a_traceback(
    tmp_path: Path, text: str, code: str
) -> None:
    exit_code, output, out = compile_spec(tmp_path, text)
    assert exit_code == 1 and f"error[{code}]" in output and "Traceback" not in output
    assert not out.exists()


def test_an_enum_member_named_mro_compiles(tmp_path: Path) -> None:
    exit_code, output, out = compile_spec(tmp_path, MRO_MEMBER)
    assert exit_code == 0, output
    assert "mro" in (out / "colours.tools.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("env_name", ["Datetime", "Json", "Envdsl", "Typing", "Lark"])
def test_a_module_is_never_named_like_one_it_could_shadow(tmp_path: Path, env_name: str) -> None:
    text = MRO_MEMBER.replace("env Colours", f"env {env_name}")
    exit_code, output, out = compile_spec(tmp_path, text)
    assert exit_code == 0, output
    assert sorted(p.name for p in out.iterdir()) == [
        f"{env_name.lower()}_env.py",
        f"{env_name.lower()}_env.tools.json",
    ]


def test_an_enum_member_default_is_not_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    """`envdsl check` generates the module to compute defaults only when one could fail: an
    enum member cannot (the type checker resolved it), a computed one still is."""
    import envdsl.codegen.emit as emit
    from envdsl.pipeline import check_source
    from envdsl.util.source import SourceFile

    generated: list[str] = []
    real = emit.generate

    def generate(*args: object, **kwargs: object) -> str:
        generated.append("module")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(emit, "generate", generate)
    member = MRO_MEMBER.replace("echo(c: Colour)", "echo(c: Colour = Colour.mro)")
    assert check_source(SourceFile("a.env", member), verify=False).ok
    assert generated == []
    computed = MRO_MEMBER.replace("echo(c: Colour)", "echo(c: Colour, n: int = -1)")
    assert check_source(SourceFile("b.env", computed), verify=False).ok
    assert generated == ["module"]
    failing = check_source(SourceFile("c.env", FAILING_DEFAULT), verify=False)
    assert [d.code.code for d in failing.diagnostics] == ["E4023"]
