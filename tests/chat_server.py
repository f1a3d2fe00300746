"""A scripted OpenAI-compatible chat completions server on 127.0.0.1, for the real `openai`
client (tests/test_synth.py, tests/test_rollout.py).

http.server on an ephemeral port replays scripted replies and records every request. A reply
is text (the assistant's content), a `Status` (an HTTP error), or a dict: an assistant message
with `tool_calls` ({"name", "arguments"} items; arguments given as text are sent as they are,
so a test can send malformed JSON). No traffic leaves the loopback interface.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union


class Status:
    """A scripted HTTP error reply."""

    def __init__(self, code: int, message: str = "scripted failure") -> None:
        self.code = code
        self.message = message


Reply = Union[str, Status, dict[str, Any]]
Script = Callable[[dict[str, Any]], Reply]


def tool_calls(*calls: tuple[str, Any], content: str = "") -> dict[str, Any]:
    """An assistant reply that calls tools: (name, arguments dict or raw JSON text) pairs."""
    return {"content": content, "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def _message(reply: str | dict[str, Any], position: int) -> tuple[dict[str, Any], str]:
    """The reply as a chat message; call ids depend only on the position in the conversation,
    so the same conversation gets the same ids whatever else the server served."""
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}, "stop"
    calls = []
    for number, call in enumerate(reply.get("tool_calls") or []):
        arguments = call["arguments"]
        calls.append(
            {
                "id": f"call_{position}_{number}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content") or None}
    if calls:
        message["tool_calls"] = calls
    return message, "tool_calls" if calls else "stop"


class ChatServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.replies: list[Reply] = []
        self.responder: Script | None = None
        self.delay = 0.0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            # headers and body go out in two writes: without this, Nagle's algorithm holds
            # the body until the client's delayed ACK (tens of ms per request)
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = server.next_reply(self.path, body)
                if server.delay:
                    time.sleep(server.delay)
                if isinstance(reply, Status):
                    payload = {"error": {"message": reply.message, "type": "scripted"}}
                    self.send(reply.code, payload)
                    return
                message, finish = _message(reply, len(body.get("messages") or []))
                self.send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "test"),
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {
                            "prompt_tokens": 100,
                            "completion_tokens": 10,
                            "total_tokens": 110,
                        },
                    },
                )

            def send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def next_reply(self, path: str, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append({"path": path, "body": body})
            if path != "/v1/chat/completions":
                return Status(404, f"no route {path}")
            if self.responder is not None:
                return self.responder(body)
            if not self.replies:
                return Status(400, "the test script is exhausted")
            return self.replies.pop(0)

    def user_messages(self, index: int) -> list[str]:
        messages = self.requests[index]["body"]["messages"]
        return [m["content"] for m in messages if m["role"] == "user"]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
