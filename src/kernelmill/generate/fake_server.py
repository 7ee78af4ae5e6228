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


class AnswersError(ValueError):
    """An answers file that cannot be used (names the file and line)."""


def load_answers(path) -> dict[str, list[Reply]]:
    """Scripted completions per task id from a JSONL file, one line each:
    `{"task_id": ..., "completion": "..."}` (optionally `"reasoning"` sent as
    reasoning_content). Several lines for a task are served in turn."""
    from pathlib import Path

    answers: dict[str, list[Reply]] = {}
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise AnswersError(f"{path}: {exc.strerror or exc}") from None
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise AnswersError(f"{path}:{no}: not a JSON object") from None
        if not isinstance(row, dict) or not isinstance(row.get("task_id"), str) \
                or not isinstance(row.get("completion"), str):
            raise AnswersError(f"{path}:{no}: expected {{\"task_id\": str, \"completion\": str}}")
        reasoning = row.get("reasoning")
        answers.setdefault(row["task_id"], []).append(Reply(
            content=row["completion"], reasoning=reasoning if isinstance(reasoning, str) else None,
            usage={"prompt_tokens": 10, "completion_tokens": max(1, len(row["completion"]) // 4),
                   "total_tokens": 10 + max(1, len(row["completion"]) // 4)}))
    if not answers:
        raise AnswersError(f"{path}: no answers")
    return answers


def builtin_answers(language: str = "torch") -> dict[str, list[Reply]]:
    """Three scripted completions for every builtin task (`--answers builtin`), served in
    turn, each with a reasoning trace: a correct one (the suite's own correct candidate in
    `language` where it has one, else the task's reference as `ModelNew`), a wrong one (that
    model with every output shifted by one) and a broken one (its code does not compile).
    A dry run needs no file, and every sample parses; the verdicts differ (ok, incorrect,
    compile_error), as a model's would."""
    from ..tasks import load_tasks
    from ..tasks.builtin import builtin_samples

    correct = {s.task_id: s.code.rstrip() for s in builtin_samples([language]) if s.meta.get("expect") == "ok"}
    answers: dict[str, list[Reply]] = {}
    for task in load_tasks("builtin").tasks:
        as_new = _reference_as_candidate(task.code)
        kinds = (("correct", correct.get(task.task_id, as_new),
                  "The reference is already close to what the hardware wants; keep its operations and their order."),
                 ("wrong", as_new.replace("ModelNew", "_Base") + _SHIFTED,
                  "Reuse the reference and add a small offset to the result."),
                 ("broken", as_new.replace("def forward(self", "def forward(self,,", 1),
                  "Start from the reference; the signature is changed in a hurry."))
        answers[task.task_id] = [_reply(code, f"{task.task_id}: a {kind} answer. {why}") for kind, code, why in kinds]
    return answers


_SHIFTED = '''


def _shift_outputs(out):
    if isinstance(out, (list, tuple)):
        return type(out)(_shift_outputs(o) for o in out)
    return out + 1 if hasattr(out, "dtype") else out


class ModelNew(_Base):  # the wrong answer wraps the right one
    def forward(self, *args, **kwargs):
        return _shift_outputs(super().forward(*args, **kwargs))
'''


def _reference_as_candidate(code: str) -> str:
    """A task's reference program as a candidate: its `Model` named `ModelNew` (uses of
    the name inside, `super(Model, self)`, follow), without the task's input functions."""
    import re

    body = re.sub(r"\bModel\b", "ModelNew", code)
    keep = []
    for line in body.splitlines():
        if re.match(r"(def get_inputs|def get_init_inputs|SIZE_PROFILES\s*=)", line):
            break
        keep.append(line)
    return "\n".join(keep).rstrip()


def _reply(code: str, reasoning: str) -> Reply:
    text = f"```python\n{code}\n```\n"
    tokens = max(1, len(text) // 4)
    return Reply(content=text, reasoning=reasoning, usage={
        "prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": 10 + tokens})


class ScriptedResponder:
    """Answers each request with the scripted completions of its task.

    The task is the one whose code appears last in the user turn (the prompt
    shows a few-shot example task first, then the task to solve); its answers
    are served in turn, cycling. A request for a task without answers gets a
    reply without code that says so (a parse failure downstream, as from a
    model that did not answer)."""

    def __init__(self, answers: dict[str, list[Reply]], task_codes: dict[str, str]):
        unknown = sorted(set(answers) - set(task_codes))
        if unknown:
            raise AnswersError(f"answers for task ids not in the task source: {', '.join(unknown[:5])}"
                               + (" ..." if len(unknown) > 5 else ""))
        self.answers = answers
        self.codes = {tid: code.strip() for tid, code in task_codes.items() if code.strip()}
        self.served: dict[str, int] = {}
        self._lock = threading.Lock()

    def task_of(self, body: dict) -> str | None:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages") or []
                         if isinstance(m, dict) and m.get("role") == "user")
        best, where = None, -1
        for tid, code in self.codes.items():
            pos = text.rfind(code)
            if pos > where or (pos == where and pos >= 0 and best is not None and len(code) > len(self.codes[best])):
                best, where = tid, pos
        return best if where >= 0 else None

    def __call__(self, body: dict, n: int) -> Reply:
        tid = self.task_of(body)
        if tid is None or tid not in self.answers:
            return Reply(content=f"(fake server: no scripted answer for task {tid or '<not recognised>'})",
                         usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
        with self._lock:
            i = self.served.get(tid, 0)
            self.served[tid] = i + 1
        return self.answers[tid][i % len(self.answers[tid])]


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
    """`python -m kernelmill.generate.fake_server --port 8011 [--answers FILE --tasks SRC | --pairs PAIRS]`:
    serve scripted answers until interrupted (dry runs, benchmarks). Without
    --answers every request gets the same identity ModelNew; with it, each
    task gets its own completions (JSONL lines {"task_id", "completion"})."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    ap.add_argument("--model", action="append", help="model name it serves (repeatable; default fake-model)")
    ap.add_argument("--answers", help="JSONL of {task_id, completion[, reasoning]}: scripted completions per task; "
                                      "'builtin': a correct, a wrong and a broken answer for every builtin task")
    ap.add_argument("--tasks", default="builtin", help="task source the prompts come from (to recognise the task)")
    ap.add_argument("--pairs", help="pairs JSONL the prompts come from instead (PTX templates): a pair is "
                                    "recognised by its PTX, the task id is its pair id")
    ap.add_argument("--ptx-field", default="ptx", help="with --pairs: the field generate sent (ptx or rolled_ptx)")
    args = ap.parse_args(argv)
    responder: Responder = default_responder
    if args.answers:
        from ..records import Pair, RecordError, read_jsonl
        from ..tasks import TaskSourceError, load_tasks

        try:
            if args.pairs:
                codes = {p.pair_id: (getattr(p, args.ptx_field, None) or p.ptx) for p in read_jsonl(args.pairs, Pair)}
            else:
                codes = {t.task_id: t.code for t in load_tasks(args.tasks)}
            answers = builtin_answers() if args.answers == "builtin" else load_answers(args.answers)
            responder = ScriptedResponder(answers, codes)
        except (AnswersError, TaskSourceError, RecordError, OSError) as exc:
            ap.exit(2, f"error: {exc}\n")
    srv = FakeOpenAIServer(responder, models=tuple(args.model or ["fake-model"]), latency_s=args.latency,
                           port=args.port)
    print(srv.url, flush=True)
    try:
        srv._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv._httpd.server_close()


if __name__ == "__main__":
    main()
