"""One environment per client session, shared by the servers."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from typing import Any, Mapping

from envdsl.runtime import Environment


class Episodes:
    """Environments keyed by session: each starts from the same task or JSON state, and two
    sessions never share one.  Sessions that went idle are dropped (the transport forgets
    them too), so a long-running server does not keep every environment it ever made."""

    def __init__(
        self,
        env_class: type[Environment],
        *,
        task: str | None = None,
        state: Mapping[str, Any] | None = None,
        idle_seconds: float = 1800.0,
        max_sessions: int = 10_000,
    ) -> None:
        self.env_class = env_class
        self.task = task
        self.state = state
        self.idle_seconds = idle_seconds
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, tuple[float, Environment]] = OrderedDict()
        self.new()  # fails early (KeyError, InvalidState) on a bad task or state

    def new(self) -> Environment:
        env = self.env_class()
        if self.task is not None:
            env.reset(task=self.task)
        else:
            # a fresh copy each time: the loader must not see another session's objects
            env.reset(state=json.loads(json.dumps(self.state)) if self.state is not None else None)
        return env

    def get(self, session: str) -> Environment:
        now = time.monotonic()
        entry = self._sessions.pop(session, None)
        env = entry[1] if entry is not None else self.new()
        self._sessions[session] = (now, env)  # most recently used last
        while self._sessions:
            oldest, (used, _) = next(iter(self._sessions.items()))
            if len(self._sessions) <= self.max_sessions and now - used <= self.idle_seconds:
                break
            del self._sessions[oldest]
        return env

    def __len__(self) -> int:
        return len(self._sessions)
