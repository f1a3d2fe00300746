"""One episode per client session, shared by the servers (MCP over stdio and HTTP, OpenEnv).

Every session starts an episode of the server's task or JSON state (and may start others);
two sessions never share an environment.  A session's environment is freed when the session
ends (an MCP DELETE, a closed WebSocket), and idle ones are dropped, least recently used
first, past `idle_seconds`, past `max_sessions`, or once the sessions' states together
outgrow `max_bytes`.  A state's canonical JSON size, measured when its episode starts, stands
for its memory: a 3.5 MB state costs hundreds of MB of Python objects in a hundred sessions,
which a count of sessions alone does not bound.  A dropped session that comes back gets a
fresh episode of the server's task or state.

Tool calls run in worker threads (so one slow call never holds up the event loop, and with
it every other session); a session's lock keeps its own calls one at a time.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TypeVar

from envdsl.episode import Episode
from envdsl.runtime import Environment

T = TypeVar("T")
DEFAULT_MAX_BYTES = 512 * 1024 * 1024


@dataclass(slots=True)
class Session:
    episode: Episode
    size: int  # the state JSON's size when the episode started (see the module docstring)
    used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, work: Callable[[Episode], T]) -> T:
        """`work` on this session's episode, alone (calls of one session never interleave)."""
        with self.lock:
            return work(self.episode)


def state_size(env: Environment) -> int:
    return len(json.dumps(env.state_json(), ensure_ascii=False))


class Sessions:
    def __init__(
        self,
        env_class: type[Environment],
        *,
        task: str | None = None,
        state: Mapping[str, Any] | None = None,
        idle_seconds: float = 1800.0,
        max_sessions: int = 10_000,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.env_class = env_class
        self.task = task
        self.state = state
        self.idle_seconds = idle_seconds
        self.max_sessions = max_sessions
        self.max_bytes = max_bytes
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # most recently used last
        self._bytes = 0
        self._lock = threading.Lock()  # the registry's: handlers run in several threads
        # fails early (EpisodeError) on a bad task or state; its size stands for every
        # session's that starts from it
        self.default_size = state_size(self.new().env)

    def new(self) -> Episode:
        """An episode of the server's task or state (a fresh copy of it: the loader must not
        see another session's objects)."""
        episode = Episode(self.env_class)
        episode.start(task=self.task, state=self.state if self.task is None else None)
        return episode

    def get(self, key: str) -> Session:
        """The session's episode, started on first use."""
        now = time.monotonic()
        with self._lock:
            session = self._sessions.pop(key, None)
            if session is None:
                session = Session(self.new(), self.default_size)
                self._bytes += session.size
            session.used = now
            self._sessions[key] = session
            self._drop_idle(now, keep=key)
            return session

    def resized(self, key: str, env: Environment) -> None:
        """The session started another episode: count its state's size instead."""
        size = state_size(env)
        with self._lock:
            session = self._sessions.get(key)
            if session is not None:
                self._bytes += size - session.size
                session.size = size
                self._drop_idle(time.monotonic(), keep=key)

    def close(self, key: str) -> None:
        """The session ended: free its environment now."""
        with self._lock:
            session = self._sessions.pop(key, None)
            if session is not None:
                self._bytes -= session.size

    def _drop_idle(self, now: float, keep: str) -> None:
        for key in list(self._sessions):
            session = self._sessions[key]
            over = len(self._sessions) > self.max_sessions or self._bytes > self.max_bytes
            if key == keep or not (over or now - session.used > self.idle_seconds):
                break
            del self._sessions[key]
            self._bytes -= session.size

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, key: object) -> bool:
        return key in self._sessions
