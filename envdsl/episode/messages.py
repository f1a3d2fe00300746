"""The system message an episode opens with, shared by rollouts and the dataset records (whose
chat `prompt` is what a rollout's agent is shown first)."""

from __future__ import annotations

from envdsl.runtime import Environment

AGENT_GUIDE = (
    "You act for the user through the tools of this environment. Call tools to look things "
    "up and to make changes; when the request is done (or cannot be done), reply to the user "
    "without calling a tool."
)


def system_message(env_class: type[Environment]) -> str:
    description = env_class.DESCRIPTION.strip() or f"The {env_class.NAME} environment."
    return f"{description}\n\n{AGENT_GUIDE}"
