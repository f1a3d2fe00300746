"""Consistent renaming of a spec's identifiers, for the alpha-equivalence property test and the
fuzz script: a spec and any renaming of it must compile to environments that behave the same.

Only names the spec declares are renamed (everything outside a fixed deny set: the grammar's
words, the builtins and the methods of builtin types, which the semantic modules spell out as
string literals); names inside f-string holes are renamed with the rest.  New names mix random
ones with names of Python and generated-module machinery (`class`, `mro`, `_tmp1`, `C_RATE`,
`SITES`, ...), the names that once captured others.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from envdsl.semantics.builtins import builtin_names
from envdsl.util.resources import grammar_path

ROOT = Path(__file__).resolve().parent.parent
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# strings first (so their words are skipped), then comments, numbers (`1e308` holds no name
# `e308`), then words
LEXEME = re.compile(
    r'(?P<long>f?"""(?:[^"\\]|\\.|"(?!""))*""")'
    r'|(?P<str>f?"(?:[^"\\\n]|\\.)*")'
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<number>[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9_]+)?)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
)
ADVERSARIAL = [
    "class", "class_", "mro", "_x_", "__x", "__y", "_tmp1", "_tmp2", "_tmp3", "C_RATE", "SPEC_A",
    "NAME", "SITES", "TOOLS", "TABLES", "inf", "nan", "self", "rt", "h", "b", "row", "results",
    "copy", "field", "dataclass", "annotations", "enum", "Any", "cast", "ClassVar", "u_x", "x_",
    "x_2", "_fn_x", "_impl_x", "t_x", "s_x", "reset", "trace", "coverage", "step_budget", "def",
    "lambda_", "value", "name", "str_", "list_", "object", "type", "id", "print", "_",
]  # fmt: skip


@cache
def deny() -> frozenset[str]:
    """Words that are not the spec's own names: grammar words, builtins, methods, attributes."""
    words = set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', grammar_path().read_text()))
    semantics = ROOT / "envdsl" / "semantics"
    modules = ("builtins.py", "builtin_table.py", "builtin_rules.py", "check_expr.py", "types.py")
    for module in (*modules, "resolve.py", "check.py"):
        text = (semantics / module).read_text(encoding="utf-8")
        words |= set(re.findall(r"[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']", text))
    words |= set(builtin_names())
    words |= {"true", "false", "none", "initial", "lambda", "not", "and", "or", "in", "is"}
    for module in (ROOT / "stdlib").glob("*.env"):  # imported names are not the spec's
        words |= set(WORD.findall(module.read_text(encoding="utf-8")))
    return frozenset(words)


def enum_members_without_values(text: str) -> set[str]:
    """Members whose JSON value is their name: renaming one changes the canonical order of a
    set of them (sets are ordered by value), a real difference in the state, not a capture."""
    found: set[str] = set()
    for body in re.findall(r"\benum\s+\w+\s*\{([^}]*)\}", text):
        body = re.sub(r'"[^"]*"', '""', body)
        for member in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*(=)?", body):
            if member.group(2) is None:
                found.add(member.group(1))
    return found


def _fstring_words(token: str) -> Iterator[re.Match[str]]:
    """Words inside the `{...}` holes of an f-string token (not inside strings in the hole)."""
    for hole in re.finditer(r"(?<!\{)\{(?!\{)([^{}]*)\}", token):
        code = hole.group(1).split(":", 1)[0] if not hole.group(1).count("[") else hole.group(1)
        for word in WORD.finditer(code):
            if not code[: word.start()].count('"') % 2:
                yield word


def names_in(text: str) -> tuple[set[str], set[str]]:
    """(renameable names, every word that occurs anywhere: never reuse one as a new name)."""
    renameable: set[str] = set()
    literal: set[str] = set()  # whole string literals: `called("tool")` names a tool by text
    everywhere = set(WORD.findall(text))
    for lexeme in LEXEME.finditer(text):
        kind, value = lexeme.lastgroup, lexeme.group()
        if kind == "word" and value not in deny():
            renameable.add(value)
        elif kind == "str" and not value.startswith("f"):
            literal.add(value[1:-1])
    return renameable - literal, everywhere


def json_words(text: str, spec_dir: Path) -> set[str]:
    """Keys and strings of the JSON files a spec loads (`init from`): they name fields."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                found.add(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            found.add(value)

    for path in re.findall(r'init\s+from\s+"([^"]+)"', text):
        file = spec_dir / path
        if os.path.isabs(path) or ".." in path or not file.is_file():
            continue  # in a comment, or a fuzzed path (`/dev/zero`): not an init file
        try:
            walk(json.loads(file.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return found


def renaming(text: str, spec_dir: Path, rng: random.Random) -> dict[str, str]:
    renameable, everywhere = names_in(text)
    fixed = json_words(text, spec_dir) | enum_members_without_values(text)
    names = sorted(renameable - fixed)
    pool = [n for n in ADVERSARIAL if n not in deny() and n not in everywhere]
    rng.shuffle(pool)
    mapping: dict[str, str] = {}
    used = set(everywhere) | set(fixed)
    for name in names:
        # a leading underscore says "unused on purpose" (no W5005): keep it, or its absence
        fitting = [n for n in pool if n.startswith("_") == name.startswith("_")]
        new = fitting[-1] if fitting and rng.random() < 0.4 else ""
        if new:
            pool.remove(new)
        while not new or new in used:
            # no vowels: never a word a lint reads (`add_`, `set_`), never a natural word
            new = rng.choice("bcdfghjklmnpqrstvwxz") + "".join(
                rng.choice("bcdfghjklmnpqrstvwxz_0123456789") for _ in range(rng.randint(1, 8))
            )
            if name[0].isupper():
                new = new.capitalize()
            if name.startswith("_"):
                new = "_" + new
        used.add(new)
        mapping[name] = new
    return mapping


def rename(text: str, mapping: dict[str, str]) -> str:
    out: list[str] = []
    last = 0
    for lexeme in LEXEME.finditer(text):
        kind, value = lexeme.lastgroup, lexeme.group()
        out.append(text[last : lexeme.start()])
        last = lexeme.end()
        if kind == "word":
            out.append(mapping.get(value, value))
        elif value.startswith("f"):
            out.append(_rename_fstring(value, mapping))
        else:
            out.append(value)
    out.append(text[last:])
    return "".join(out)


def _rename_fstring(token: str, mapping: dict[str, str]) -> str:
    def hole(match: re.Match[str]) -> str:
        code = match.group(1)
        renamed = WORD.sub(lambda w: mapping.get(w.group(), w.group()), code)
        return "{" + renamed + "}"

    return re.sub(r"(?<!\{)\{(?!\{)([^{}\"]*)\}", hole, token)


def canonical(value: Any, inverse: dict[str, str]) -> Any:
    """A result or state with renamed names mapped back: keys and whole strings (enum values
    and table names echo spec names)."""
    if isinstance(value, dict):
        return {inverse.get(k, k): canonical(v, inverse) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(item, inverse) for item in value]
    if isinstance(value, str):
        return inverse.get(value, value)
    return value
