"""`envdsl serve --transport openenv`: the OpenEnv environment contract, on openenv-core's own
server (`create_fastapi_app`: HTTP `/reset`, `/step`, `/state`, `/schema`, `/health`,
`/metadata` and the `/ws` sessions its clients use), with MCP over streamable HTTP at `/mcp`.

- reset takes `task` (a task name) or `state` (a JSON state, object or text), else the task or
  state the server was started with; the observation carries the task's instruction;
- a step is one tool call, `{"name": ..., "arguments": {...}}`; the observation carries the
  result envelope, `reward` is the task's reward after the call (the share of its checks that
  pass) and `done` is true when every check passes or the agent called `finish`/`answer`;
- tool names travel inside the action, so a tool named like a contract method (`reset`,
  `step`, `state`, `close`) cannot collide with it and needs no prefix.
Each WebSocket session has its own environment (the server builds one per session); the HTTP
`/reset` and `/step` endpoints are OpenEnv's stateless one-shot calls.

`/mcp` is the server of `envdsl serve --transport http` (the official MCP SDK): the same tools
and resources, one environment per MCP session.  MCP sessions and OpenEnv sessions start from
the same task or state but never share an environment: a `/ws` session cannot see what an MCP
session did, nor the other way round.  openenv-core's own `/mcp` (JSON-RPC for environments
built on FastMCP, with `reset`/`step`/`state`/`close` reserved as tool names) is replaced.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, AsyncIterator, Optional

from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

import envdsl
from envdsl.runtime import Environment, InvalidState
from envdsl.serve.episodes import Episodes

FINISH_ACTIONS = ("finish", "answer")


class ToolCall(Action):  # type: ignore[misc]  # openenv-core ships no type information
    """One tool call of the environment's tools."""

    name: str = Field(description="The tool to call")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Its JSON arguments")


class ToolObservation(Observation):  # type: ignore[misc]
    """What the agent sees: the result of its call (or, after reset, the instruction)."""

    result: Optional[dict[str, Any]] = Field(default=None, description="The result envelope")
    instruction: Optional[str] = Field(default=None, description="The task's instruction")
    task: Optional[str] = Field(default=None, description="The task being solved")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="Tool schemas (reset)")
    state_hash: str = Field(default="", description="SHA-256 of the canonical state JSON")


class EnvdslState(State):  # type: ignore[misc]
    task: Optional[str] = None
    state_hash: str = ""
    state: dict[str, Any] = Field(default_factory=dict)


class EnvdslOpenEnv(OpenEnvEnvironment):  # type: ignore[misc]
    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own runtime environment

    def __init__(self, episodes: Episodes) -> None:
        super().__init__()
        self.episodes = episodes
        self.env: Environment = episodes.new()
        self.episode_id: str | None = None
        self.steps = 0
        self.finished = False

    def reset(
        self,
        seed: Optional[int] = None,
        episode_id: Optional[str] = None,
        task: Optional[str] = None,
        state: Any = None,
        **kwargs: Any,
    ) -> ToolObservation:
        self.episode_id, self.steps, self.finished = episode_id, 0, False
        env = self.episodes.env_class()
        if task is not None and state is not None:
            raise ValueError("give a task or a state, not both")
        if task is not None:
            if task not in env.TASKS:
                raise ValueError(env.unknown_task(task))
            env.reset(task=task)
        elif state is not None:
            try:
                env.reset(state=state if isinstance(state, str) else json.loads(json.dumps(state)))
            except (InvalidState, json.JSONDecodeError) as error:
                raise ValueError(f"invalid state: {error}") from None
        else:
            env = self.episodes.new()
        self.env = env
        spec = env.TASKS.get(env.task) if env.task is not None else None
        return ToolObservation(
            instruction=spec.instruction if spec is not None else None,
            task=env.task,
            tools=env.tool_schemas(),
            state_hash=env.state_hash(),
            reward=self._evaluation()[0],
            done=False,
        )

    def _evaluation(self) -> tuple[float | None, bool]:
        if self.env.task is None:
            return None, False
        evaluation = self.env.evaluate()
        return float(evaluation["reward"]), bool(evaluation["success"])

    def step(
        self, action: ToolCall, timeout_s: Optional[float] = None, **kwargs: Any
    ) -> ToolObservation:
        self.steps += 1
        finish = action.name in FINISH_ACTIONS
        if finish and action.name not in self.env.TOOLS:
            result: dict[str, Any] = {"success": True, "data": None}
        else:
            result = self.env.call(action.name, action.arguments)
        self.finished = self.finished or finish
        reward, success = self._evaluation()
        return ToolObservation(
            result=result,
            task=self.env.task,
            state_hash=self.env.state_hash(),
            reward=reward,
            done=success or self.finished,
        )

    @property
    def state(self) -> EnvdslState:
        return EnvdslState(
            episode_id=self.episode_id,
            step_count=self.steps,
            task=self.env.task,
            state_hash=self.env.state_hash(),
            state=self.env.state_json(),
        )

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=self.env.NAME,
            description=self.env.DESCRIPTION or self.env.NAME,
            version=envdsl.__version__,
        )


def build_app(episodes: Episodes, max_sessions: int = 64, host: str = "127.0.0.1") -> Any:
    """openenv-core's app with the MCP SDK's streamable HTTP endpoint at `/mcp`.

    `host` is the address the server binds: on a loopback address the SDK turns on its DNS
    rebinding protection, as `envdsl serve --transport http` does."""
    from envdsl.serve.mcp import build_server

    app = create_fastapi_app(
        lambda: EnvdslOpenEnv(episodes), ToolCall, ToolObservation, max_concurrent_envs=max_sessions
    )
    # openenv-core answers every /mcp request (POST and WebSocket) with "Environment does not
    # support MCP" unless the environment carries a FastMCP server or client; its routes come
    # first in the list, so they would shadow the SDK's
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != "/mcp"]
    mcp_app = build_server(episodes, http=True).streamable_http_app(host=host, json_response=True)
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
    return app


def serve_openenv(episodes: Episodes, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(build_app(episodes, host=host), host=host, port=port, log_level="warning")
