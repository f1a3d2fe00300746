"""`envdsl serve --transport openenv`: the OpenEnv environment contract, on openenv-core's own
server (`create_fastapi_app`: HTTP `/reset`, `/step`, `/state`, `/schema`, `/health`, `/metadata`
and the `/ws` sessions its clients use), with MCP over streamable HTTP at `/mcp`.

The episode contract is envdsl.episode's, as on every face:
- reset takes `task` (a task name) or `state` (a JSON state, object or text), else the task or
  state the server was started with, and an `episode_id` (else one is made); the observation
  carries the task's instruction and `reward` 0 (the episode's reward so far);
- a step is one tool call, `{"name": ..., "arguments": {...}}`, or the final answer,
  `{"answer": "..."}`, which ends the episode; the observation carries the result envelope
  and the evaluation, `reward` is the step's reward (the change of the task's reward: the
  rewards of an episode add up to its final reward) and `done` is the episode's;
- tool names travel inside the action, so a tool named like a contract method (`reset`,
  `step`, `state`, `close`) or like `answer` cannot collide with it and needs no prefix.
A reset with an unknown task or an invalid state answers 422 with the message (over `/ws`,
an error message); a body over `MAX_BODY` bytes answers 413 before it is parsed.

Each WebSocket session has its own environment; the HTTP `/reset` and `/step` endpoints are
OpenEnv's stateless one-shot calls; openenv-core runs each session's calls on a worker
thread of its own.  benchmarks/bench_openenv_sessions.py measures the server's memory over
thousands of opened and closed `/ws` sessions.

`/mcp` is the server of `envdsl serve --transport http` (the official MCP SDK): the same tools
and resources, one environment per MCP session.  MCP sessions and OpenEnv sessions start from
the same task or state but never share an environment.  openenv-core's own `/mcp` (JSON-RPC
for environments built on FastMCP, with `reset`/`step`/`state`/`close` reserved as tool
names) is replaced.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Optional

from fastapi import Request
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

import envdsl
from envdsl.episode import Episode, EpisodeError, Step
from envdsl.serve.sessions import Sessions

MAX_BODY = 4 * 1024 * 1024  # bytes of one HTTP request body (the MCP SDK's default limit)


class ToolCall(Action):  # type: ignore[misc]  # openenv-core ships no type information
    """One tool call of the environment's tools, or the final answer."""

    name: Optional[str] = Field(default=None, description="The tool to call")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Its JSON arguments")
    answer: Optional[str] = Field(
        default=None, description="The final answer to the user (ends the episode)"
    )

    def as_action(self) -> dict[str, Any]:
        """The action as envdsl.episode takes it (which refuses both or neither)."""
        action: dict[str, Any] = {"arguments": self.arguments}
        if self.name is not None:
            action["name"] = self.name
        if self.answer is not None:
            action["answer"] = self.answer
        return action


class ToolObservation(Observation):  # type: ignore[misc]
    """What the agent sees: the result of its call (or, after reset, the instruction)."""

    result: Optional[dict[str, Any]] = Field(default=None, description="The result envelope")
    instruction: Optional[str] = Field(default=None, description="The task's instruction")
    task: Optional[str] = Field(default=None, description="The task being solved")
    episode_id: Optional[str] = Field(default=None, description="The episode's id")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="Tool schemas (reset)")
    state_hash: str = Field(default="", description="SHA-256 of the canonical state JSON")
    evaluation: Optional[dict[str, Any]] = Field(
        default=None, description="The task's checks, reward and success after the step"
    )


class EnvdslState(State):  # type: ignore[misc]
    task: Optional[str] = None
    state_hash: str = ""
    answer: Optional[str] = None
    reward: float = 0.0
    done: bool = False
    state: dict[str, Any] = Field(default_factory=dict)


class EnvdslOpenEnv(OpenEnvEnvironment):  # type: ignore[misc]
    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own runtime environment

    def __init__(self, sessions: Sessions) -> None:
        super().__init__()
        self.sessions = sessions
        self.episode: Episode = sessions.new()

    def reset(
        self,
        seed: Optional[int] = None,
        episode_id: Optional[str] = None,
        task: Optional[str] = None,
        state: Any = None,
        **kwargs: Any,
    ) -> ToolObservation:
        if task is None and state is None:
            task, state = self.sessions.task, self.sessions.state
            state = None if task is not None else state
        start = self.episode.start(task=task, state=state, episode_id=episode_id)
        return ToolObservation(**start, reward=0.0, done=False)

    def step(
        self, action: ToolCall, timeout_s: Optional[float] = None, **kwargs: Any
    ) -> ToolObservation:
        step: Step = self.episode.step(action.as_action())
        return ToolObservation(
            result=step.result,
            task=self.episode.task,
            episode_id=self.episode.episode_id,
            state_hash=step.state_hash,
            evaluation=step.evaluation,
            reward=step.reward,
            done=step.done,
        )

    @property
    def state(self) -> EnvdslState:
        episode = self.episode
        return EnvdslState(
            episode_id=episode.episode_id,
            step_count=episode.steps,
            task=episode.task,
            state_hash=episode.env.state_hash(),
            answer=episode.answer,
            reward=episode.reward,
            done=episode.done,
            state=episode.env.state_json(),
        )

    def get_metadata(self) -> EnvironmentMetadata:
        env = self.episode.env
        return EnvironmentMetadata(
            name=env.NAME, description=env.DESCRIPTION or env.NAME, version=envdsl.__version__
        )


class BodyLimit:
    """ASGI middleware: a request whose body passes `limit` bytes answers 413 unparsed (the
    MCP SDK's endpoint does the same on its side)."""

    def __init__(self, app: Any, limit: int = MAX_BODY) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await self._too_large(send)
                return
        # read the body here (at most `limit` bytes are kept) and replay it to the app: an
        # error raised from inside the app's own read would reach the client as a 400
        parts: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            parts.append(message.get("body", b""))
            received += len(parts[-1])
            if received > self.limit:
                await self._too_large(send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(parts)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()  # after the body: wait for the disconnect
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _too_large(self, send: Any) -> None:
        response = JSONResponse(
            {"detail": f"request body too large (over {self.limit} bytes)"}, status_code=413
        )
        await response({"type": "http"}, _no_body, send)


async def _no_body() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


def build_app(sessions: Sessions, max_sessions: int = 64, host: str = "127.0.0.1") -> Any:
    """openenv-core's app with the MCP SDK's streamable HTTP endpoint at `/mcp`.

    `host` is the address the server binds: on a loopback address the SDK turns on its DNS
    rebinding protection, as `envdsl serve --transport http` does."""
    from envdsl.serve.mcp import SessionCloser, build_server

    app = create_fastapi_app(
        lambda: EnvdslOpenEnv(sessions), ToolCall, ToolObservation, max_concurrent_envs=max_sessions
    )

    async def client_error(request: Request, error: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=422)

    app.add_exception_handler(EpisodeError, client_error)
    # openenv-core answers every /mcp request (POST and WebSocket) with "Environment does not
    # support MCP" unless the environment carries a FastMCP server or client; its routes come
    # first in the list, so they would shadow the SDK's
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != "/mcp"]
    mcp_app = build_server(sessions, http=True).streamable_http_app(host=host, json_response=True)
    # the SDK's app holds one route, `/mcp`, whose endpoint hands requests to its session
    # manager; taking the route itself keeps the path `/mcp` (the app mounted at `/mcp` would
    # answer at `/mcp/mcp`)
    app.router.routes.extend(mcp_app.routes)
    parent = app.router.lifespan_context

    # a sub-application's lifespan never runs, and the session manager only accepts requests
    # while its task group (started by that lifespan) is up: run it inside the parent's
    @contextlib.asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with parent(application) as state, mcp_app.router.lifespan_context(mcp_app):
            yield state

    app.router.lifespan_context = lifespan
    app.add_middleware(SessionCloser, sessions=sessions)
    app.add_middleware(BodyLimit, limit=MAX_BODY)
    return app


def serve_openenv(sessions: Sessions, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(build_app(sessions, host=host), host=host, port=port, log_level="warning")
