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

Each match names the benchmark task, the field (`task_code` or `code`), the
test and its score. Records are flagged (a `contamination` list is added) and
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

    def counts(self) -> dict[str, int]:
        return {"input": len(self.kept) + len(self.excluded), "kept": len(self.kept),
                "flagged": self.flagged, "dropped": len(self.excluded), **{f"checked_{k}": v for k, v in
                                                                           self.checked_fields.items()}}


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
                  cfg: DecontamConfig | None = None, task_code: dict[str, str] | None = None
                  ) -> DecontamResult:
    """Check each record's `task_code` (or the code of its `task_id` from
    `task_code`) and its `code`/`completion` against the benchmark."""
    cfg = cfg or DecontamConfig()
    index = BenchmarkIndex(benchmark, cfg)
    result = DecontamResult()
    cache: dict[str, list] = {}
    for rec in records:
        found = []
        tcode = rec.get("task_code") or (task_code or {}).get(str(rec.get("task_id")))
        if isinstance(tcode, str) and tcode:
            if tcode not in cache:  # many samples share one task program
                cache[tcode] = index.matches(tcode, "task_code")
            found += cache[tcode]
            result.checked_fields["task_code"] = result.checked_fields.get("task_code", 0) + 1
        for fname in ("code", "completion"):
            if isinstance(rec.get(fname), str) and rec[fname]:
                found += index.matches(rec[fname], fname)
                result.checked_fields[fname] = result.checked_fields.get(fname, 0) + 1
        if not found:
            result.kept.append(rec)
            continue
        result.flagged += 1
        found.sort(key=lambda m: (m["test"] != "jaccard", -m["score"]))  # best match first
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
