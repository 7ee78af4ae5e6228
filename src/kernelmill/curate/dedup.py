"""Exact and near-duplicate removal, with every dropped record accounted for.

Records are JSON objects with a text to compare: `prompt` + `completion` when
both exist (CSV-style pairs, SPEC.md section 4's key), else `code` (samples,
curated rows). The first occurrence in input order is kept; a later record is
dropped with the id of the kept record it duplicates, so sort the input first
if another preference (faster, shorter) should win.

* exact: SHA-1 of the normalised text (`sha1(norm(prompt) + "|||" +
  norm(completion))`, or `task_id ||| norm(code)` under task scope);
* minhash: exact first, then MinHash (datasketch's affine32 permutations)
  over k-token shingles of the normalised code, candidate pairs from LSH bands
  chosen by datasketch's `MinHashLSH` for the threshold (`lsh.py` hashes them
  for all records at once), and every candidate confirmed with the *exact*
  Jaccard of the two shingle sets (so the estimate's noise cannot drop a
  record below the threshold). The bands are tuned for recall
  (`recall_weight`), since false candidates only cost a verification: at
  threshold 0.8 a pair at exactly 0.8 becomes a candidate with probability
  ~0.99, at 0.85 ~0.999.

Work runs in `workers` processes in fixed-size chunks (so results do not
depend on the worker count): pass 1 normalises every record once for its
SHA-1 key and MinHash row (`shingles.py`, vectorised over a chunk); pass 2
builds exact shingle sets only for records that share an LSH band key with
another record, the only ones that can need a verification.

Scope `task` (the default for samples) only compares records of the same
`task_id`: the same kernel for two different tasks is two training examples
with different prompts. Scope `global` compares everything.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from .lsh import band_keys, band_params, greedy_pass, shared_keys
from .normalize import NORMALIZERS, jaccard, sha1_key
from .shingles import minhash_rows, shingle_batch

ID_FIELDS = ("sample_id", "pair_id", "id", "task_id")


@dataclass
class DedupConfig:
    method: str = "minhash"       # exact | minhash
    threshold: float = 0.8        # Jaccard at or above which two records are near-duplicates
    shingle: int = 5              # tokens per shingle
    num_perm: int = 128           # MinHash permutations
    normalization: str = "code"   # code | text (SPEC.md section 4's rule)
    scope: str = "task"           # task | global
    workers: int = 0              # processes for fingerprints and shingle sets; 0 = all CPUs
    seed: int = 1                 # MinHash permutation seed
    # LSH band/row choice weighs missed pairs this much against false
    # candidates: candidates are verified exactly, so misses are what cost.
    recall_weight: float = 0.99

    def check(self) -> None:
        if self.method not in ("exact", "minhash"):
            raise ValueError(f"method must be exact or minhash, not {self.method!r}")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], not {self.threshold}")
        if self.shingle < 1 or self.num_perm < 16:
            raise ValueError("shingle must be >= 1 and num_perm >= 16")
        if self.normalization not in NORMALIZERS:
            raise ValueError(f"normalization must be one of {', '.join(NORMALIZERS)}")
        if self.scope not in ("task", "global"):
            raise ValueError(f"scope must be task or global, not {self.scope!r}")


@dataclass
class DedupResult:
    kept: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)  # id, reason, duplicate_of, similarity, record

    def counts(self) -> dict[str, int]:
        out = {"input": len(self.kept) + len(self.excluded), "kept": len(self.kept)}
        for e in self.excluded:
            out[e["reason"]] = out.get(e["reason"], 0) + 1
        return out


def record_id(rec: dict[str, Any], index: int) -> str:
    for f in ID_FIELDS:
        if rec.get(f) not in (None, ""):
            return str(rec[f])
    return f"#{index + 1}"


def record_text(rec: dict[str, Any], where: str = "") -> str:
    if isinstance(rec.get("prompt"), str) and isinstance(rec.get("completion"), str):
        return rec["prompt"] + "\n" + rec["completion"]
    code = rec.get("code")
    if not isinstance(code, str):
        raise ValueError(f"{where}: record has neither a 'code' string nor 'prompt'/'completion' strings")
    return code


def _scope_key(rec: dict[str, Any], cfg: DedupConfig) -> str:
    return str(rec.get("task_id", "")) if cfg.scope == "task" else ""


def _key_parts(rec: dict[str, Any], cfg: DedupConfig) -> tuple[str, ...]:
    """(scope, text...) that the exact key hashes after normalisation."""
    if isinstance(rec.get("prompt"), str) and isinstance(rec.get("completion"), str):
        return (_scope_key(rec, cfg), rec["prompt"], rec["completion"])
    return (_scope_key(rec, cfg), rec["code"])


# ---- work in processes: fixed chunks, the records shared by fork when possible --

_ITEMS: list[tuple[str, ...]] | None = None  # set before the pool forks; read by workers


def _call(job):
    fn, idx, payload, args = job
    items = payload if payload is not None else [_ITEMS[i] for i in idx]
    return fn(items, *args)


class _Runner:
    """Maps a chunk function over index chunks, in up to `workers` processes
    (started on the first map with more than one chunk, kept for the next) or
    inline. With fork, workers read the records from the parent's memory."""

    def __init__(self, items: list[tuple[str, ...]], workers: int):
        self.items, self.workers, self.pool = items, workers, None
        self.fork = "fork" in mp.get_all_start_methods()

    def __enter__(self) -> "_Runner":
        return self

    def __exit__(self, *exc) -> None:
        global _ITEMS
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None
        _ITEMS = None

    def map(self, fn, chunks: list, *args) -> list:
        global _ITEMS
        if self.pool is None and (self.workers <= 1 or len(chunks) <= 1):
            return [fn([self.items[i] for i in idx], *args) for idx in chunks]
        if self.pool is None:
            _ITEMS = self.items  # before the fork: inherited, never pickled
            self.pool = mp.get_context("fork" if self.fork else "spawn").Pool(min(self.workers, len(chunks)))
        jobs = [(fn, idx, None if self.fork else [self.items[i] for i in idx], args) for idx in chunks]
        return self.pool.map(_call, jobs, chunksize=1)


def _normed(items, normalization: str) -> tuple[list[str], list[str]]:
    """(SHA-1 key, normalised text to shingle) per item (scope, text...)."""
    norm = NORMALIZERS[normalization]
    keys, joined = [], []
    for scope, *texts in items:
        normed = [norm(t) for t in texts]
        keys.append(sha1_key(scope, *normed))
        joined.append("\n".join(normed))
    return keys, joined


def _fingerprint_chunk(items, normalization: str, k: int, perms: np.ndarray | None
                       ) -> tuple[list[str], np.ndarray | None]:
    """Exact keys and (with `perms`) MinHash rows for a chunk; each text is
    normalised once. Shingles and rows are computed for the whole chunk in
    numpy (`shingles.py`): no per-token Python objects."""
    keys, joined = _normed(items, normalization)
    if perms is None:
        return keys, None
    sh, off = shingle_batch(joined, k)
    return keys, minhash_rows(sh, off, perms)


def _shingle_set_chunk(items, normalization: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique shingle hashes per item, concatenated, with offsets."""
    _, joined = _normed(items, normalization)
    sh, off = shingle_batch(joined, k)
    sets = [np.unique(sh[off[i]:off[i + 1]]) for i in range(len(joined))]
    out_off = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in sets], out=out_off[1:])
    return (np.concatenate(sets) if sets else np.zeros(0, dtype=np.uint32)), out_off


def _permutations(num_perm: int, seed: int) -> np.ndarray:
    """datasketch's affine32 permutation parameters (a, b) for this seed."""
    from datasketch import MinHash

    return MinHash(num_perm=num_perm, seed=seed).permutations


def _chunks(idx: list[int] | range, size: int) -> list:
    return [idx[i:i + size] for i in range(0, len(idx), size)]


def fingerprints(items: list[tuple[str, ...]], cfg: DedupConfig, runner: _Runner | None = None,
                 chunk: int = 1000) -> tuple[list[str], np.ndarray | None]:
    """Exact keys (and MinHash rows for method minhash), in input order."""
    if runner is None:
        with _Runner(items, _workers(cfg)) as run:
            return fingerprints(items, cfg, run, chunk)
    perms = _permutations(cfg.num_perm, cfg.seed) if cfg.method == "minhash" else None
    parts = runner.map(_fingerprint_chunk, _chunks(range(len(items)), chunk), cfg.normalization,
                       cfg.shingle, perms)
    keys = [k for ks, _ in parts for k in ks]
    if perms is None:
        return keys, None
    sigs = (np.concatenate([s for _, s in parts]) if parts
            else np.zeros((0, cfg.num_perm), dtype=np.uint32))
    return keys, sigs


def _workers(cfg: DedupConfig) -> int:
    return cfg.workers or os.cpu_count() or 1


def dedup(records: Iterable[dict[str, Any]], cfg: DedupConfig | None = None, where: str = "input"
          ) -> DedupResult:
    cfg = cfg or DedupConfig()
    cfg.check()
    records = list(records)
    for i, r in enumerate(records):
        record_text(r, f"{where}: record {i + 1}")  # a clear error before any work
    ids = [record_id(r, i) for i, r in enumerate(records)]
    items = [_key_parts(r, cfg) for r in records]
    result = DedupResult()
    with _Runner(items, _workers(cfg)) as runner:
        keys, sigs = fingerprints(items, cfg, runner)
        first_by_key: dict[str, int] = {}
        survivors: list[int] = []
        for i, key in enumerate(keys):
            j = first_by_key.get(key)
            if j is None:
                first_by_key[key] = i
                survivors.append(i)
            else:
                result.excluded.append({"id": ids[i], "reason": "exact_duplicate", "duplicate_of": ids[j],
                                        "similarity": 1.0, "_index": i})
        if cfg.method == "minhash":
            survivors = _near_dedup(survivors, sigs, items, ids, cfg, result, runner)
    result.kept = [records[i] for i in survivors]
    for e in result.excluded:  # the dropped record itself, so the exclusion file can restore it
        e["record"] = records[e.pop("_index")]
    return result


def _near_dedup(order: list[int], sigs: np.ndarray, items, ids, cfg: DedupConfig,
                result: DedupResult, runner: _Runner, chunk: int = 1000) -> list[int]:
    bands, r = band_params(cfg.threshold, cfg.num_perm, cfg.recall_weight)
    order_a = np.asarray(order, dtype=np.int64)
    scope_hash: dict[str, int] = {}
    for i in order:
        if items[i][0] not in scope_hash:
            scope_hash[items[i][0]] = int(sha1_key(items[i][0])[:16], 16)
    scopes = np.array([scope_hash[items[i][0]] for i in order], dtype=np.uint64)
    keys = band_keys(sigs[order_a], bands, r, scopes)
    hot = shared_keys(keys)
    # exact shingle sets for the records that can meet a candidate (pass 2)
    need = order_a[hot.any(axis=1)].tolist()
    sets: dict[int, np.ndarray] = {}
    for idx, (flat, off) in zip(_chunks(need, chunk),
                                runner.map(_shingle_set_chunk, _chunks(need, chunk), cfg.normalization, cfg.shingle)):
        for n, i in enumerate(idx):
            sets[i] = flat[off[n]:off[n + 1]]

    def match(row: int, cand_rows) -> int | None:
        i = order[row]
        best, best_sim = None, -1.0
        for c in cand_rows:  # ascending: ties go to the earliest record
            j = order[c]
            if items[j][0] != items[i][0]:  # another task (scope task); key collisions only
                continue
            sim = jaccard(sets[i], sets[j])
            if sim >= cfg.threshold and sim > best_sim:
                best, best_sim = j, sim
        if best is None:
            return None
        result.excluded.append({"id": ids[i], "reason": "near_duplicate", "duplicate_of": ids[best],
                                "similarity": round(best_sim, 4), "_index": i})
        return best

    kept = greedy_pass(keys, hot, match)
    return order_a[kept].tolist()
