"""Rename behind the language server (envdsl/lsp/rename.py, bundle.py), without the protocol:
on an example with its task file, renaming a declaration of each kind rewrites every use (the
renamed files check exactly as before), and which task files belong to a spec.
The protocol round trip is in tests/test_lsp.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from envdsl.lsp.analysis import analyse
from envdsl.lsp.bundle import spec_path, task_files_for
from envdsl.lsp.rename import (
    RenameError,
    _identifier_paths,
    apply_edits,
    bundle_analysis,
    occurrences,
    rename,
)
from envdsl.pipeline import check_source, read_sources
from envdsl.util.source import SourceFile, Span

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
SLEEP_TASKS = ROOT / "examples" / "sleep_tracking.tasks.env"


def _declarations(spec: SourceFile, tasks: list[SourceFile]) -> dict[str, list[Span]]:
    """The spec's declared names by the kind of declaration (a name that is its own
    definition), in source order."""
    analysis = bundle_analysis(spec, tasks)
    assert analysis.result.spec is not None
    found: dict[str, list[Span]] = {}
    for path in _identifier_paths(analysis.result.spec):
        target = analysis.target_of(path)
        if target is not None and target[2] is not None and target[1] == target[2]:
            kinds = found.setdefault(type(path[-2]).__name__, [])
            if target[2] not in kinds:
                kinds.append(target[2])
    return {kind: sorted(spans, key=lambda s: (s.file, s.start)) for kind, spans in found.items()}


def _check(sources: list[SourceFile]) -> list[tuple[str, str]]:
    result = check_source(sources[0], verify=False, task_files=sources[1:])
    return [(d.code.code, d.span.file) for d in result.diagnostics]


def test_renaming_each_kind_of_declaration_keeps_the_example_as_it_was() -> None:
    spec, *tasks = read_sources(SLEEP, [SLEEP_TASKS])
    before = _check([spec, *tasks])
    declarations = _declarations(spec, tasks)
    assert {"FieldDecl", "Param", "ToolDecl", "EnumMember", "RecordDecl", "TaskDecl"} <= set(
        declarations
    )
    touched_task_file = 0
    for kind, spans in declarations.items():
        for span in (spans[0], spans[-1]):  # the first and the last of each kind
            edits = rename(spec, tasks, span.file, span.start, "renamed_x")
            touched_task_file += str(SLEEP_TASKS) in edits
            renamed = [
                SourceFile(s.path, apply_edits(s.text, edits.get(s.path, [])))
                for s in (spec, *tasks)
            ]
            assert _check(renamed) == before, (kind, span)
            original = spec.text if span.file == spec.path else tasks[0].text
            assert "renamed_x" in apply_edits(original, edits[span.file])
    assert touched_task_file > 0  # names the task file uses were renamed there too


def test_what_cannot_be_renamed_is_refused() -> None:
    spec, *tasks = read_sources(SLEEP, [SLEEP_TASKS])
    text = spec.text
    for offset in (
        text.index("env SleepTracking"),
        text.index("-> int"),
        text.index("minutes_between("),
        text.index("import std"),
    ):
        assert occurrences(bundle_analysis(spec, tasks), spec.path, offset + 1) is None
    field = text.index("email: str") + 1
    with pytest.raises(RenameError, match="is not a name"):
        rename(spec, tasks, spec.path, field, "e-mail")
    with pytest.raises(RenameError, match="would break the spec: E1"):
        rename(spec, tasks, spec.path, field, "name")  # another field of User


def test_a_rename_an_init_file_would_not_follow_is_refused() -> None:
    shop = ROOT / "examples" / "online_shop.env"
    spec, *tasks = read_sources(shop, [ROOT / "examples" / "online_shop.tasks.env"])
    paid = spec.text.index("    paid,") + 5  # a status the store's JSON file holds
    with pytest.raises(RenameError, match="would break the spec: E4003 the initial state"):
        rename(spec, tasks, spec.path, paid, "settled")


def test_renaming_to_the_same_name_changes_nothing() -> None:
    spec, *tasks = read_sources(SLEEP, [SLEEP_TASKS])
    edits = rename(spec, tasks, spec.path, spec.text.index("email: str") + 1, "email")
    assert all(apply_edits(s.text, edits.get(s.path, [])) == s.text for s in (spec, *tasks))


def test_definitions_of_parameters_row_fields_and_transition_states() -> None:
    text = SLEEP.read_text("utf-8")
    analysis = analyse(str(SLEEP), text)
    use = text.index("users.get(user_id)") + len("users.get(")
    declared = analysis.definition(use)
    assert declared is not None and text[declared.start : declared.end] == "user_id"
    assert declared.start < use and text.rfind("(user_id: str", 0, use) < declared.start
    invariant = text.index(": end > start") + 2
    field = analysis.definition(invariant)
    assert field is not None and text[field.start : field.end + 10] == "end: datetime"
    arrow = text.index("open -> in_progress") + len("open -> ")
    member = analysis.definition(arrow)
    assert member is not None and text[member.start : member.end] == "in_progress"
    assert member.start < text.index("transitions")


def _write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_the_task_files_of_a_spec(tmp_path: Path) -> None:
    spec = _write(tmp_path / "shop" / "shop.env", "env Shop {\n}\n")
    _write(tmp_path / "shop" / "other.env", "env Other {\n}\n")
    beside = _write(tmp_path / "shop" / "b.tasks.env", 'tasks for "shop.env" {\n}\n')
    above = _write(tmp_path / "a.tasks.env", '# tasks\ntasks for "shop/shop.env" {\n}\n')
    _write(tmp_path / "shop" / "other.tasks.env", 'tasks for "other.env" {\n}\n')
    _write(tmp_path / "elsewhere" / "x.tasks.env", 'tasks for "../shop/shop.env" {\n}\n')
    _write(tmp_path.parent / f"{tmp_path.name}.tasks.env", 'tasks for "shop/shop.env" {\n}\n')

    def read(path: str) -> str | None:
        return Path(path).read_text(encoding="utf-8")

    assert task_files_for(spec, read, [str(tmp_path)]) == [beside, above]
    assert task_files_for(spec, read) == [beside]  # no workspace: the spec's directory only
    open_editor = {beside: "env NotATaskFile {\n}\n"}  # what an editor holds wins over the disk
    assert task_files_for(spec, lambda p: open_editor.get(p) or read(p), [str(tmp_path)]) == [above]
    assert spec_path(above, read(above) or "") == spec and spec_path(spec, "env Shop {}") == spec
