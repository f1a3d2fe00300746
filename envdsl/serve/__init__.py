"""Servers that expose an envdsl environment over a protocol, each a thin layer over
envdsl.runtime.Environment: `envdsl serve` speaks MCP (envdsl.serve.mcp) or the OpenEnv
contract (envdsl.serve.openenv); envdsl.serve.episodes keeps one environment per session."""
