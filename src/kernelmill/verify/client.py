"""A small client of `kernelmill serve` (standard library only)."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request

from ..records import Sample, Task, Verdict, from_dict, to_dict


class ServiceError(RuntimeError):
    def __init__(self, status: int | None, message: str):
        super().__init__(message)
        self.status = status


class VerifyClient:
    """`VerifyClient(url)(tasks, samples) -> verdicts`: also usable as a train-time verifier.

    The token defaults to $KERNELMILL_SERVE_TOKEN. A 503 (queue full) is retried
    after the server's Retry-After, up to `retries` times.
    """

    def __init__(self, url: str, token: str | None = None, timeout: float = 900.0, retries: int = 5):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("KERNELMILL_SERVE_TOKEN")
        self.timeout = timeout
        self.retries = retries

    def _request(self, path: str, payload: dict | None = None) -> dict:
        body = None if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(self.url + path, data=body, headers=headers,
                                         method="GET" if body is None else "POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read())
            except urllib.error.HTTPError as exc:
                try:
                    message = json.loads(exc.read()).get("error", "")
                except ValueError:
                    message = ""
                if exc.code == 503 and attempt < self.retries:
                    time.sleep(float(exc.headers.get("Retry-After") or 1))
                    continue
                raise ServiceError(exc.code, f"{self.url}{path}: HTTP {exc.code}: {message}") from None
            except (urllib.error.URLError, OSError, ValueError) as exc:
                raise ServiceError(None, f"{self.url}{path}: {exc}") from exc
        raise AssertionError("unreachable")

    def health(self) -> dict:
        return self._request("/health")

    def verify(self, tasks: list[Task], samples: list[Sample]) -> list[Verdict]:
        data = self._request("/verify", {"tasks": [to_dict(t) for t in tasks],
                                         "samples": [to_dict(s) for s in samples]})
        verdicts = [from_dict(Verdict, v, where=self.url) for v in data.get("verdicts", [])]
        if len(verdicts) != len(samples):
            raise ServiceError(200, f"{self.url} returned {len(verdicts)} verdicts for {len(samples)} samples")
        return verdicts

    __call__ = verify
