"""One long-lived verification session: an executor, a `Verifier` and its store, opened
on first use and kept across calls, so warm spare processes, resident supervisors and
reference profiles carry over. `kernelmill serve` (service.py) and the GRPO reward
(train/rewards.py `LocalVerifier`) each hold one; `verify_samples` without a verifier is
the one-shot form of the same.

    with VerifySession(VerifyConfig(device="cpu"), store="v.sqlite") as session:
        verdicts = session.verify(tasks, samples)
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Any

from ..records import Sample, Verdict
from .config import VerifyConfig


class VerifySession:
    def __init__(self, config: VerifyConfig | None = None, store: str | Path | None = None):
        self.config = config or VerifyConfig()
        self.store_path = store
        self._verifier = None
        self._executor = None
        self._lock = threading.Lock()

    def open(self) -> "VerifySession":
        """Start the executor and the verifier now (else on the first `verify`)."""
        with self._lock:
            if self._verifier is None:
                from .executors import make_executor
                from .runner import Verifier
                from .store import ResultStore

                self._executor = make_executor(self.config.executor, self.config.address)
                self.config = self._executor.prepare(self.config)
                store = ResultStore(self.store_path) if self.store_path else None
                self._verifier = Verifier(self.config, store)
                atexit.register(self.close)
        return self

    @property
    def verifier(self):
        return self.open()._verifier

    @property
    def executor(self):
        return self.open()._executor

    @property
    def store(self):
        return self.verifier.store

    def verify(self, tasks: Any, samples: list[Sample], **options: Any) -> list[Verdict]:
        """`verify_samples` on this session's verifier (its config and store)."""
        from .runner import verify_samples

        return verify_samples(tasks, samples, executor=self.executor, verifier=self.verifier, **options)

    __call__ = verify

    def close(self) -> None:
        """Stop the spares and residents, close the store; a later `verify` opens again."""
        with self._lock:
            verifier, self._verifier = self._verifier, None
        if verifier is not None:
            verifier.close()
            if verifier.store is not None:
                verifier.store.close()

    def __enter__(self) -> "VerifySession":
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["VerifySession"]
