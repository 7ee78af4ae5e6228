"""Verification over HTTP, for reward functions running in other processes or machines.

    POST /verify   {"tasks": [Task...], "samples": [Sample...]}  ->  {"verdicts": [Verdict...]}
    GET  /health   {"ok": true, "device": ..., "running": n, "waiting": n, "served": n}

``tasks`` may be left out (or name only some tasks) when the service was
started with a task source: samples then refer to its tasks by ``task_id``.
Verdicts come back one per sample, in order (docs/FORMATS.md).

Answers already in the store are served at once, without waiting for a
verification slot; other requests wait for one of ``concurrency`` slots (each
verification already uses every core and GPU), at most ``queue_limit`` of them
(then 503 with Retry-After). Bad requests get a 4xx and a JSON
``{"error": message}``: 400 malformed JSON or records, 401 a missing or wrong
token (when one is set), 404 unknown path, 411 no length, 413 too large.
The standard library's ThreadingHTTPServer is enough here: the work happens in
the verifier's own processes, the server only parses and waits.
"""

from __future__ import annotations

import hmac
import json
import threading
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..records import RecordError, Sample, Task, Verdict, from_dict, to_dict
from .config import VerifyConfig
from .runner import HarnessError, static_verdict
from .session import VerifySession
from .store import StoreError, result_key


@dataclass
class ServiceConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    max_body_bytes: int = 16 * 2**20  # one request's JSON
    max_samples: int = 4096  # samples in one request
    concurrency: int = 1  # verifications at once (each uses all cores/GPUs)
    queue_limit: int = 64  # requests waiting for a slot before 503
    token: str | None = None  # shared secret: "Authorization: Bearer TOKEN"


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class VerifyService:
    """The state behind the HTTP handler (usable without HTTP, e.g. in tests)."""

    def __init__(self, verify: VerifyConfig, service: ServiceConfig, store: str | None = None,
                 tasks: dict[str, Task] | None = None):
        self.verify_config = verify
        self.config = service
        self.tasks = dict(tasks or {})
        # one long-lived session for every request: its warm spare processes,
        # reference profiles and build cache carry over (a new candidate whose
        # build is cached then costs only its run)
        self.session = VerifySession(verify, store).open()
        self.verify_config = self.session.config
        self.executor, self.verifier, self.store = self.session.executor, self.session.verifier, self.session.store
        self._slots = threading.Semaphore(service.concurrency)
        self._lock = threading.Lock()
        self.running = self.waiting = self.served = self.served_cached = 0

    def parse(self, body: bytes) -> tuple[list[Task], list[Sample]]:
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadRequest(400, f"body is not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
            raise BadRequest(400, 'expected a JSON object {"samples": [...], "tasks": [...]}')
        raw_tasks = data.get("tasks") or []
        if not isinstance(raw_tasks, list):
            raise BadRequest(400, '"tasks" must be a list of Task objects')
        if len(data["samples"]) > self.config.max_samples:
            raise BadRequest(413, f"{len(data['samples'])} samples in one request; the limit is {self.config.max_samples}")
        try:
            tasks = [from_dict(Task, t, where=f"tasks[{i}]") for i, t in enumerate(raw_tasks) if _is_obj(t, "tasks", i)]
            samples = [from_dict(Sample, s, where=f"samples[{i}]") for i, s in enumerate(data["samples"])
                       if _is_obj(s, "samples", i)]
        except (RecordError, TypeError) as exc:
            raise BadRequest(400, str(exc)) from None
        for i, s in enumerate(samples):
            if not isinstance(s.code, str) or not isinstance(s.sample_id, str):
                raise BadRequest(400, f"samples[{i}]: sample_id and code must be strings")
        return tasks, samples

    def _task_map(self, tasks: list[Task]) -> dict[str, Task]:
        return {**self.tasks, **{t.task_id: t for t in tasks}}

    def cached(self, task_map: dict[str, Task], samples: list[Sample]) -> list[Verdict] | None:
        """Every sample's verdict from the store (or a static one), or None if any is missing."""
        v = self.verifier
        out, keys = [], []
        for s in samples:
            task = task_map.get(s.task_id)
            if static_verdict(s, task, v.device) is not None:
                return None  # cheap, but let verify_samples word it
            keys.append(result_key(task, s, v.answer_key, v.device_name))
        if self.store is None:
            return None
        hits = self.store.get_many(list(set(keys)))
        for s, k in zip(samples, keys):
            if k not in hits:
                return None
            out.append(replace(hits[k], sample_id=s.sample_id, task_id=s.task_id, cached=True))
        return out

    def verify(self, tasks: list[Task], samples: list[Sample]) -> list[Verdict]:
        task_map = self._task_map(tasks)
        hit = self.cached(task_map, samples)
        if hit is not None:
            with self._lock:
                self.served += 1
                self.served_cached += 1
            return hit
        with self._lock:
            if self.waiting >= self.config.queue_limit:
                raise BadRequest(503, f"the queue is full ({self.waiting} requests waiting); retry later")
            self.waiting += 1
        try:
            self._slots.acquire()
        finally:
            with self._lock:
                self.waiting -= 1
        try:
            with self._lock:
                self.running += 1
            verdicts = self._run(task_map, samples)
            with self._lock:
                self.served += 1
            return verdicts
        finally:
            with self._lock:
                self.running -= 1
            self._slots.release()

    def _run(self, task_map: dict[str, Task], samples: list[Sample]) -> list[Verdict]:
        return self.session.verify(task_map, samples, progress=False)

    def close(self) -> None:
        """Stop the verifier's spare processes and close the store."""
        self.session.close()

    def health(self) -> dict:
        with self._lock:
            return {"ok": True, "device": self.verifier.device_name, "running": self.running,
                    "waiting": self.waiting, "served": self.served, "served_cached": self.served_cached,
                    "tasks": len(self.tasks)}


def _is_obj(x, field: str, i: int) -> bool:
    if not isinstance(x, dict):
        raise TypeError(f"{field}[{i}] is {type(x).__name__}, expected an object")
    return True


class _Handler(BaseHTTPRequestHandler):
    service: VerifyService  # set on the subclass made by `make_server`
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args) -> None:  # quiet: one line per request is noise under load
        pass

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _authorised(self) -> bool:
        token = self.service.config.token
        if not token:
            return True
        given = self.headers.get("Authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/health":
            self._send(200, self.service.health())
        else:
            self._send(404, {"error": f"no such path {self.path}; use POST /verify or GET /health"})

    def do_POST(self) -> None:
        try:
            if self.path.rstrip("/") != "/verify":
                raise BadRequest(404, f"no such path {self.path}; use POST /verify")
            if not self._authorised():
                raise BadRequest(401, "missing or wrong token (send 'Authorization: Bearer TOKEN')")
            length = self.headers.get("Content-Length")
            if length is None:
                raise BadRequest(411, "Content-Length is required")
            try:
                n = int(length)
            except ValueError:
                raise BadRequest(400, f"bad Content-Length {length!r}") from None
            if n > self.service.config.max_body_bytes:
                raise BadRequest(413, f"request body of {n} bytes; the limit is {self.service.config.max_body_bytes}")
            tasks, samples = self.service.parse(self.rfile.read(n))
            verdicts = self.service.verify(tasks, samples)
            self._send(200, {"verdicts": [to_dict(v) for v in verdicts]})
        except BadRequest as exc:
            self.close_connection = exc.status in (411, 413)  # an unread body poisons keep-alive
            self._send(exc.status, {"error": str(exc)}, {"Retry-After": "5"} if exc.status == 503 else None)
        except (HarnessError, StoreError) as exc:
            self._send(500, {"error": f"the verifier failed: {exc}"})


def make_server(service: VerifyService) -> ThreadingHTTPServer:
    handler = type("Handler", (_Handler,), {"service": service})
    # the default listen backlog (5) resets connections when many clients connect at once
    server_cls = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 256})
    server = server_cls((service.config.host, service.config.port), handler)
    server.daemon_threads = True
    return server

