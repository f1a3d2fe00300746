"""`envdsl synth` and envdsl.llm: the write-check-repair loop against a real HTTP server.

The server (tests/chat_server.py: http.server on 127.0.0.1, an ephemeral port) speaks the chat
completions API, replays scripted replies and records every request; the real `openai` client
talks to it.
No traffic leaves the loopback interface; timeouts and retries are small, backoff is zero or
recorded instead of slept, so every test is bounded in time.
"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from chat_server import ChatServer, Script, Status
from click.testing import CliRunner
from lark import Lark
from lark.load_grammar import GrammarBuilder

from envdsl.cli import main
from envdsl.llm import batch, loop
from envdsl.llm.client import ChatClient, ClientConfig, LLMError, nested_field
from envdsl.llm.extract import NoSpecError, extract_spec
from envdsl.llm.grammar import gbnf_grammar, gbnf_name, regex_to_gbnf
from envdsl.llm.prompts import envscaler_prompt, system_prompt, topic_prompt
from envdsl.util.resources import grammar_path, language_reference

ENVSCALER = Path("/work/shared/reference/envscaler/envs_sample17.json")

CLEAN = '''env Counter {
  """A shared counter."""

  entity Item {
    key item_id: str
    count: int = 0
    invariant "count is never negative": count >= 0
  }

  state {
    items: table Item
  }

  action bump(item_id: str) -> Item {
    """Add one to an item's count."""
    let item = items.get(item_id) else "item not found"
    item.count += 1
    return item
  }

  query get_item(item_id: str) -> Item {
    """Return one item."""
    let item = items.get(item_id) else "item not found"
    return item
  }
TASKS
}
'''
TASK = '''
  task bump_once {
    """Bump item A once."""
    init {
      items = [Item(item_id="A")]
    }
    solution {
      bump(item_id="A")
    }
    check "A counts one": items["A"].count == 1
  }
'''
GOOD = CLEAN.replace("TASKS", TASK)
NO_TASKS = CLEAN.replace("TASKS", "")
BROKEN = {
    "syntax": ("E0001", GOOD.replace("  state {", "  state ")),
    "unknown-name": (
        "E1001",
        GOOD.replace("let item = items.get(item_id)", "let item = itemz.get(item_id)", 1),
    ),
    "type": ("E2002", GOOD.replace("item.count += 1", 'item.count += "one"')),
    "task": ("E4005", GOOD.replace('items["A"].count == 1', 'items["A"].count == 2')),
}


def fenced(spec: str, tag: str = "envdsl") -> str:
    return f"Here is the spec.\n\n```{tag}\n{spec}```\n"


# ---- the scripted chat completions server (tests/chat_server.py) -------------------------


@pytest.fixture
def server() -> Iterator[ChatServer]:
    chat = ChatServer()
    yield chat
    chat.close()


def client_for(chat: ChatServer, **overrides: Any) -> ChatClient:
    sleep = overrides.pop("sleep", time.sleep)
    options: dict[str, Any] = {"retries": 2, "backoff": 0.0, "timeout": 5.0}
    options.update(overrides)
    config = ClientConfig(base_url=chat.url, model="test-model", api_key="test", **options)
    return ChatClient(config, sleep=sleep)


# ---- extraction ---------------------------------------------------------------------------


def test_extract_prefers_the_envdsl_block() -> None:
    reply = "```text\nnot it\n```\n" + fenced(NO_TASKS, "python") + fenced(GOOD)
    assert extract_spec(reply) == GOOD
    assert extract_spec(fenced(GOOD, "env")) == GOOD
    assert extract_spec(fenced(GOOD, "")) == GOOD
    assert extract_spec("\n" + GOOD) == GOOD  # guided decoding: the bare spec
    assert extract_spec("import std.time\n" + GOOD).startswith("import std.time\nenv Counter")


def test_extract_without_a_spec_fails_clearly() -> None:
    with pytest.raises(NoSpecError, match="no spec"):
        extract_spec("I cannot help with that.\n```python\nprint(1)\n```")
    with pytest.raises(NoSpecError, match="empty"):
        extract_spec("   ")


def test_prompts_carry_the_reference_and_the_request() -> None:
    prompt = system_prompt()
    assert language_reference().strip() in prompt
    assert "env SleepTracking" in prompt
    assert "a bakery" in topic_prompt("a bakery")
    record = json.loads(ENVSCALER.read_text("utf-8"))[0]
    text = envscaler_prompt(record)
    assert record["environment_summary"] in text
    assert record["constraints_rules"][0] in text
    assert "get_document_by_id (query)" in text and "create_document (action)" in text
    assert "env_class_code" not in text and "class " not in text


# ---- the loop -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_loop_repairs_from_the_diagnostics(server: ChatServer, kind: str) -> None:
    code, broken = BROKEN[kind]
    server.replies = [fenced(broken), fenced(GOOD), fenced(BROKEN["syntax"][1])]
    result = loop.synthesize(client_for(server), topic_prompt("a counter"), max_repairs=3)
    assert result.status == loop.ACCEPTED and result.spec == GOOD
    assert len(server.requests) == 2  # stopped as soon as the spec was clean
    assert len(server.replies) == 1
    assert [(a.round, a.status) for a in result.attempts] == [(0, "errors"), (1, "clean")]
    assert result.attempts[0].errors >= 1 and result.repairs == 1
    assert not result.first_try_clean
    repair = server.user_messages(1)[-1]
    assert broken.rstrip() in repair  # the current spec
    document = json.loads(re.search(r"```json\n(.*?)\n```", repair, re.S).group(1))  # type: ignore[union-attr]
    assert document["version"] == 1 and not document["ok"]
    assert code in {item["code"] for item in document["diagnostics"]}
    assert "a counter" in server.user_messages(1)[0]  # the original request goes along
    assert server.requests[0]["body"]["model"] == "test-model"
    assert result.prompt_tokens == 200 and result.completion_tokens == 20


def test_loop_gives_up_after_the_limit_with_the_last_diagnostics(server: ChatServer) -> None:
    broken = BROKEN["type"][1]
    server.replies = [fenced(BROKEN["syntax"][1]), fenced(broken), fenced(broken), fenced(GOOD)]
    result = loop.synthesize(client_for(server), topic_prompt("a counter"), max_repairs=2)
    assert result.status == loop.FAILED and result.spec is None
    assert len(server.requests) == 3 and result.repairs == 2
    assert result.last_spec == broken
    assert result.last_diagnostics is not None
    assert [d["code"] for d in result.last_diagnostics["diagnostics"]] == ["E2002"]
    assert "E2002" in result.message and "after 2 repair rounds" in result.message


def test_first_try_clean(server: ChatServer) -> None:
    server.replies = [fenced(GOOD)]
    result = loop.synthesize(client_for(server), topic_prompt("a counter"))
    assert result.status == loop.ACCEPTED and result.first_try_clean and result.repairs == 0
    assert "accepted after 0 repair rounds" in result.message


def test_tasks_are_asked_for_and_repaired(server: ChatServer) -> None:
    server.replies = [fenced(NO_TASKS), fenced(BROKEN["task"][1]), fenced(GOOD)]
    result = loop.synthesize(client_for(server), topic_prompt("a counter"))
    assert result.status == loop.ACCEPTED and result.spec == GOOD
    assert [(a.phase, a.round, a.status) for a in result.attempts] == [
        ("spec", 0, "clean"),
        ("tasks", 0, "errors"),
        ("tasks", 1, "clean"),
    ]
    assert "has no task" in server.user_messages(1)[-1]
    assert NO_TASKS.rstrip() in server.user_messages(1)[-1]
    repair = server.user_messages(2)[-1]
    assert "E4005" in repair and "check-fails-after-solution" in repair


def test_no_tasks_after_the_limit_keeps_the_clean_spec(server: ChatServer) -> None:
    server.replies = [fenced(NO_TASKS), fenced(NO_TASKS), fenced(NO_TASKS)]
    result = loop.synthesize(client_for(server), topic_prompt("a counter"), max_repairs=1)
    assert result.status == loop.ACCEPTED_WITHOUT_TASKS and result.spec == NO_TASKS
    assert "still had no task" in result.message


def test_a_reply_without_a_spec(server: ChatServer) -> None:
    server.replies = ["Sorry, I can't write that.", fenced(GOOD)]
    result = loop.synthesize(client_for(server), topic_prompt("a counter"))
    assert result.status == loop.ACCEPTED
    assert result.attempts[0].status == "no_spec"
    messages = server.requests[1]["body"]["messages"]
    assert messages[-2] == {"role": "assistant", "content": "Sorry, I can't write that."}
    assert "could not find a spec" in messages[-1]["content"]

    server.replies = ["No.", "Still no."]
    result = loop.synthesize(client_for(server), topic_prompt("x"), max_repairs=1)
    assert result.status == loop.FAILED and result.last_spec is None
    assert result.message == "no spec after 1 repair round: the last reply held no spec"


# ---- the client ---------------------------------------------------------------------------


def test_429_then_success_retries_with_backoff(server: ChatServer) -> None:
    sleeps: list[float] = []
    server.replies = [Status(429, "slow down"), Status(503), fenced(GOOD)]
    client = client_for(server, retries=3, backoff=0.5, sleep=sleeps.append)
    reply = client.complete([{"role": "user", "content": "hi"}])
    assert extract_spec(reply.text) == GOOD and reply.attempts == 3
    assert sleeps == [0.5, 1.0]  # exponential, and recorded instead of slept
    assert (reply.prompt_tokens, reply.completion_tokens) == (100, 10)


def test_rate_limit_after_all_retries(server: ChatServer) -> None:
    server.replies = [Status(429)] * 3
    with pytest.raises(LLMError, match=r"rate-limiting requests \(HTTP 429, 3 attempts\)") as info:
        client_for(server).complete([{"role": "user", "content": "hi"}])
    assert info.value.kind == "rate_limit"


def test_500_after_all_retries_is_a_clear_failure(server: ChatServer) -> None:
    server.replies = [Status(500, "model crashed")] * 3
    with pytest.raises(LLMError) as info:
        client_for(server).complete([{"role": "user", "content": "hi"}])
    assert info.value.kind == "server"
    assert str(info.value) == (
        f"the model server at {server.url} failed with HTTP 500 (3 attempts): model crashed"
    )
    assert len(server.requests) == 3


def test_client_errors_are_not_retried(server: ChatServer) -> None:
    server.replies = [Status(404, "model 'x' does not exist")]
    with pytest.raises(LLMError, match="HTTP 404: model 'x' does not exist; check --base-url"):
        client_for(server).complete([{"role": "user", "content": "hi"}])
    assert len(server.requests) == 1


def test_connection_refused_and_timeout(server: ChatServer) -> None:
    with socket.socket() as probe:  # a port on 127.0.0.1 that nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ClientConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", retries=1, backoff=0)
    with pytest.raises(LLMError, match=r"cannot reach the model server .* \(2 attempts\)") as info:
        ChatClient(config).complete([{"role": "user", "content": "hi"}])
    assert info.value.kind == "connection"

    server.delay = 1.0
    server.replies = [fenced(GOOD)]
    started = time.monotonic()
    with pytest.raises(LLMError, match=r"did not answer within 0.2s \(1 attempt\)") as info:
        client_for(server, timeout=0.2, retries=0).complete([{"role": "user", "content": "x"}])
    assert info.value.kind == "timeout" and time.monotonic() - started < 5


def test_guided_grammar_goes_where_vllm_reads_it(server: ChatServer) -> None:
    """vLLM's OpenAI server reads `structured_outputs.grammar` (ChatCompletionRequest's
    StructuredOutputsParams); its old top-level `guided_grammar` is no longer sent."""
    server.replies = [GOOD]
    client = client_for(server, grammar="root ::= start", temperature=0.2, max_tokens=512)
    assert extract_spec(client.complete([{"role": "user", "content": "x"}]).text) == GOOD
    body = server.requests[0]["body"]
    assert body["structured_outputs"] == {"grammar": "root ::= start"}
    assert "guided_grammar" not in body and "grammar" not in body
    assert body["temperature"] == 0.2 and body["max_tokens"] == 512


def test_grammar_key_is_a_dotted_path(server: ChatServer) -> None:
    server.replies = [GOOD, GOOD]
    for key in ("grammar", "extra.options.grammar"):  # llama.cpp's field; a deeper nesting
        client_for(server, grammar="root ::= x", grammar_key=key).complete(
            [{"role": "user", "content": "x"}]
        )
    llama, deep = (request["body"] for request in server.requests)
    assert llama["grammar"] == "root ::= x" and "structured_outputs" not in llama
    assert deep["extra"] == {"options": {"grammar": "root ::= x"}}
    assert nested_field("a.b", 1) == {"a": {"b": 1}} and nested_field("a", 1) == {"a": 1}
    for bad in ("", ".grammar", "structured_outputs.", "a..b", "a b"):
        with pytest.raises(ValueError, match="dotted path"):
            nested_field(bad, 1)


# ---- the command line ---------------------------------------------------------------------


def synth_args(server: ChatServer, *args: str) -> list[str]:
    return ["synth", *args, "--base-url", server.url, "--model", "m", "--backoff", "0"]


def test_cli_synth_writes_the_accepted_spec(server: ChatServer, tmp_path: Path) -> None:
    out = tmp_path / "counter.env"
    (tmp_path / "counter.failed.env").write_text("stale")
    server.replies = [fenced(BROKEN["unknown-name"][1]), fenced(GOOD)]
    log = tmp_path / "log.jsonl"
    result = CliRunner().invoke(
        main, synth_args(server, "a counter", "-o", str(out), "--log", str(log))
    )
    assert result.exit_code == 0, result.output
    assert out.read_text() == GOOD and not (tmp_path / "counter.failed.env").exists()
    assert f"wrote {out} (accepted after 1 repair round)" in result.output
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["phase"], r["status"]) for r in records] == [
        ("spec", "errors"),
        ("spec", "clean"),
        ("done", "accepted"),
    ]
    assert set(records[0]) == {
        "id", "round", "phase", "errors", "warnings", "prompt_tokens", "completion_tokens", "status"
    }  # fmt: skip


def test_cli_synth_grammar_goes_to_vllm_or_llama_cpp(server: ChatServer, tmp_path: Path) -> None:
    server.replies = [fenced(GOOD), fenced(GOOD)]
    for index, extra in enumerate([[], ["--grammar-key", "grammar"]]):
        out = tmp_path / f"counter{index}.env"
        args = synth_args(server, "a counter", "-o", str(out), "--grammar", *extra)
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
    vllm, llama = (request["body"] for request in server.requests)
    assert vllm["structured_outputs"] == {"grammar": gbnf_grammar()}
    assert llama["grammar"] == gbnf_grammar() and "structured_outputs" not in llama
    bad = CliRunner().invoke(main, synth_args(server, "t", "-o", "x.env", "--grammar-key", "a..b"))
    assert bad.exit_code == 2 and len(bad.output.splitlines()) == 1
    assert "--grammar-key 'a..b' is not a dotted path" in bad.output and len(server.requests) == 2


def test_cli_synth_failure_writes_the_last_attempt(server: ChatServer, tmp_path: Path) -> None:
    out = tmp_path / "counter.env"
    broken = BROKEN["syntax"][1]
    server.replies = [fenced(broken)] * 2
    result = CliRunner().invoke(
        main, synth_args(server, "a counter", "-o", str(out), "--max-repairs", "1")
    )
    assert result.exit_code == 1
    assert not out.exists()
    assert (tmp_path / "counter.failed.env").read_text() == broken
    assert "could not make the spec clean: 1 error left after 1 repair round; first: E0001" in (
        result.output
    )
    assert "last attempt written to" in result.output


def test_cli_synth_network_errors_are_one_line(server: ChatServer, tmp_path: Path) -> None:
    server.replies = [Status(500, "boom")] * 2
    out = tmp_path / "x.env"
    result = CliRunner().invoke(main, synth_args(server, "t", "-o", str(out), "--retries", "1"))
    assert result.exit_code == 1 and not out.exists()
    lines = [line for line in result.output.splitlines() if line.startswith("envdsl: error")]
    assert lines == [
        f"envdsl: error: the model server at {server.url} failed with HTTP 500 (2 attempts): boom"
    ]


def test_cli_synth_from_envscaler(server: ChatServer, tmp_path: Path) -> None:
    # a clean spec that is not the record's environment: its tools are missing
    server.replies = [fenced(GOOD)]
    out = tmp_path / "docs.env"
    args = synth_args(server, "--from-envscaler", str(ENVSCALER), "--index", "1", "-o", str(out))
    result = CliRunner().invoke(main, [*args, "--max-repairs", "0"])
    assert result.exit_code == 1 and not out.exists()
    record = json.loads(ENVSCALER.read_text("utf-8"))[1]
    assert record["environment_summary"] in server.user_messages(0)[0]
    first_tool = record["tools"][0]["function"]["name"]
    assert f"- {first_tool}(" in server.user_messages(0)[0]
    differences = len(record["tools"])
    assert f"the spec checks clean but {differences} differences from the original are left " in (
        result.output
    )
    assert f"first: tool `{first_tool}` is missing" in result.output
    result = CliRunner().invoke(
        main,
        synth_args(server, "--from-envscaler", str(ENVSCALER), "--index", "99", "-o", str(out)),
    )
    assert result.exit_code == 2 and "out of range" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["-o", "x.env"], "exactly one of TOPIC"),
        (["topic"], "give -o FILE"),
        (["topic", "--batch", "b.jsonl"], "exactly one of TOPIC"),
        (["--batch", "b.jsonl", "--out-dir", "d"], "--batch takes --out-dir DIR and --log FILE"),
    ],
)
def test_cli_synth_usage_errors(server: ChatServer, args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, synth_args(server, *args))
    assert result.exit_code == 2 and message in result.output
    assert not server.requests


def test_cli_synth_needs_a_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENVDSL_MODEL", raising=False)
    result = CliRunner().invoke(main, ["synth", "t", "-o", str(tmp_path / "x.env")])
    assert result.exit_code == 2 and "give --model" in result.output


# ---- batch --------------------------------------------------------------------------------


def batch_responder(calls: dict[str, int]) -> Script:
    """alpha: clean at once; beta: broken then clean; gamma: never clean; delta: no tasks
    at first. Keyed by the topic in the request, so the order of threads does not matter."""

    def respond(body: dict[str, Any]) -> str | Status:
        request = next(m["content"] for m in body["messages"] if m["role"] == "user")
        topic = re.search(r"topic:\n\n(\w+)", request).group(1)  # type: ignore[union-attr]
        calls[topic] = calls.get(topic, 0) + 1
        if topic == "alpha":
            return fenced(GOOD)
        if topic == "beta":
            return fenced(GOOD if calls[topic] > 1 else BROKEN["type"][1])
        if topic == "gamma":
            return fenced(BROKEN["syntax"][1])
        return fenced(GOOD if calls[topic] > 1 else NO_TASKS)

    return respond


def test_batch_summary_and_resume(server: ChatServer, tmp_path: Path) -> None:
    topics = tmp_path / "topics.jsonl"
    lines = [{"id": name, "topic": name} for name in ("alpha", "beta", "gamma", "delta")]
    topics.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    calls: dict[str, int] = {}
    server.responder = batch_responder(calls)
    out_dir, log = tmp_path / "specs", tmp_path / "log.jsonl"
    args = ["--batch", str(topics), "--out-dir", str(out_dir), "--log", str(log)]
    result = CliRunner().invoke(
        main, synth_args(server, *args, "--concurrency", "3", "--max-repairs", "2")
    )
    assert result.exit_code == 0, result.output
    assert calls == {"alpha": 1, "beta": 2, "gamma": 3, "delta": 2}
    # 4 done: alpha and delta clean at first try (delta's spec; its tasks came later),
    # beta after 1 repair, gamma failed after 2: first-try 2/4, mean rounds (0+1+2+0)/4.
    assert (
        "4 done (0 from earlier runs): 3 accepted, 0 accepted without tasks, 1 failed; "
        "0 server errors this run; first-try clean rate 50.0%, mean repair rounds 0.75"
    ) in result.output
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "alpha.env", "beta.env", "delta.env", "gamma.failed.env"
    ]  # fmt: skip
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len([r for r in records if r["id"] == "gamma" and r["phase"] == "spec"]) == 3
    done = {r["id"]: r for r in records if r["phase"] == "done"}
    assert done["beta"]["round"] == 1 and done["beta"]["status"] == "accepted"
    assert done["gamma"]["status"] == "failed" and done["gamma"]["errors"] == 1
    assert done["delta"]["first_try_clean"] is True

    # A second run with one more topic only does the new one; the summary covers all five.
    topics.write_text(topics.read_text() + json.dumps({"id": "epsilon", "topic": "alpha"}) + "\n")
    result = CliRunner().invoke(main, synth_args(server, *args))
    assert result.exit_code == 0, result.output
    assert calls["alpha"] == 2 and sum(calls.values()) == 9
    assert "5 done (4 from earlier runs): 4 accepted" in result.output
    assert "first-try clean rate 60.0%, mean repair rounds 0.60" in result.output


def test_batch_server_errors_are_retried_on_the_next_run(
    server: ChatServer, tmp_path: Path
) -> None:
    items = [batch.BatchItem("one", topic_prompt("alpha"))]
    server.replies = [Status(500)] * 2
    client = client_for(server, retries=1)
    summary = batch.run_batch(items, client, tmp_path / "out", tmp_path / "log.jsonl")
    assert summary.errors == 1 and summary.total == 0
    server.replies = [fenced(GOOD)]
    summary = batch.run_batch(items, client, tmp_path / "out", tmp_path / "log.jsonl")
    assert (summary.errors, summary.total, summary.accepted) == (0, 1, 1)
    assert summary.as_json()["first_try_clean_rate"] == 1.0


def test_batch_input_errors(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    for text, message in [
        ('{"topic": "x"}\n', "needs an 'id'"),
        ('{"id": 1, "topic": ""}\n', "needs a non-empty 'topic'"),
        ('{"id": 1, "topic": "a"}\n{"id": 1, "topic": "b"}\n', "id '1' appears twice"),
        ("not json\n", "not JSON"),
    ]:
        path.write_text(text)
        with pytest.raises(batch.BatchInputError, match=message):
            batch.read_items(path)
    records = json.loads(ENVSCALER.read_text("utf-8"))[:2]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    items = batch.read_items(path)
    assert [item.id for item in items] == [r["env_id"] for r in records]
    assert records[0]["environment_summary"] in items[0].request


# ---- grammar export -----------------------------------------------------------------------


def test_grammar_lark_is_the_grammar_file() -> None:
    result = CliRunner().invoke(main, ["grammar", "--format", "lark"])
    assert result.exit_code == 0
    assert result.output == grammar_path().read_text("utf-8")


_GBNF_TOKEN = re.compile(
    r'\s*(?:(?P<name>[A-Za-z][A-Za-z0-9-]*)|(?P<str>"(?:\\.|[^"\\])*")'
    r"|(?P<cls>\[(?:\\.|[^\]\\])*\])|(?P<op>[()|*+?]))"
)


def parse_gbnf(text: str) -> dict[str, list[tuple[str, str]]]:
    """name -> tokens of its body; asserts the lines are rules and the brackets balance."""
    rules: dict[str, list[tuple[str, str]]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, separator, body = line.partition(" ::= ")
        assert separator and re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", name), line
        assert name not in rules, f"{name} defined twice"
        tokens: list[tuple[str, str]] = []
        position = 0
        while body[position:].strip():
            match = _GBNF_TOKEN.match(body, position)
            assert match is not None and match.end() > position, f"{name}: {body[position:]}"
            kind = match.lastgroup
            assert kind is not None
            tokens.append((kind, match.group(kind)))
            position = match.end()
        depth = 0
        for kind, value in tokens:
            depth += {"(": 1, ")": -1}.get(value, 0) if kind == "op" else 0
            assert depth >= 0, line
        assert depth == 0, line
        rules[name] = tokens
    return rules


def gbnf_to_lark(rules: dict[str, list[tuple[str, str]]]) -> str:
    """The GBNF as a character-level lark grammar, to run it with lark's Earley parser."""

    def rule_name(name: str) -> str:
        return "g_" + name.replace("-", "_").lower() + ("_u" if name != name.lower() else "")

    lines = []
    for name, tokens in rules.items():
        parts = []
        for kind, value in tokens:
            if kind == "name":
                parts.append(rule_name(value))
            elif kind == "cls":
                parts.append("/" + value.replace("/", "\\/") + "/")
            else:
                parts.append(value)
        lines.append(f"{rule_name(name)}: {' '.join(parts)}")
    return "\n".join(lines)


def test_grammar_gbnf_maps_every_rule() -> None:
    result = CliRunner().invoke(main, ["grammar", "--format", "gbnf"])
    assert result.exit_code == 0
    assert result.output == gbnf_grammar()
    rules = parse_gbnf(result.output)
    assert rules["root"][0] == ("name", "start")
    builder = GrammarBuilder()
    builder.load_grammar(grammar_path().read_text("utf-8"), "envdsl.lark")
    built = builder.build()
    for name, *_ in built.rule_defs:
        assert gbnf_name(str(name)) in rules, name
    for name, _ in built.term_defs:
        assert name.startswith("__") or gbnf_name(str(name)) in rules, name
    referenced = {value for tokens in rules.values() for kind, value in tokens if kind == "name"}
    assert referenced <= set(rules), referenced - set(rules)
    assert set(rules) - referenced == {"root"}  # nothing unused
    # No left recursion (llama.cpp rejects it): no rule reaches itself through leftmost
    # positions, skipping over nullable prefixes is approximated by `ws`, `sp` and `eol`-free
    # starts, which is how the converter writes rules.
    leftmost = {
        name: {value for kind, value in tokens[:1] if kind == "name"}
        for name, tokens in rules.items()
    }
    for start in rules:
        seen, frontier = set(), set(leftmost[start])
        while frontier:
            current = frontier.pop()
            assert current != start or start in ("ws", "sp"), f"left recursion through {start}"
            if current not in seen:
                seen.add(current)
                frontier |= leftmost[current] - {"ws", "sp"}


GBNF_SAMPLE = '''import std.time
# a comment
env Shop {
  """Docs with "quotes" and ""two"" inside."""
  enum Kind { small, big = "very big" }
  entity Item {
    key sku: str "The SKU"
    price: float = 1.5e3
    tags: map[str, int] = {"a": 1}
  }
  state {
    items: table Item
  }
  query find(text: str) -> list[Item] {
    """Find."""
    let found = [i for i in items if lower(text) in lower(i.sku)]
    require len(found) > 0 else f"nothing for {text}"
    return found
  }
}
'''


def test_grammar_gbnf_accepts_envdsl_and_rejects_broken_text() -> None:
    parser = Lark(gbnf_to_lark(parse_gbnf(gbnf_grammar())), start="g_root", lexer="dynamic")
    parser.parse(GBNF_SAMPLE)
    parser.parse(NO_TASKS)
    for broken in ["env X {", "env X { let }", "env X {\n  state {\n    a: int +\n  }\n}\n"]:
        with pytest.raises(Exception):
            parser.parse(broken)
    # The superset: a newline inside an expression is only whitespace in GBNF.
    parser.parse("env X {\n  const A: int = 1\n    + 2\n}\n")


def test_regex_conversion() -> None:
    assert regex_to_gbnf("[A-Za-z_][A-Za-z0-9_]*") == "[A-Za-z_] [A-Za-z0-9_]*"
    assert regex_to_gbnf("(\\r?\\n)+", strip_plus=True) == '"\\r"? "\\n"'
    assert regex_to_gbnf("[+-]?ab|c") == '[+\\x2D]? "ab" | "c"'
    with pytest.raises(ValueError, match="lookaround"):
        regex_to_gbnf("a(?!b)")
    with pytest.raises(ValueError, match="escape"):
        regex_to_gbnf("\\d+")
