"""Decontamination against an evaluation benchmark (e.g. a KernelBench folder).

A record is contaminated when its task program or its code overlaps a
benchmark task's program by either test:

* word Jaccard >= 0.8 (SPEC.md section 4's leakage rule): lower-cased word
  sets, `|A & B| / |A | B|`; candidates come from a MinHash LSH index over the
  benchmark's word sets and are confirmed with the exact Jaccard;
* a long n-gram in common: any run of `ngram` (default 50) consecutive words
  shared with a benchmark program. Boilerplate that many benchmark tasks share
  (`def get_init_inputs(): return []`...) is not evidence, so n-grams found in
  more than `max_task_share` of the benchmark tasks are ignored.

A record also matches by identity: its `task_id` is a benchmark task's id (the
whole id, or its last part, `19_ReLU`), or its task's name (`task_name`, the
task source's name, else the id's last part without the number) is a
benchmark task's name, compared lower-cased without punctuation.

Each match names the benchmark task, the field (`task_code`, `code`,
`task_id` or `task_name`), the test and its score. Records are flagged (a `contamination` list is added) and
kept, or with `drop=True` moved to the excluded list.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..records import Task
from .normalize import normalize_code

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(normalize_code(text))]


def _ngrams(ws: list[str], n: int) -> set[int]:
    return {hash(tuple(ws[i:i + n])) for i in range(len(ws) - n + 1)}


@dataclass
class DecontamConfig:
    jaccard: float = 0.8
    ngram: int = 50
    max_task_share: float = 0.02   # n-grams in more benchmark tasks than this share are boilerplate
    drop: bool = False
    num_perm: int = 128


@dataclass
class DecontamResult:
    kept: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    flagged: int = 0
    checked_fields: dict[str, int] = field(default_factory=dict)
    without_task_code: int = 0  # rows whose task program was not available: only code, id and name checked

    def counts(self) -> dict[str, int]:
        return {"input": len(self.kept) + len(self.excluded), "kept": len(self.kept),
                "flagged": self.flagged, "dropped": len(self.excluded),
                "without_task_code": self.without_task_code,
                **{f"checked_{k}": v for k, v in self.checked_fields.items()}}


def _id_tail(task_id: str) -> str:
    tail = str(task_id).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return tail[:-3] if tail.endswith(".py") else tail


def _name_key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def name_from_id(task_id: str) -> str:
    """`level1/19_ReLU` -> `ReLU` (KernelBench's file names are NN_Name)."""
    return re.sub(r"^\d+_", "", _id_tail(task_id))


class BenchmarkIndex:
    """Word sets, an LSH index over them, and an n-gram table of the benchmark."""

    def __init__(self, tasks: list[Task], cfg: DecontamConfig):
        from datasketch import MinHash, MinHashLSH

        if not tasks:
            raise ValueError("the benchmark has no tasks to decontaminate against")
        self.cfg = cfg
        self.ids = [t.task_id for t in tasks]
        self.sets = []
        self.lsh = MinHashLSH(threshold=cfg.jaccard, num_perm=cfg.num_perm, weights=(0.01, 0.99))
        owners: dict[int, set[int]] = defaultdict(set)
        for i, t in enumerate(tasks):
            ws = _words(t.code)
            s = set(ws)
            self.sets.append(s)
            self.lsh.insert(i, self._minhash(s, MinHash))
            for g in _ngrams(ws, cfg.ngram):
                owners[g].add(i)
        limit = max(1, int(cfg.max_task_share * len(tasks)))
        self.ngram_owner = {g: min(o) for g, o in owners.items() if len(o) <= limit}
        self.boilerplate_ngrams = sum(1 for o in owners.values() if len(o) > limit)
        self.by_id: dict[str, int] = {}
        self.by_name: dict[str, int] = {}
        for i, t in enumerate(tasks):
            self.by_id.setdefault(t.task_id, i)
            self.by_id.setdefault(_id_tail(t.task_id), i)
            key = _name_key(t.name or name_from_id(t.task_id))
            if len(key) >= 3:
                self.by_name.setdefault(key, i)

    def identity_matches(self, task_id: str | None, name: str | None) -> list[dict[str, Any]]:
        out = []
        if task_id:
            i = self.by_id.get(str(task_id))
            if i is None:
                i = self.by_id.get(_id_tail(task_id))
            if i is not None:
                out.append({"benchmark_task": self.ids[i], "field": "task_id", "test": "same_id", "score": 1.0})
        key = _name_key(name or (name_from_id(task_id) if task_id else ""))
        i = self.by_name.get(key) if len(key) >= 3 else None
        if i is not None and not any(m["benchmark_task"] == self.ids[i] for m in out):
            out.append({"benchmark_task": self.ids[i], "field": "task_name", "test": "same_name", "score": 1.0})
        return out

    def _minhash(self, words: set[str], cls=None):
        if cls is None:
            from datasketch import MinHash as cls
        m = cls(num_perm=self.cfg.num_perm)
        m.update_batch(w.encode() for w in words)
        return m

    def matches(self, text: str, field_name: str) -> list[dict[str, Any]]:
        ws = _words(text)
        s = set(ws)
        out = {}
        for i in self.lsh.query(self._minhash(s)):
            b = self.sets[i]
            sim = len(s & b) / len(s | b) if (s or b) else 1.0
            if sim >= self.cfg.jaccard:
                out[i] = {"benchmark_task": self.ids[i], "field": field_name, "test": "jaccard",
                          "score": round(sim, 4)}
        hits: dict[int, int] = defaultdict(int)
        for g in _ngrams(ws, self.cfg.ngram):
            i = self.ngram_owner.get(g)
            if i is not None:
                hits[i] += 1
        for i, n in hits.items():
            if i not in out:
                out[i] = {"benchmark_task": self.ids[i], "field": field_name, "test": f"{self.cfg.ngram}-gram",
                          "score": n}
        return list(out.values())


def decontaminate(records: Iterable[dict[str, Any]], benchmark: list[Task],
                  cfg: DecontamConfig | None = None, task_code: dict[str, str] | None = None,
                  task_names: dict[str, str] | None = None) -> DecontamResult:
    """Check each record's `task_code` (or the code of its `task_id` from
    `task_code`), its `code`/`completion`, its task id and its task's name
    (`task_name`, or from `task_names`) against the benchmark."""
    cfg = cfg or DecontamConfig()
    index = BenchmarkIndex(benchmark, cfg)
    result = DecontamResult()
    cache: dict[str, list] = {}
    for rec in records:
        tid = rec.get("task_id")
        name = rec.get("task_name") or (task_names or {}).get(str(tid)) or None
        found = index.identity_matches(str(tid) if tid not in (None, "") else None, name)
        tcode = rec.get("task_code") or (task_code or {}).get(str(tid))
        if isinstance(tcode, str) and tcode:
            if tcode not in cache:  # many samples share one task program
                cache[tcode] = index.matches(tcode, "task_code")
            found += cache[tcode]
            result.checked_fields["task_code"] = result.checked_fields.get("task_code", 0) + 1
        else:
            result.without_task_code += 1
        for fname in ("code", "completion"):
            if isinstance(rec.get(fname), str) and rec[fname]:
                found += index.matches(rec[fname], fname)
                result.checked_fields[fname] = result.checked_fields.get(fname, 0) + 1
        if not found:
            result.kept.append(rec)
            continue
        result.flagged += 1
        # best match first: the programs' overlap, then the identity tests
        found.sort(key=lambda m: ({"jaccard": 0, "same_id": 2, "same_name": 3}.get(m["test"], 1), -m["score"]))
        if cfg.drop:
            first = found[0]
            result.excluded.append({"id": _rid(rec), "reason": "contaminated",
                                    "benchmark_task": first["benchmark_task"], "matches": found})
        else:
            result.kept.append({**rec, "contamination": found})
    return result


def _rid(rec: dict[str, Any]) -> str:
    for f in ("sample_id", "pair_id", "id", "task_id"):
        if rec.get(f):
            return str(rec[f])
    return ""
