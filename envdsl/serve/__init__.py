"""Servers that expose an envdsl environment over a protocol, each a thin layer over
envdsl.runtime.Environment: `envdsl serve` speaks MCP (envdsl.serve.mcp) or the OpenEnv
contract (envdsl.serve.openenv), both on the episode layer (envdsl.episode);
envdsl.serve.sessions keeps one episode per client session."""
