"""Property tests: the compiler survives any damage to a valid spec.

Every `examples/*.env` is mutated the way a half-finished edit or a sloppy LLM damages a spec
(a token or line deleted, duplicated, swapped or inserted, the file cut short) and checked.
Whatever the input, `check_source` must return diagnostics rather than raise, every span must
lie inside its file, every code must be registered and every message must say something; an
E9001 (internal error) is a compiler bug.

The runs are derandomized so CI is stable; set ENVDSL_FUZZ_EXAMPLES=2000 (and optionally
ENVDSL_FUZZ_RANDOM=1) for a longer local hunt.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import example_specs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envdsl.diagnostics.codes import REGISTRY
from envdsl.pipeline import CompileResult, check_source
from envdsl.util.source import SourceFile, Span

EXAMPLES = example_specs.EXAMPLES  # the specs, without task files
SPECS = [path.read_text(encoding="utf-8") for path in EXAMPLES]
PATH = "fuzz.env"

# Tokens as an author sees them; exactness does not matter, only that mutations cut at
# plausible boundaries (a string or a comment is one token).
TOKEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r'|f?"(?:[^"\\\n]|\\.)*"'
    r"|#[^\n]*"
    r"|[A-Za-z_][A-Za-z0-9_]*"
    r"|[0-9][0-9_]*(?:\.[0-9]+)?"
    r"|->|==|!=|<=|>=|\+=|-=|//|\*\*"
    r"|\S"
)
VOCABULARY = ["{", "}", "(", ")", ",", ":", "=", "==", "let", "if", "else", "for", "return"]
VOCABULARY += ['"x"', "1", "none"]

FUZZ_EXAMPLES = int(os.environ.get("ENVDSL_FUZZ_EXAMPLES", "75"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("ENVDSL_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def tokens(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in TOKEN.finditer(text)]


TOKENS = [tokens(text) for text in SPECS]
LINES = [text.splitlines(keepends=True) for text in SPECS]

spec_index = st.integers(min_value=0, max_value=len(SPECS) - 1)


# ---- the properties --------------------------------------------------------------------------


def assert_well_behaved(text: str) -> CompileResult:
    result = check_source(SourceFile(PATH, text))  # must not raise
    for diagnostic in result.diagnostics:
        assert REGISTRY.get(diagnostic.code.code) is diagnostic.code, diagnostic
        assert diagnostic.message.strip(), diagnostic
        assert_span_inside(diagnostic.span, text, result)
        for fix in diagnostic.fixes:
            for edit in fix.edits:
                assert_span_inside(edit.span, text, result)
        assert diagnostic.code.code != "E9001", (
            "internal error for input:\n" + text + ("\n" + "\n".join(diagnostic.notes))
        )
    return result


def assert_span_inside(span: Span, text: str, result: CompileResult) -> None:
    if span.file == PATH:
        length = len(text)
    else:  # a span in an imported stdlib module
        source = result.sources.get(span.file)
        assert source is not None, f"span in unknown file {span.file!r}"
        length = len(source.text)
    assert 0 <= span.start <= span.end <= length, (span, length)


# ---- mutations -------------------------------------------------------------------------------


@FUZZ
@given(spec_index, st.data())
def test_delete_a_token(index: int, data: st.DataObject) -> None:
    start, end = data.draw(st.sampled_from(TOKENS[index]))
    text = SPECS[index]
    assert_well_behaved(text[:start] + text[end:])


@FUZZ
@given(spec_index, st.data())
def test_delete_a_line(index: int, data: st.DataObject) -> None:
    lines = list(LINES[index])
    del lines[data.draw(st.integers(0, len(lines) - 1))]
    assert_well_behaved("".join(lines))


@FUZZ
@given(spec_index, st.data())
def test_duplicate_a_line(index: int, data: st.DataObject) -> None:
    lines = list(LINES[index])
    at = data.draw(st.integers(0, len(lines) - 1))
    lines.insert(at, lines[at])
    assert_well_behaved("".join(lines))


@FUZZ
@given(spec_index, st.data())
def test_swap_two_lines(index: int, data: st.DataObject) -> None:
    lines = list(LINES[index])
    first = data.draw(st.integers(0, len(lines) - 1))
    second = data.draw(st.integers(0, len(lines) - 1))
    lines[first], lines[second] = lines[second], lines[first]
    assert_well_behaved("".join(lines))


@FUZZ
@given(spec_index, st.data())
def test_swap_two_adjacent_tokens(index: int, data: st.DataObject) -> None:
    spans = TOKENS[index]
    at = data.draw(st.integers(0, len(spans) - 2))
    (a_start, a_end), (b_start, b_end) = spans[at], spans[at + 1]
    text = SPECS[index]
    swapped = text[b_start:b_end] + text[a_end:b_start] + text[a_start:a_end]
    assert_well_behaved(text[:a_start] + swapped + text[b_end:])


@FUZZ
@given(spec_index, st.data(), st.sampled_from(VOCABULARY))
def test_insert_a_token(index: int, data: st.DataObject, token: str) -> None:
    boundaries = [start for start, _ in TOKENS[index]] + [len(SPECS[index])]
    at = data.draw(st.sampled_from(boundaries))
    text = SPECS[index]
    assert_well_behaved(text[:at] + token + " " + text[at:])


@FUZZ
@given(spec_index, st.data())
def test_truncate(index: int, data: st.DataObject) -> None:
    text = SPECS[index]
    assert_well_behaved(text[: data.draw(st.integers(0, len(text)))])


@settings(FUZZ, max_examples=max(10, FUZZ_EXAMPLES // 2))
@given(spec_index, st.data())
def test_several_token_edits(index: int, data: st.DataObject) -> None:
    """Two to four deletions and insertions at once: the damage of a real half-made edit."""
    text = SPECS[index]
    for _ in range(data.draw(st.integers(2, 4))):
        spans = tokens(text)
        start, end = data.draw(st.sampled_from(spans))
        replacement = data.draw(st.sampled_from(["", *VOCABULARY]))
        text = text[:start] + replacement + text[end:]
    assert_well_behaved(text)


# ---- the unmutated corpus --------------------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_examples_are_clean(path: Path) -> None:
    result = assert_well_behaved(path.read_text(encoding="utf-8"))
    assert result.ok, [(d.code.code, d.message) for d in result.diagnostics]


def test_the_tokenizer_covers_the_examples() -> None:
    # Only whitespace lies between tokens, so a mutation never cuts a string or a comment.
    for text, spans in zip(SPECS, TOKENS):
        ends = [0] + [end for _, end in spans]
        starts = [start for start, _ in spans] + [len(text)]
        gaps = [text[end:start] for end, start in zip(ends, starts)]
        assert all(gap.strip() == "" for gap in gaps)
        assert any(text[start:end].startswith('"""') for start, end in spans)
