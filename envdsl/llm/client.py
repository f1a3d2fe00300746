"""A thin wrapper over the `openai` client: one chat completion, with our own retries.

The openai client's retries are turned off so that every attempt, delay and failure is ours
to count and to explain: connection errors, timeouts, HTTP 429 and 5xx are retried with
exponential backoff (a server's Retry-After is honoured up to the cap); anything else fails at
once. Every failure becomes an LLMError with a one-line message that names the server.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, cast

if TYPE_CHECKING:
    import openai

Message = Mapping[str, str]

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
# Local servers (vLLM, llama.cpp) ignore the key, but the openai client insists on one.
PLACEHOLDER_API_KEY = "EMPTY"
# Where guided decoding's grammar goes in the request body, as a dotted path of JSON fields.
# vLLM (0.10.2 and later) reads `structured_outputs: {"grammar": ...}` (its OpenAI server's
# ChatCompletionRequest.structured_outputs, a StructuredOutputsParams); 0.12.0 dropped the older
# top-level `guided_grammar` and ignores it without an error. llama.cpp's server reads `grammar`.
VLLM_GRAMMAR_KEY = "structured_outputs.grammar"
LLAMA_CPP_GRAMMAR_KEY = "grammar"


@dataclass(frozen=True, slots=True)
class ClientConfig:
    base_url: str = DEFAULT_BASE_URL
    model: str = "default"
    api_key: str | None = None  # None: $OPENAI_API_KEY, else a placeholder for local servers
    timeout: float = 300.0  # seconds for one request
    retries: int = 4  # further attempts after the first, for transient failures only
    backoff: float = 1.0  # seconds before the first retry; doubles on each retry
    max_backoff: float = 30.0
    temperature: float | None = None
    max_tokens: int | None = None
    # Guided decoding: sent in the request body at grammar_key, a dotted path (see above).
    grammar: str | None = None
    grammar_key: str = VLLM_GRAMMAR_KEY


@dataclass(frozen=True, slots=True)
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    attempts: int


@dataclass(frozen=True, slots=True)
class ToolTurn:
    """One reply of a model that was offered tools: the assistant message as an OpenAI chat
    message (`content`, and `tool_calls` when it called any), ready to go back in the history."""

    message: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    attempts: int


class LLMError(Exception):
    """A request that could not be completed. `kind` is one of connection, timeout,
    rate_limit, server, rejected, invalid; str() is a one-line message for people."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ChatClient:
    def __init__(
        self, config: ClientConfig, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        import openai

        self.config = config
        self._sleep = sleep
        api_key = config.api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY
        self._client = openai.OpenAI(
            base_url=config.base_url, api_key=api_key, timeout=config.timeout, max_retries=0
        )

    def complete(self, messages: Sequence[Message]) -> Reply:
        response, attempts = self._create(messages, {})
        if not response.choices or response.choices[0].message.content is None:
            raise LLMError("invalid", f"the model server at {self.config.base_url} sent no message")
        usage = response.usage
        return Reply(
            text=response.choices[0].message.content,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            finish_reason=response.choices[0].finish_reason,
            attempts=attempts,
        )

    def complete_with_tools(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        seed: int | None = None,
    ) -> ToolTurn:
        """One agent turn: the model may answer or call tools. `seed` goes to the server
        (vLLM and llama.cpp honour it; each sample of a task gets its own)."""
        options: dict[str, Any] = {"tools": list(tools)} if tools else {}
        if seed is not None:
            options["seed"] = seed
        response, attempts = self._create(messages, options)
        if not response.choices:
            raise LLMError("invalid", f"the model server at {self.config.base_url} sent no message")
        choice = response.choices[0]
        message: dict[str, Any] = {"role": "assistant", "content": choice.message.content or ""}
        calls = []
        for number, call in enumerate(choice.message.tool_calls or []):
            function = getattr(call, "function", None)  # None for non-function (custom) calls
            calls.append(
                {
                    "id": call.id or f"call_{number}",
                    "type": "function",
                    "function": {
                        "name": getattr(function, "name", None) or "",
                        "arguments": getattr(function, "arguments", None) or "",
                    },
                }
            )
        if calls:
            message["tool_calls"] = calls
        usage = response.usage
        return ToolTurn(
            message=message,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            finish_reason=choice.finish_reason,
            attempts=attempts,
        )

    def _create(
        self, messages: Sequence[Mapping[str, Any]], extra: dict[str, Any]
    ) -> tuple[Any, int]:
        """The chat completion and the number of attempts it took (see the module's doc)."""
        import openai

        config = self.config
        options: dict[str, Any] = {}
        if config.temperature is not None:
            options["temperature"] = config.temperature
        if config.max_tokens is not None:
            options["max_tokens"] = config.max_tokens
        if config.grammar is not None:
            options["extra_body"] = nested_field(config.grammar_key, config.grammar)
        options.update(extra)
        attempts = 0
        while True:
            attempts += 1
            try:
                response = self._client.chat.completions.create(
                    model=config.model,
                    messages=cast("list[openai.types.chat.ChatCompletionMessageParam]", messages),
                    **options,
                )
                return response, attempts
            except openai.APIError as error:
                retry_after = _retry_delay(error)
                if retry_after is None or attempts > config.retries:
                    raise _describe(error, config, attempts) from error
                delay = min(config.backoff * 2 ** (attempts - 1), config.max_backoff)
                self._sleep(max(delay, min(retry_after, config.max_backoff)))


def grammar_key_fields(key: str) -> list[str]:
    """The fields of a dotted --grammar-key (`structured_outputs.grammar`); ValueError when
    one is empty or holds a blank, which no server's field name does."""
    fields = key.split(".")
    if any(not field or any(char.isspace() for char in field) for field in fields):
        raise ValueError(
            f"--grammar-key '{key}' is not a dotted path of field names "
            f"(e.g. {VLLM_GRAMMAR_KEY} for vLLM, {LLAMA_CPP_GRAMMAR_KEY} for llama.cpp)"
        )
    return fields


def nested_field(key: str, value: Any) -> dict[str, Any]:
    """`value` at the dotted path `key` of an otherwise empty request body:
    nested_field("a.b", v) == {"a": {"b": v}}."""
    fields = grammar_key_fields(key)
    body: dict[str, Any] = {fields[-1]: value}
    for field in reversed(fields[:-1]):
        body = {field: body}
    return body


def _retry_delay(error: Exception) -> float | None:
    """None when the error is not transient; else the server's Retry-After (0 if none)."""
    import openai

    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return 0.0
    if isinstance(error, openai.APIStatusError) and (
        error.status_code == 429 or error.status_code >= 500
    ):
        try:
            return max(0.0, float(error.response.headers.get("retry-after", "0")))
        except ValueError:
            return 0.0
    return None


def _describe(error: Exception, config: ClientConfig, attempts: int) -> LLMError:
    import openai

    server = f"the model server at {config.base_url}"
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if isinstance(error, openai.APITimeoutError):
        return LLMError("timeout", f"{server} did not answer within {config.timeout:g}s ({tries})")
    if isinstance(error, openai.APIConnectionError):
        cause = _one_line(str(error.__cause__ or error))
        return LLMError("connection", f"cannot reach {server}: {cause} ({tries})")
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        detail = _one_line(_server_message(error))
        if status == 429:
            return LLMError(
                "rate_limit",
                f"{server} is rate-limiting requests (HTTP 429, {tries}); try again later or "
                "lower --concurrency",
            )
        if status >= 500:
            return LLMError("server", f"{server} failed with HTTP {status} ({tries}): {detail}")
        hint = {
            401: "; set OPENAI_API_KEY",
            403: "; check OPENAI_API_KEY",
            404: "; check --base-url (it usually ends in /v1) and --model",
        }.get(status, "")
        return LLMError(
            "rejected", f"{server} rejected the request with HTTP {status}: {detail}{hint}"
        )
    return LLMError("invalid", f"{server} sent a reply that is not a chat completion: {error}")


def _server_message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(getattr(error, "message", error))


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
