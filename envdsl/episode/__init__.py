"""envdsl.episode: the one episode contract (start, step, answer, reward, done) that every
face (MCP, OpenEnv, Gymnasium, TRL, rollouts) is built on."""

from envdsl.episode.actions import Action, BadAction, FinalAnswer, ToolCall, parse_action
from envdsl.episode.episode import ENDED, Episode, EpisodeError, Step

__all__ = [
    "ENDED", "Action", "BadAction", "Episode", "EpisodeError", "FinalAnswer", "Step",
    "ToolCall", "parse_action",
]  # fmt: skip
