"""Exact and near-duplicate removal, with every dropped record accounted for.

Records are JSON objects with a text to compare: `prompt` + `completion` when
both exist (CSV-style pairs, SPEC.md section 4's key), else `code` (samples,
curated rows). The first occurrence in input order is kept; a later record is
dropped with the id of the kept record it duplicates, so sort the input first
if another preference (faster, shorter) should win.

* exact: SHA-1 of the normalised text (`sha1(norm(prompt) + "|||" +
  norm(completion))`, or `task_id ||| norm(code)` under task scope);
* minhash: exact first, then MinHash over k-token shingles of the normalised
  code, candidate pairs from datasketch's `MinHashLSH` at the threshold, and
  every candidate confirmed with the *exact* Jaccard of the two shingle sets
  (so the estimate's noise cannot drop a record below the threshold). The
  LSH bands are tuned for recall (`recall_weight`), since false candidates
  only cost a verification: at threshold 0.8 a pair at exactly 0.8 becomes a
  candidate with probability ~0.99, at 0.85 ~0.999.

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

from .normalize import NORMALIZERS, jaccard, sha1_key, shingle_hashes

ID_FIELDS = ("sample_id", "pair_id", "id", "task_id")


@dataclass
class DedupConfig:
    method: str = "minhash"       # exact | minhash
    threshold: float = 0.8        # Jaccard at or above which two records are near-duplicates
    shingle: int = 5              # tokens per shingle
    num_perm: int = 128           # MinHash permutations
    normalization: str = "code"   # code | text (SPEC.md section 4's rule)
    scope: str = "task"           # task | global
    workers: int = 0              # processes for signatures; 0 = all CPUs
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
    excluded: list[dict[str, Any]] = field(default_factory=list)  # id, reason, duplicate_of, similarity

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


# ---- fingerprints (exact key + MinHash row), computed in worker processes ------

def _permutations(num_perm: int, seed: int) -> np.ndarray:
    """datasketch's affine32 permutation parameters (a, b) for this seed."""
    from datasketch import MinHash

    return MinHash(num_perm=num_perm, seed=seed).permutations


def _fingerprints(args: tuple[list[tuple[str, ...]], str, int, int, int, bool]
                  ) -> tuple[list[str], np.ndarray | None]:
    """Exact keys and MinHash rows for a chunk: each text is normalised once.

    A MinHash row is min over shingles of a*h + b (mod 2^32): datasketch's
    affine32 permutation family applied to the whole shingle array at once.
    The shingle hashes are already avalanche-mixed (`shingle_hashes`), which
    is what datasketch's own pre-mix is for. One numpy expression per text,
    rather than `MinHash.update_batch`'s per-value Python loop, is what makes
    100,000 kernels fit the time budget."""
    items, normalization, k, num_perm, seed, with_sig = args
    norm = NORMALIZERS[normalization]
    keys = []
    sigs = None
    if with_sig:
        a, b = _permutations(num_perm, seed)
        sigs = np.full((len(items), num_perm), np.iinfo(np.uint32).max, dtype=np.uint32)
    for i, (scope, *texts) in enumerate(items):
        normed = [norm(t) for t in texts]
        keys.append(sha1_key(scope, *normed))
        if with_sig:
            h = shingle_hashes("\n".join(normed), k, unique=False).astype(np.uint32)
            if len(h):
                sigs[i] = (h[:, None] * a + b).min(axis=0)
    return keys, sigs


def fingerprints(items: list[tuple[str, ...]], cfg: DedupConfig, chunk: int = 2000
                 ) -> tuple[list[str], np.ndarray | None]:
    """Exact keys (and MinHash rows for method minhash), in input order."""
    with_sig = cfg.method == "minhash"
    jobs = [(items[i:i + chunk], cfg.normalization, cfg.shingle, cfg.num_perm, cfg.seed, with_sig)
            for i in range(0, len(items), chunk)]
    workers = cfg.workers or os.cpu_count() or 1
    if workers <= 1 or len(jobs) <= 1:
        parts = [_fingerprints(j) for j in jobs]
    else:
        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        with mp.get_context(method).Pool(min(workers, len(jobs))) as pool:
            parts = list(pool.imap(_fingerprints, jobs))
    keys = [k for ks, _ in parts for k in ks]
    sigs = np.concatenate([s for _, s in parts]) if with_sig and parts else None
    return keys, sigs


def dedup(records: Iterable[dict[str, Any]], cfg: DedupConfig | None = None, where: str = "input"
          ) -> DedupResult:
    cfg = cfg or DedupConfig()
    cfg.check()
    records = list(records)
    texts = [record_text(r, f"{where}: record {i + 1}") for i, r in enumerate(records)]
    ids = [record_id(r, i) for i, r in enumerate(records)]
    keys, sigs = fingerprints([_key_parts(r, cfg) for r in records], cfg)
    result = DedupResult()
    first_by_key: dict[str, int] = {}
    survivors: list[int] = []
    for i, key in enumerate(keys):
        j = first_by_key.get(key)
        if j is None:
            first_by_key[key] = i
            survivors.append(i)
        else:
            result.excluded.append({"id": ids[i], "reason": "exact_duplicate", "duplicate_of": ids[j],
                                    "similarity": 1.0})
    if cfg.method == "exact":
        result.kept = [records[i] for i in survivors]
        return result
    kept_idx = _near_dedup(survivors, sigs, records, texts, ids, cfg, result)
    result.kept = [records[i] for i in kept_idx]
    return result


def _near_dedup(order: list[int], sigs: np.ndarray, records, texts, ids, cfg: DedupConfig,
                result: DedupResult) -> list[int]:
    from datasketch import MinHash, MinHashLSH

    norm = NORMALIZERS[cfg.normalization]
    perms = _permutations(cfg.num_perm, cfg.seed)
    lsh = MinHashLSH(threshold=cfg.threshold, num_perm=cfg.num_perm,
                     weights=(1.0 - cfg.recall_weight, cfg.recall_weight))
    shingles: dict[int, np.ndarray] = {}

    def shingles_of(i: int) -> np.ndarray:
        s = shingles.get(i)
        if s is None:
            s = shingles[i] = shingle_hashes(norm(texts[i]), cfg.shingle)
        return s

    kept = []
    for i in order:
        m = MinHash(num_perm=cfg.num_perm, seed=cfg.seed, hashvalues=sigs[i], permutations=perms,
                    scheme="affine32")
        best, best_sim = None, -1.0
        scope = _scope_key(records[i], cfg)
        for j in lsh.query(m):
            if _scope_key(records[j], cfg) != scope:
                continue
            sim = jaccard(shingles_of(i), shingles_of(j))
            if sim >= cfg.threshold and (sim > best_sim or (sim == best_sim and j < best)):
                best, best_sim = j, sim
        if best is None:
            lsh.insert(i, m, check_duplication=False)
            kept.append(i)
        else:
            result.excluded.append({"id": ids[i], "reason": "near_duplicate", "duplicate_of": ids[best],
                                    "similarity": round(best_sim, 4)})
    return kept
