"""`envdsl serve`: an environment's tools over the Model Context Protocol (the official SDK).

`tools/list` gives the public tools (internal ones are never exposed) with their JSON schemas
and descriptions; `tools/call` runs `env.call` and answers with the result envelope as JSON
text, `isError` set when `success` is false.  Resources give what an MCP tool list cannot:
`envdsl://task` (the instruction), `envdsl://state` (state JSON and hash) and
`envdsl://evaluation` (the task's checks and reward).

Each MCP session has its own environment.  Over stdio a server process serves one client, so
it holds one environment.  Over HTTP the environment is found by the `Mcp-Session-Id` of the
2025-11-25 protocol; the 2026-07-28 revision has no sessions, so the HTTP server declines its
`server/discover` probe and clients fall back to the session handshake (the SDK's client does
this by itself).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

import envdsl
from envdsl.runtime import Environment
from envdsl.serve.episodes import Episodes

STDIO_SESSION = "stdio"
SESSION_HEADER = "mcp-session-id"
RESOURCES = {
    "envdsl://task": "The task: its name and instruction",
    "envdsl://state": "The environment's state as canonical JSON, and its SHA-256 hash",
    "envdsl://evaluation": "The task's checks on the current state: each result, reward, success",
}


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
    return tools


def result_of(
    env: Environment, name: str, arguments: Mapping[str, Any] | None
) -> types.CallToolResult:
    outcome = env.call(name, dict(arguments or {}))
    text = json.dumps(outcome, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=outcome,
        is_error=not outcome["success"],
    )


def resource_text(env: Environment, uri: str) -> str:
    if uri == "envdsl://task":
        spec = env.TASKS.get(env.task) if env.task is not None else None
        return json.dumps(
            {"task": env.task, "instruction": spec.instruction if spec is not None else None},
            ensure_ascii=False,
        )
    if uri == "envdsl://state":
        return json.dumps({"state": env.state_json(), "hash": env.state_hash()}, ensure_ascii=False)
    if uri == "envdsl://evaluation":
        if env.task is None:
            raise MCPError(code=types.INVALID_PARAMS, message="no task: serve with --task")
        return json.dumps(env.evaluate(), ensure_ascii=False)
    raise MCPError(code=types.INVALID_PARAMS, message=f"unknown resource {uri!r}")


def build_server(episodes: Episodes, *, http: bool) -> Server[Any]:
    """An MCP server whose handlers find the session's environment in `episodes`."""
    probe = episodes.new()

    def environment(ctx: ServerRequestContext[Any]) -> Environment:
        if not http:
            return episodes.get(STDIO_SESSION)
        request = ctx.request
        headers = getattr(request, "headers", None)
        session = headers.get(SESSION_HEADER) if headers is not None else None
        if not session:
            raise MCPError(
                code=types.INVALID_REQUEST,
                message="this server keeps one environment per MCP session: connect with the "
                "session handshake (protocol 2025-11-25)",
            )
        return episodes.get(str(session))

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list(probe))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return result_of(environment(ctx), params.name, params.arguments)

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
        text = resource_text(environment(ctx), uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    instruction = None
    if episodes.task is not None:
        instruction = episodes.env_class.TASKS[episodes.task].instruction
    server: Server[Any] = Server(
        episodes.env_class.NAME,
        version=envdsl.__version__,
        description=episodes.env_class.DESCRIPTION or None,
        instructions=instruction,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
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


async def serve_stdio(episodes: Episodes) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(episodes, http=False)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(episodes: Episodes, host: str, port: int) -> None:
    import uvicorn

    server = build_server(episodes, http=True)
    app = server.streamable_http_app(host=host, json_response=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
