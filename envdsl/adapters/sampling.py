"""Valid calls drawn from the current state: what `action_space.sample()` cannot give (a
random string is never a tool call).  The arguments come from envdsl explore's generator
(keys of rows that exist now, enum members, dates near the clock); each drawn call is tried
on a snapshot and rolled back, so the one returned succeeds in this state when any of the
draws did, and is at least well-formed (the tool exists, its arguments have their types)."""

from __future__ import annotations

import random
from typing import Any

from envdsl.explore.arguments import ArgumentGenerator, StateSample
from envdsl.runtime import Environment

ATTEMPTS = 32


def sample_call(env: Environment, rng: random.Random) -> dict[str, Any]:
    """One `{"name", "arguments"}` call of a public tool; the state is left as it was."""
    names = [schema["function"]["name"] for schema in env.tool_schemas()]
    if not names:
        raise ValueError(f"{env.NAME} has no public tools to call")
    state = StateSample(env)
    generator: ArgumentGenerator | None = None
    fallback: dict[str, Any] | None = None
    for _ in range(ATTEMPTS):
        name = rng.choice(names)
        choice = rng.randrange(1 << 32)
        if generator is None:
            generator = ArgumentGenerator(env, choice, state)
        call = {"name": name, "arguments": generator.arguments(name, choice, state)}
        snapshot = env.snapshot()
        result = env.call(name, call["arguments"])
        env.restore(snapshot)
        if result["success"]:
            return call
        if fallback is None and not str(result.get("error", "")).startswith("invalid argument"):
            fallback = call
    return fallback if fallback is not None else call
