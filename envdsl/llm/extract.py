"""Find the spec in a model's reply: a fenced block that holds an `env`, or the bare reply."""

from __future__ import annotations

import re

# ```envdsl, ```env, ``` or any other info string; the closing fence may be missing when the
# reply was cut off, in which case the block runs to the end of the reply.
_FENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M
)
_ENV_HEADER = re.compile(r"^[ \t]*env[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\{", re.M)
_PREFERRED_TAGS = ("envdsl", "env", "")


class NoSpecError(ValueError):
    """The reply holds no spec; the message says what was looked for."""


def extract_spec(reply: str) -> str:
    """The spec text of a reply, ending with a newline; raises NoSpecError if there is none.

    Fenced blocks that contain `env Name {` win, ```envdsl over ```env over an untagged fence
    over any other tag; among equals the longest (a model that quotes a fragment before the
    whole spec still gives the whole spec). A reply with no fence is taken whole when it starts
    with the spec itself (`env`, `import` or a comment), as it does under guided decoding.
    """
    candidates: list[tuple[int, int, str]] = []
    for match in _FENCE.finditer(reply):
        body = match.group(3)
        if _ENV_HEADER.search(body):
            tag = match.group(2).lower()
            rank = _PREFERRED_TAGS.index(tag) if tag in _PREFERRED_TAGS else len(_PREFERRED_TAGS)
            candidates.append((rank, -len(body), body))
    if candidates:
        return _finish(min(candidates)[2])
    stripped = reply.strip()
    if _starts_like_a_spec(stripped) and _ENV_HEADER.search(stripped):
        return _finish(stripped)
    if not stripped:
        raise NoSpecError("the reply is empty")
    raise NoSpecError(
        "the reply holds no spec: no ```envdsl block with `env Name {` and the reply does not "
        "start with `env`"
    )


def _starts_like_a_spec(text: str) -> bool:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first.startswith(("env ", "import ", "#")) or bool(_ENV_HEADER.match(first))


def _finish(text: str) -> str:
    return text.strip("\n").rstrip() + "\n"


_TASK_HEADER = re.compile(r"^[ \t]*task[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\{", re.M)


def extract_tasks(reply: str) -> str:
    """The text of a reply's fenced block of tasks (`task name { ... }` blocks, possibly inside
    `tasks for "..." { ... }`), ending with a newline; raises NoSpecError if there is none.
    Of several such blocks the longest wins; a reply with no fence is taken whole when it
    starts with `task` or `tasks for`."""
    bodies = [m.group(3) for m in _FENCE.finditer(reply) if _TASK_HEADER.search(m.group(3))]
    if bodies:
        return _finish(max(bodies, key=len))
    stripped = reply.strip()
    if stripped.startswith(("task ", "tasks ")) and _TASK_HEADER.search(stripped):
        return _finish(stripped)
    if not stripped:
        raise NoSpecError("the reply is empty")
    raise NoSpecError("the reply holds no tasks: no ```envdsl block with `task name {`")
