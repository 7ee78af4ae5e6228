"""Client for any OpenAI-compatible chat-completions server (vLLM, SGLang,
TGI, hosted APIs), async with bounded concurrency.

Retries with exponential backoff (full jitter, honouring `Retry-After`) cover
429, 5xx, timeouts, dropped connections and replies that are not the JSON we
expect. After the last retry a per-request failure becomes an error
completion (the run goes on); a server that stops answering at all, or
refuses the credentials, raises `BackendError` (the run stops, finished
samples are already on disk).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from typing import Any, Sequence

from .backend import (AuthError, BackendError, ChatRequest, Completion, GenerationStats, OnDone,
                      ServerUnreachable)

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
# httpcore 1.0's pool does O(connections^2) work per request (encode/httpcore#1035);
# at 64 connections that cost more CPU than everything else. Each client serves
# at most this many workers, so pools stay small.
CONNECTIONS_PER_CLIENT = 8


def _httpx():
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx is in the generate extra
        raise BackendError("the openai backend needs httpx: pip install 'kernelmill[generate]'") from None
    return httpx


class _RetryableError(Exception):
    def __init__(self, kind: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.kind, self.retry_after = kind, retry_after


class OpenAIBackend:
    name = "openai"

    def __init__(self, model: str, base_url: str = "http://127.0.0.1:8000/v1",
                 api_key_env: str = "OPENAI_API_KEY", concurrency: int = 16, max_retries: int = 5,
                 backoff_s: float = 1.0, max_backoff_s: float = 60.0, timeout_s: float = 900.0,
                 connect_timeout_s: float = 10.0, extra_body: dict[str, Any] | None = None,
                 tokenizer: str | None = None):
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.extra_body = dict(extra_body or {})
        self._tokenizer_path = tokenizer
        self._tokenizer = None
        httpx = _httpx()
        key = os.environ.get(api_key_env) if api_key_env else None
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._key_set = bool(key)
        n_clients = -(-concurrency // CONNECTIONS_PER_CLIENT)
        per_client = -(-concurrency // n_clients)
        self._clients = [httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            limits=httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client),
        ) for _ in range(n_clients)]

    # -- errors that concern every request -------------------------------------------------
    def _auth_error(self, status: int, body: str) -> AuthError:
        where = (f"${self.api_key_env} (set)" if self._key_set
                 else f"${self.api_key_env} (not set)" if self.api_key_env else "no API key")
        return AuthError(f"{self.base_url} refused the credentials (HTTP {status}); the key was taken from "
                         f"{where}. Set that variable or name another with --api-key-env. Server said: {body[:200]}")

    async def check(self) -> None:
        """Ask the server for its model list, so a wrong URL, key or model name
        fails before any output is written."""
        httpx = _httpx()
        url = f"{self.base_url}/models"
        try:
            resp = await self._clients[0].get(url, timeout=httpx.Timeout(30.0, connect=10.0))
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ServerUnreachable(f"cannot reach the server at {self.base_url} ({type(exc).__name__}: {exc}); "
                                    "is it running, and is --base-url right (it usually ends in /v1)?") from None
        except httpx.HTTPError as exc:
            raise ServerUnreachable(f"no answer from {url}: {type(exc).__name__}: {exc}") from None
        if resp.status_code in (401, 403):
            raise self._auth_error(resp.status_code, resp.text)
        if resp.status_code != 200:
            return  # some servers do not list models; the first request will tell
        try:
            ids = [m.get("id") for m in resp.json().get("data", [])]
        except (ValueError, AttributeError):
            return
        if ids and self.model not in ids:
            raise BackendError(f"model {self.model!r} is not served at {self.base_url}; it serves: {', '.join(map(str, ids))}")

    # -- one request ------------------------------------------------------------------------
    def _body(self, req: ChatRequest) -> dict[str, Any]:
        p = req.params
        body: dict[str, Any] = {"model": self.model, "messages": req.messages, "temperature": p.temperature,
                                "top_p": p.top_p, "max_tokens": p.max_tokens, "n": 1}
        if p.seed is not None:
            body["seed"] = p.seed
        body.update(self.extra_body)
        return body

    async def _attempt(self, body: dict[str, Any], client) -> Completion:
        httpx = _httpx()
        try:
            resp = await client.post(f"{self.base_url}/chat/completions", json=body)
        except httpx.TimeoutException as exc:
            raise _RetryableError("timeout", f"{type(exc).__name__}: {exc}") from None
        except httpx.TransportError as exc:
            raise _RetryableError("connection", f"{type(exc).__name__}: {exc}") from None
        if resp.status_code in (401, 403):
            raise self._auth_error(resp.status_code, resp.text)
        if resp.status_code in RETRY_STATUS or resp.status_code >= 500:
            raise _RetryableError(f"http_{resp.status_code}", f"HTTP {resp.status_code}: {resp.text[:300]}",
                                  _retry_after(resp.headers.get("retry-after")))
        if resp.status_code != 200:
            # the server rejected this prompt (e.g. too long): retrying will not help
            return Completion(error=f"HTTP {resp.status_code}: {resp.text[:500]}", error_kind=f"http_{resp.status_code}")
        try:
            return parse_chat_response(resp.json())
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise _RetryableError("bad_response", f"unexpected reply ({type(exc).__name__}: {exc}): {resp.text[:300]}") from None

    async def complete(self, req: ChatRequest, stats: GenerationStats | None = None, client=None) -> Completion:
        body = self._body(req)
        client = client or self._clients[0]
        t0 = time.monotonic()
        last: _RetryableError | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                if stats is not None:
                    stats.retries += 1
                await asyncio.sleep(self._delay(attempt, last.retry_after if last else None))
            try:
                comp = await self._attempt(body, client)
            except _RetryableError as exc:
                last = exc
                continue
            comp.attempts, comp.latency_s = attempt + 1, time.monotonic() - t0
            comp.model = comp.model or self.model
            return comp
        assert last is not None
        if last.kind == "connection":
            # the server went away: every further request would fail the same way
            raise ServerUnreachable(f"lost the server at {self.base_url} after {self.max_retries + 1} attempts: {last}")
        return Completion(error=f"gave up after {self.max_retries + 1} attempts: {last}", error_kind=last.kind,
                          attempts=self.max_retries + 1, latency_s=time.monotonic() - t0, model=self.model)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff_s)
        cap = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
        return random.uniform(cap / 2, cap)  # jitter spreads a burst of 429s

    # -- many requests ----------------------------------------------------------------------
    async def complete_all(self, requests: Sequence[ChatRequest], on_done: OnDone,
                           stats: GenerationStats | None = None) -> None:
        """A fixed pool of workers pulls from one queue: memory stays flat for
        100k requests, and at most `concurrency` are in flight."""
        queue: asyncio.Queue = asyncio.Queue()
        for r in requests:
            queue.put_nowait(r)

        async def worker(client) -> None:
            while True:
                try:
                    req = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                if stats is not None:
                    stats.in_flight += 1
                try:
                    comp = await self.complete(req, stats, client)
                finally:
                    if stats is not None:
                        stats.in_flight -= 1
                on_done(req, comp)

        workers = [asyncio.ensure_future(worker(self._clients[i % len(self._clients)]))
                   for i in range(min(self.concurrency, len(requests)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    def count_tokens(self, text: str) -> int | None:
        if not self._tokenizer_path:
            return None
        if self._tokenizer is None:
            from .hf_backend import load_tokenizer

            self._tokenizer = load_tokenizer(self._tokenizer_path)
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    async def aclose(self) -> None:
        for c in self._clients:
            await c.aclose()


def parse_chat_response(data: dict[str, Any]) -> Completion:
    """Read one chat-completions reply. Reasoning servers put the trace in
    `reasoning_content` (vLLM, DeepSeek, SGLang) or `reasoning` (newer vLLM,
    OpenRouter); the token count of it, when reported, sits in
    `usage.completion_tokens_details.reasoning_tokens`."""
    choice = data["choices"][0]
    msg = choice["message"]
    content = msg.get("content") or ""
    if not isinstance(content, str):
        raise TypeError("message.content is not a string")
    reasoning = msg.get("reasoning_content") or msg.get("reasoning") or None
    usage = dict(data.get("usage") or {})
    details = usage.get("completion_tokens_details") or {}
    if isinstance(details, dict) and details.get("reasoning_tokens") is not None:
        usage["reasoning_tokens"] = details["reasoning_tokens"]
    return Completion(content=content, reasoning=reasoning, finish_reason=choice.get("finish_reason"),
                      usage=usage, model=data.get("model"))


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff

