"""One rollout: an agent loop of one task sample through an OpenAI-compatible model.

The system message is the environment's description, the first user message the task's
instruction, the tools the spec's schemas. The run is an episode of envdsl.episode (the
contract every face shares): each tool call the model makes is one of its steps, with its
arguments as the model wrote them, so a call with arguments that are not
JSON, or of a tool that does not exist, gets the runtime's error result as its tool message,
as an agent deployed on the environment would. The loop ends when the model answers without a
tool call (that answer is the episode's final step: the `answer` the task's checks read) or
after `max_turns` replies.

With a simulated user (`--user-model`, as τ-bench runs conversational tasks) the agent never
sees the instruction: a second model is given it, told to pursue it as a customer would, and
talks to the agent; each answer of the agent goes to the user, whose reply is the agent's next
user message, until the user ends the conversation (STOP) or the turn limit. The checks read
the agent's last answer; the record holds the user's side too.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from envdsl.episode import Episode
from envdsl.episode.messages import system_message
from envdsl.rollout.records import (
    FINISH_ANSWER,
    FINISH_ERROR,
    FINISH_MAX_TURNS,
    Record,
    Sampling,
    provenance,
)

if TYPE_CHECKING:
    from envdsl.llm.client import ChatClient
    from envdsl.rollout.plan import EnvSource, Job
    from envdsl.runtime import Environment

STOP = "###STOP###"
USER_GUIDE = (
    "You are a customer talking to the support agent of a system ({env}). What you want is "
    "below. Tell the agent what you need the way a customer would: start with a short request, "
    "give details (names, ids, dates) only when the agent needs them, never invent details "
    "that are not in your goal, and do not mention that you follow instructions. When what you "
    "want is done, or the agent says it cannot be done, reply with exactly {stop} and nothing "
    "else.\n\nYour goal:\n{instruction}"
)
AGENT_GREETING = "Hi! How can I help you today?"


class SimulatedUser:
    """The user's side of a conversation, kept as the user model sees it (the agent's
    messages are its `user` turns, its own are `assistant` turns)."""

    def __init__(self, client: ChatClient, env: str, instruction: str, seed: int | None) -> None:
        self.client = client
        self.seed = seed
        guide = USER_GUIDE.format(env=env, stop=STOP, instruction=instruction)
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": guide}]
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def reply(self, agent_says: str) -> str | None:
        """The user's answer to the agent, or None when the user ends the conversation."""
        self.messages.append({"role": "user", "content": agent_says})
        turn = self.client.complete_with_tools(self.messages, [], seed=self.seed)
        self.prompt_tokens += turn.prompt_tokens
        self.completion_tokens += turn.completion_tokens
        text = str(turn.message["content"])
        self.messages.append({"role": "assistant", "content": text})
        return None if STOP in text else text

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.client.config.model,
            "messages": self.messages,
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
        }


@dataclass(slots=True)
class _Counts:
    turns: int = 0
    tool_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    env_seconds: float = 0.0
    started: float = field(default_factory=time.perf_counter)


def run_episode(
    env_class: type[Environment],
    source: EnvSource,
    job: Job,
    client: ChatClient,
    sampling: Sampling,
    user_client: ChatClient | None = None,
) -> Record:
    """Roll out one task sample; never raises for what the model or the server does (a server
    that fails after its retries gives a record with finish "error")."""
    from envdsl.llm.client import LLMError

    counts = _Counts()
    episode = Episode(env_class)
    start = episode.start(task=job.task)
    counts.env_seconds = time.perf_counter() - counts.started
    tools = start["tools"]
    instruction = env_class.TASKS[job.task].instruction
    seed = sampling.seed + job.sample if sampling.seed is not None else None
    user = (
        SimulatedUser(user_client, env_class.NAME, instruction, seed)
        if user_client is not None
        else None
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_message(env_class)}]
    answer = ""
    finish = FINISH_MAX_TURNS
    error: dict[str, str] | None = None
    try:
        opening = user.reply(AGENT_GREETING) if user is not None else instruction
        if opening is None:  # the user left before asking anything
            finish = FINISH_ANSWER
        else:
            messages.append({"role": "user", "content": opening})
        while finish == FINISH_MAX_TURNS and counts.turns < sampling.max_turns:
            started = time.perf_counter()
            turn = client.complete_with_tools(messages, tools, seed=seed)
            counts.model_seconds += time.perf_counter() - started
            counts.turns += 1
            counts.prompt_tokens += turn.prompt_tokens
            counts.completion_tokens += turn.completion_tokens
            messages.append(turn.message)
            calls = turn.message.get("tool_calls")
            if not calls:
                answer = turn.message["content"]
                follow_up = user.reply(answer) if user is not None else None
                if follow_up is None:
                    finish = FINISH_ANSWER
                    break
                messages.append({"role": "user", "content": follow_up})
                continue
            for call in calls:
                messages.append(_execute(episode, call, counts))
    except LLMError as failure:
        finish = FINISH_ERROR
        error = {"kind": failure.kind, "message": str(failure)}
    started = time.perf_counter()
    # the episode's last step: the agent's last answer (empty if it gave none), graded
    evaluation = episode.give_answer(answer).evaluation
    assert evaluation is not None  # an episode of a task
    counts.env_seconds += time.perf_counter() - started
    hashes = source.tasks[job.task]
    record: Record = {
        "key": job.key,
        "env": source.env,
        "spec": source.path,
        "task": job.task,
        "sample": job.sample,
        "messages": messages,
        "tools": tools,
        "answer": answer,
        "evaluation": evaluation["checks"],
        "reward": evaluation["reward"],
        "success": evaluation["success"],
        "state_hash": episode.env.state_hash(),
        "finish": finish,
        "turns": counts.turns,
        "tool_calls": counts.tool_calls,
        "failed_calls": counts.failed_calls,
        "tokens": {"prompt": counts.prompt_tokens, "completion": counts.completion_tokens},
        "timings": {
            "total_s": round(time.perf_counter() - counts.started, 6),
            "model_s": round(counts.model_seconds, 6),
            "env_s": round(counts.env_seconds, 6),
        },
        "provenance": provenance(source.spec_hash, hashes.task, hashes.checks, sampling),
    }
    if seed is not None:
        record["seed"] = seed
    if user is not None:
        record["user"] = user.as_json()
    if error is not None:
        record["error"] = error
    return record


def _execute(episode: Episode, call: dict[str, Any], counts: _Counts) -> dict[str, Any]:
    """Run one tool call as the model wrote it; the tool message that answers it."""
    function = call.get("function") or {}
    started = time.perf_counter()
    name, arguments = str(function.get("name", "")), str(function.get("arguments", ""))
    result = episode.call(name, arguments).result
    counts.env_seconds += time.perf_counter() - started
    counts.tool_calls += 1
    counts.failed_calls += not result.get("success", False)
    return {
        "role": "tool",
        "tool_call_id": call.get("id", ""),
        "content": json.dumps(result, ensure_ascii=False),
    }
