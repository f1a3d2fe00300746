"""Adversarial mutations of valid specs, and the property every mutant must keep.

Shared by the bounded fuzz test (tests/test_fuzz_compiler.py) and the long run
(benchmarks/fuzz_compiler.py).  Beyond the token edits of tests/test_property.py, the mutations
here aim at what broke the compiler before (issue 14): deep nesting of every kind, huge and
long literals, identifiers renamed to names of Python machinery, control characters, odd line
ends and byte order marks, `init from` paths that leave the spec's directory.

The property: `check_source` returns (no exception) within the time limit, with no internal
error (E9001); a spec that checks clean generates a module that imports and builds its tool
schemas.
"""

from __future__ import annotations

import random
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import example_specs
from renaming import ADVERSARIAL, rename, renaming

from envdsl.pipeline import check_source
from envdsl.util.source import SourceFile

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = example_specs.EXAMPLES  # the specs, without task files
TOKEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""|f?"(?:[^"\\\n]|\\.)*"|#[^\n]*|[A-Za-z_][A-Za-z0-9_]*'
    r"|[0-9][0-9_]*(?:\.[0-9]+)?|->|==|!=|<=|>=|\+=|-=|//|\*\*|\S"
)
WRAPPERS = ["not ", "-", "(", "[", "abs(", "len(", "f(", "{", "x.", "1 + ", "a if b else "]
CLOSERS = {"(": ")", "[": "]", "abs(": ")", "len(": ")", "f(": ")", "{": "}"}
ODD = ["\x1b]0;t\x07", "\x00", "\u202e", "\ufeff", "\r", "\r\n", "\t", "\x0c", "é", "字", "\\"]


def _tokens(text: str) -> list[re.Match[str]]:
    return list(TOKEN.finditer(text))


def _at_token(text: str, rng: random.Random, edit: Callable[[str], str]) -> str:
    tokens = _tokens(text)
    if not tokens:  # an earlier mutation emptied the spec
        return edit(text)
    token = rng.choice(tokens)
    return text[: token.start()] + edit(token.group()) + text[token.end() :]


def deep_nesting(text: str, rng: random.Random) -> str:
    wrapper = rng.choice(WRAPPERS)
    depth = rng.choice([20, 45, 70, 201, 1000, 5000])
    closer = CLOSERS.get(wrapper, "")
    if wrapper == "x.":
        return _at_token(text, rng, lambda t: t + ".x" * depth)
    return _at_token(text, rng, lambda t: wrapper * depth + t + closer * depth)


def nested_blocks(text: str, rng: random.Random) -> str:
    depth = rng.choice([11, 13, 21, 98])
    kind = rng.choice(["for i in range(1) {", "if true {", "if x {"])
    body = "\n".join(kind for _ in range(depth)) + "\n" + "}\n" * depth
    lines = text.splitlines(keepends=True)
    index = rng.randrange(len(lines) + 1)
    return "".join(lines[:index]) + body + "".join(lines[index:])


def huge_literal(text: str, rng: random.Random) -> str:
    kind = rng.choice(["int", "float", "string", "long_string", "line"])
    size = rng.choice([999, 1001, 4301, 20_000])
    literal = {
        "int": "9" * size,
        "float": "9" * size + ".5",
        "string": '"' + "a" * size + '"',
        "long_string": '"""' + ("a" * 80 + "\n") * (size // 80) + '"""',
        "line": "x " * size,
    }[kind]
    return _at_token(text, rng, lambda t: literal)


def adversarial_rename(text: str, rng: random.Random) -> str:
    mapping = renaming(text, ROOT / "examples", rng)
    names = sorted(mapping)
    chosen = rng.sample(names, k=min(len(names), rng.randint(1, 6)))
    return rename(text, {name: rng.choice(ADVERSARIAL) for name in chosen})


def odd_characters(text: str, rng: random.Random) -> str:
    char = rng.choice(ODD)
    if char == "\ufeff":
        return char + text
    if char in ("\r", "\r\n"):
        return text.replace("\n", char)
    position = rng.randrange(len(text) + 1)
    return text[:position] + char + text[position:]


def init_path(text: str, rng: random.Random) -> str:
    path = rng.choice(['"/etc/hostname"', '"../README.md"', '"."', '"/dev/zero"', '"x\\u0000"'])
    if "init {" in text:
        return re.sub(r"init \{[^}]*\}", lambda m: f"init from {path}", text, count=1)
    return text


def token_edit(text: str, rng: random.Random) -> str:
    tokens = _tokens(text)
    if not tokens:  # an earlier mutation emptied the spec
        return text + rng.choice(["env", "{", "}", '"x"'])
    a, b = rng.choice(tokens), rng.choice(tokens)
    action = rng.choice(["delete", "duplicate", "replace", "truncate"])
    if action == "delete":
        return text[: a.start()] + text[a.end() :]
    if action == "duplicate":
        return text[: a.end()] + " " + a.group() + text[a.end() :]
    if action == "replace":
        return text[: a.start()] + b.group() + text[a.end() :]
    return text[: a.start()]


MUTATIONS: dict[str, Callable[[str, random.Random], str]] = {
    "deep_nesting": deep_nesting,
    "nested_blocks": nested_blocks,
    "huge_literal": huge_literal,
    "adversarial_rename": adversarial_rename,
    "odd_characters": odd_characters,
    "init_path": init_path,
    "token_edit": token_edit,
}


def mutant(rng: random.Random) -> tuple[str, str, str]:
    """(example name, mutation names, mutated text): one to three mutations of one example."""
    path = rng.choice(EXAMPLES)
    text = path.read_text(encoding="utf-8")
    applied = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        name = rng.choice(sorted(MUTATIONS))
        text = MUTATIONS[name](text, rng)
        applied.append(name)
    return path.stem, "+".join(applied), text


@dataclass
class Outcome:
    seconds: float
    codes: list[str] = field(default_factory=list)
    failure: str = ""  # an escaped exception, an internal error or a broken module
    timed_out: bool = False


class _Hang(Exception):
    pass


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt a hang (main thread, POSIX): a spec must never keep the compiler forever."""

    def alarm(signum: int, frame: object) -> None:
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_one(text: str, limit: float = 30.0) -> Outcome:
    """Check one mutant (in the examples' directory, so `init from` paths resolve there)."""
    started = time.perf_counter()
    outcome = Outcome(0.0)
    try:
        with _time_limit(limit):
            result = check_source(SourceFile(str(ROOT / "examples" / "fuzz.env"), text))
            outcome.codes = [d.code.code for d in result.diagnostics]
            if "E9001" in outcome.codes:
                notes = next(d.notes for d in result.diagnostics if d.code.code == "E9001")
                outcome.failure = "E9001: " + (notes[0].splitlines()[-1] if notes else "")
            elif result.ok and result.checked is not None:
                outcome.failure = _module_failure(result.checked)
    except _Hang:
        outcome.timed_out = True
        outcome.failure = f"no answer after {limit:.0f} s"
    except Exception as error:  # the property: nothing escapes check_source
        outcome.failure = f"escaped {type(error).__name__}: {error}"
    outcome.seconds = time.perf_counter() - started
    return outcome


def _module_failure(checked: object) -> str:
    """A clean spec must give a module that imports and builds its schemas."""
    from envdsl.codegen.emit import generate, output_name
    from envdsl.generated.loader import environment_class, load_module
    from envdsl.semantics.model import CheckedSpec

    assert isinstance(checked, CheckedSpec)
    try:
        module = load_module(
            generate(checked, formatted=False), output_name(checked), register=False
        )
        environment_class(module)().tool_schemas()
    except Exception as error:
        return f"generated module: {type(error).__name__}: {error}"
    return ""
