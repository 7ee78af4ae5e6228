"""The result store: SQLite, content-addressed.

A verdict is keyed by the hash of everything that can change it: the task's
code and size profile, the candidate's language and code, the settings that
change the answer (`VerifyConfig.answer_key`) and the device name. Re-running
a finished set therefore does no work, and after a crash only the missing keys
are run. Only the harness process writes here; candidates never see the path.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path

from ..records import Sample, Task, Verdict, from_dict, to_dict

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    verdict TEXT NOT NULL,
    created REAL NOT NULL
);
"""


class StoreError(RuntimeError):
    """The store cannot be opened or written (our failure, not a candidate's)."""


def result_key(task: Task, sample: Sample, answer_key: str, device_name: str) -> str:
    """The store's key: `input_key` and the device's name."""
    return _hash(input_key(task, sample, answer_key), device_name)


def input_key(task: Task | None, sample: Sample, answer_key: str) -> str:
    """What a verdict answers, without the device: the task's code and sizes, the
    candidate's language and code, and every setting that can change the verdict
    (`VerifyConfig.answer_key`). Each verdict carries it (`Verdict.input_key`), so a
    verdicts file is resumed only for samples whose key is still the same."""
    return _hash(task.code if task else "", json.dumps(task.sizes if task else {}, sort_keys=True),
                 sample.language, sample.code, answer_key)


def _hash(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


class ResultStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the result store {self.path}: {exc}") from None
        self._lock = threading.Lock()

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            row = self._db.execute("SELECT verdict FROM verdicts WHERE key = ?", (key,)).fetchone()
        return from_dict(Verdict, json.loads(row[0])) if row else None

    def get_many(self, keys: list[str]) -> dict[str, Verdict]:
        out: dict[str, Verdict] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                q = f"SELECT key, verdict FROM verdicts WHERE key IN ({','.join('?' * len(chunk))})"
                for key, text in self._db.execute(q, chunk):
                    out[key] = from_dict(Verdict, json.loads(text))
        return out

    def put(self, key: str, verdict: Verdict) -> None:
        try:
            with self._lock, self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO verdicts (key, task_id, verdict, created) VALUES (?, ?, ?, ?)",
                    (key, verdict.task_id, json.dumps(to_dict(verdict)), time.time()))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write to the result store {self.path}: {exc}") from None

    def all(self) -> list[Verdict]:
        """Every stored verdict, oldest first (`kernelmill regrade` of a store)."""
        with self._lock:
            rows = self._db.execute("SELECT verdict FROM verdicts ORDER BY created").fetchall()
        return [from_dict(Verdict, json.loads(text)) for (text,) in rows]

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]

    def close(self) -> None:
        self._db.close()
