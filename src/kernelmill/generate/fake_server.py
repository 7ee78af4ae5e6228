"""A scripted OpenAI-compatible server on 127.0.0.1, for tests, benchmarks
and dry runs of a pipeline without a model.

`responder(body, n)` gets each chat-completions request body and its
1-based arrival number and returns a `Reply`: a normal answer (with or
without a separate reasoning field and usage), an HTTP error status, a
garbage body, or a delay. Standard library only (threads, one per
connection, HTTP/1.1 keep-alive), so it runs wherever the tests do.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    content: str = ""
    reasoning: str | None = None  # sent as message.reasoning_content
    finish_reason: str = "stop"
    usage: dict[str, Any] | None = None
    status: int = 200
    raw: str | None = None  # sent as the body verbatim (garbage JSON, error pages)
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[dict, int], Reply]


def default_responder(body: dict, n: int) -> Reply:
    code = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n"
    return Reply(content=f"<think>\nplan {n}\n</think>\n\n```python\n{code}```\n",
                 usage={"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # the default 5 resets connections under a burst of 64 clients


class FakeOpenAIServer:
    def __init__(self, responder: Responder = default_responder, models: tuple[str, ...] = ("fake-model",),
                 api_key: str | None = None, latency_s: float = 0.0, port: int = 0):
        self.responder, self.models, self.api_key, self.latency_s = responder, models, api_key, latency_s
        self.bodies: list[dict] = []
        self._lock = threading.Lock()
        self._count = 0
        self._httpd = _Server(("127.0.0.1", port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> "FakeOpenAIServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:  # shutdown() waits for a loop that must be running
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next(self, body: dict) -> int:
        with self._lock:
            self._count += 1
            self.bodies.append(body)
            return self._count

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else headers and body meet delayed ACKs: 40 ms a reply

            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def _send(self, status: int, payload: str, headers: dict[str, str] | None = None) -> None:
                data = payload.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self._send(401, json.dumps({"error": {"message": "invalid api key"}}))
                    return False
                return True

            def do_GET(self) -> None:
                if not self._authorized():
                    return
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in server.models]}))
                else:
                    self._send(404, json.dumps({"error": "not found"}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self._authorized():
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": "not found"}))
                    return
                body = json.loads(raw or b"{}")
                reply = server.responder(body, server._next(body))
                if server.latency_s or reply.delay_s:
                    time.sleep(server.latency_s + reply.delay_s)
                if reply.raw is not None or reply.status != 200:
                    self._send(reply.status, reply.raw if reply.raw is not None else json.dumps({"error": "scripted"}),
                               reply.headers)
                    return
                msg: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.reasoning is not None:
                    msg["reasoning_content"] = reply.reasoning
                out = {"id": "cmpl-fake", "object": "chat.completion", "created": int(time.time()),
                       "model": body.get("model"),
                       "choices": [{"index": 0, "message": msg, "finish_reason": reply.finish_reason}]}
                if reply.usage is not None:
                    out["usage"] = reply.usage
                self._send(200, json.dumps(out), reply.headers)

        return Handler


def main(argv: list[str] | None = None) -> None:
    """`python -m kernelmill.generate.fake_server --port 8011`: serve the
    default scripted answer until interrupted (dry runs, benchmarks)."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    ap.add_argument("--model", default="fake-model")
    args = ap.parse_args(argv)
    srv = FakeOpenAIServer(models=(args.model,), latency_s=args.latency, port=args.port)
    print(srv.url, flush=True)
    try:
        srv._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv._httpd.server_close()


if __name__ == "__main__":
    main()
