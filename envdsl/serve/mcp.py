"""`envdsl serve`: an environment's tools over the Model Context Protocol (the official SDK).

`tools/list` gives the public tools (internal ones are never exposed) with their JSON schemas
and descriptions, then the two tools of the episode contract (envdsl.episode), whose names
hold a hyphen, which no spec's tool name can (names are identifiers), so they never collide:
- `envdsl-start` starts a new episode of a task (`{"task": ...}`), of a JSON state
  (`{"state": {...}}`) or, given neither, of the server's own task or state;
- `envdsl-answer` gives the final answer (`{"text": ...}`), which the task's checks read; it
  ends the episode (later calls are refused until the next start).
`tools/call` runs a call in a worker thread and answers with the result envelope as JSON
text, `isError` set when `success` is false.  The tasks are MCP prompts (`prompts/list`: a
prompt per task; `prompts/get`: its instruction as a user message).  Resources give what a
tool list cannot: `envdsl://task` (the episode's task and instruction), `envdsl://state`
(state JSON and hash) and `envdsl://evaluation` (the task's checks, with the answer given,
reward and success, all from `Environment.evaluate()`).

Each MCP session has its own episode (envdsl.serve.sessions), freed when the client ends
the session (HTTP DELETE; `SessionCloser`), else when it has been idle as long as the SDK
keeps an idle session.
Over HTTP a session is the `Mcp-Session-Id` of the 2025-11-25 protocol; the 2026-07-28
revision has no sessions, so the HTTP server declines its `server/discover` probe and clients
fall back to the session handshake (the SDK's client does this by itself).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping, TypeVar

import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

import envdsl
from envdsl.episode import Episode, EpisodeError
from envdsl.runtime import Environment
from envdsl.serve.sessions import Sessions

T = TypeVar("T")
STDIO_SESSION = "stdio"
SESSION_HEADER = "mcp-session-id"
START_TOOL = "envdsl-start"
ANSWER_TOOL = "envdsl-answer"
RESOURCES = {
    "envdsl://task": "The episode's task: its name and instruction",
    "envdsl://state": "The environment's state as canonical JSON, and its SHA-256 hash",
    "envdsl://evaluation": "The task's checks on the current state and answer: each result, "
    "reward, success",
}


def episode_tools() -> list[types.Tool]:
    return [
        types.Tool(
            name=START_TOOL,
            description="Start a new episode: of a task (its name, as prompts/list gives them), "
            "of a JSON state, or with neither of the server's own task or state. Answers the "
            "task and its instruction.",
            input_schema={
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "A task's name"},
                    "state": {"type": "object", "description": "A JSON state to start from"},
                },
                "additionalProperties": False,
            },
        ),
        types.Tool(
            name=ANSWER_TOOL,
            description="Give the final answer to the user (what the task asked to tell). It "
            "ends the episode.",
            input_schema={
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The answer"}},
                "required": ["text"],
                "additionalProperties": False,
            },
        ),
    ]


def tool_list(env: Environment) -> list[types.Tool]:
    tools = []
    for schema in env.tool_schemas():
        function = schema["function"]
        spec = env.TOOLS[function["name"]]
        tools.append(
            types.Tool(
                name=function["name"],
                description=function["description"],
                input_schema=function["parameters"],
                annotations=types.ToolAnnotations(read_only_hint=spec.kind == "query"),
            )
        )
    return tools + episode_tools()


def _envelope(outcome: Mapping[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(outcome, ensure_ascii=False))],
        structured_content=dict(outcome),
        is_error=not outcome["success"],
    )


def call_in_episode(
    episode: Episode, name: str, arguments: Mapping[str, Any] | None, sessions: Sessions
) -> dict[str, Any]:
    """The result envelope of one call: a spec tool's, or an episode tool's."""
    arguments = dict(arguments or {})
    if name == START_TOOL:
        extra = sorted(set(arguments) - {"task", "state"})
        if extra:
            return {"success": False, "error": f"unexpected argument {extra[0]!r} for {name}"}
        task, state = arguments.get("task"), arguments.get("state")
        if task is None and state is None:
            task, state = sessions.task, sessions.state if sessions.task is None else None
        try:
            start = episode.start(task=task, state=state)
        except EpisodeError as error:
            return {"success": False, "error": str(error)}
        return {"success": True, "data": {k: v for k, v in start.items() if k != "tools"}}
    if name == ANSWER_TOOL:
        text = arguments.get("text")
        if not isinstance(text, str) or set(arguments) != {"text"}:
            return {"success": False, "error": f'{name} takes one argument, "text" (a string)'}
        return episode.give_answer(text).result
    return episode.call(name, arguments).result


def resource_text(episode: Episode, uri: str) -> str:
    if uri == "envdsl://task":
        return json.dumps(
            {"task": episode.task, "instruction": episode.instruction,
             "episode_id": episode.episode_id, "answer": episode.answer},
            ensure_ascii=False,
        )  # fmt: skip
    if uri == "envdsl://state":
        env = episode.env
        return json.dumps({"state": env.state_json(), "hash": env.state_hash()}, ensure_ascii=False)
    if uri == "envdsl://evaluation":
        evaluation = episode.evaluation()
        if evaluation is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"no task: start one with {START_TOOL} (or serve with --task)",
            )
        return json.dumps(evaluation, ensure_ascii=False)
    raise MCPError(code=types.INVALID_PARAMS, message=f"unknown resource {uri!r}")


def build_server(sessions: Sessions, *, http: bool) -> Server[Any]:
    """An MCP server whose handlers find the session's episode in `sessions`."""
    probe = sessions.new().env
    tasks = sessions.env_class.TASKS

    def session_key(ctx: ServerRequestContext[Any]) -> str:
        if not http:
            return STDIO_SESSION  # a stdio server process serves one client
        headers = getattr(ctx.request, "headers", None)
        session = headers.get(SESSION_HEADER) if headers is not None else None
        if not session:
            raise MCPError(
                code=types.INVALID_REQUEST,
                message="this server keeps one environment per MCP session: connect with the "
                "session handshake (protocol 2025-11-25)",
            )
        return str(session)

    async def in_session(ctx: ServerRequestContext[Any], work: Callable[[Episode], T]) -> T:
        session = sessions.get(session_key(ctx))
        # off the event loop: a slow call must not hold up the other sessions
        return await anyio.to_thread.run_sync(session.run, work)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(probe))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name, arguments = params.name, params.arguments
        key = session_key(ctx)

        def work(episode: Episode) -> dict[str, Any]:
            outcome = call_in_episode(episode, name, arguments, sessions)
            if name == START_TOOL and outcome["success"]:
                sessions.resized(key, episode.env)  # the new state's size counts now
            return outcome

        outcome = await in_session(ctx, work)
        return _envelope(outcome)

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name=name, description=spec.instruction.split("\n\n")[0])
                for name, spec in tasks.items()
            ]
        )

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        spec = tasks.get(params.name)
        if spec is None:
            known = ", ".join(tasks) or "none"
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"unknown task {params.name!r}; tasks: {known}"
            )
        return types.GetPromptResult(
            description=f"Task {spec.name}: start it with {START_TOOL} "
            f'{{"task": "{spec.name}"}}, give the answer with {ANSWER_TOOL}',
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=spec.instruction)
                )
            ],
        )

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=uri.split("//")[1], description=text,
                               mime_type="application/json")
                for uri, text in RESOURCES.items()
            ]  # fmt: skip
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        text = await in_session(ctx, lambda episode: resource_text(episode, uri))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    instruction = None
    if sessions.task is not None:
        instruction = tasks[sessions.task].instruction
    server: Server[Any] = Server(
        sessions.env_class.NAME,
        version=envdsl.__version__,
        description=sessions.env_class.DESCRIPTION or None,
        instructions=instruction,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    if http:

        async def no_discover(
            ctx: ServerRequestContext[Any], params: types.RequestParams | None
        ) -> types.DiscoverResult:
            # the sessionless 2026-07-28 era cannot keep an environment per client
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found")

        server.add_request_handler("server/discover", types.RequestParams, no_discover)
    return server


class SessionCloser:
    """ASGI middleware: an MCP session that the client ends (DELETE with its session id)
    frees its environment at once, not when it would have timed out as idle."""

    def __init__(self, app: Any, sessions: Sessions, path: str = "/mcp") -> None:
        self.app, self.sessions, self.path = app, sessions, path

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "DELETE" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        key = next(
            (value.decode("latin-1") for name, value in scope.get("headers", ())
             if name.decode("latin-1").lower() == SESSION_HEADER),
            None,
        )  # fmt: skip

        async def freeing_send(message: Any) -> None:
            # freed as the answer starts, once the SDK has ended the session: a client that
            # has its answer never finds the environment still held
            if key is not None and message["type"] == "http.response.start":
                self.sessions.close(key)
            await send(message)

        await self.app(scope, receive, freeing_send)


async def serve_stdio(sessions: Sessions) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(sessions, http=False)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(sessions: Sessions, host: str, port: int) -> None:
    import uvicorn

    server = build_server(sessions, http=True)
    app = server.streamable_http_app(host=host, json_response=True)
    app.add_middleware(SessionCloser, sessions=sessions)
    uvicorn.run(app, host=host, port=port, log_level="warning")
