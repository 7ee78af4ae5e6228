"""LSH banding over a whole matrix of MinHash rows at once.

datasketch's `MinHashLSH` chooses the bands: b bands of r rows minimising its
weighted false-positive/false-negative integrals at the threshold. Its index,
though, wants one `MinHash` object per record and hashes each band with a
Python call on query and again on insert: for 100,000 records that was half of
dedup's time. Here the same bands are hashed for all records in a few numpy
passes, and one sort finds the band keys that occur more than once. A record
whose band keys are all unique can be no one's candidate, so the sequential
"query, then insert if kept" pass only visits records that share a key, and
only their shared keys.

A band key is a 64-bit hash of the band's r values, its band number and the
record's scope, so records of two scopes (two tasks) never meet. Two different
bands hashing alike only adds a candidate, and every candidate is confirmed
with the exact Jaccard by the caller, so a key collision cannot drop a record.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from .shingles import mix64

_U64 = np.uint64
_ROW_BASE = _U64(0x100000001B3)
_BAND_SALT = _U64(0x9E3779B97F4A7C15)


@lru_cache(maxsize=32)
def band_params(threshold: float, num_perm: int, recall_weight: float) -> tuple[int, int]:
    """(bands, rows per band) as datasketch's MinHashLSH picks them."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=(1.0 - recall_weight, recall_weight))
    return lsh.b, lsh.r


def band_keys(rows: np.ndarray, bands: int, r: int, scopes: np.ndarray) -> np.ndarray:
    """(records, bands) uint64 band keys of the MinHash rows (uint32, one a record);
    `scopes` is a uint64 scope hash per record."""
    n = rows.shape[0]
    keys = np.empty((n, bands), dtype=_U64)
    with np.errstate(over="ignore"):
        for t in range(bands):
            acc = scopes.astype(_U64) + _U64(t + 1) * _BAND_SALT
            for c in range(t * r, (t + 1) * r):
                acc = acc * _ROW_BASE + rows[:, c]
            keys[:, t] = mix64(acc)
    return keys


def shared_keys(keys: np.ndarray) -> np.ndarray:
    """(records, bands) bool: this band key occurs in another record too."""
    if keys.size == 0:
        return np.zeros(keys.shape, dtype=bool)
    _, inverse, counts = np.unique(keys.ravel(), return_inverse=True, return_counts=True)
    return (counts[inverse] > 1).reshape(keys.shape)


def greedy_pass(keys: np.ndarray, hot: np.ndarray, match: Callable[[int, Sequence[int]], int | None]
                ) -> np.ndarray:
    """Keep-first-occurrence over records in row order.

    Record i's candidates are the kept records before it that share one of its
    (shared) band keys; `match(i, candidates)` returns the candidate it
    duplicates, or None. Returns a bool array: kept. Records with no shared
    key are kept without a call (they are in no other record's buckets)."""
    kept = np.ones(len(keys), dtype=bool)
    rows = np.flatnonzero(hot.any(axis=1))
    table: dict[int, list[int]] = {}
    for i, ks, hs in zip(rows.tolist(), keys[rows].tolist(), hot[rows].tolist()):
        mine = [k for k, h in zip(ks, hs) if h]
        cands: set[int] = set()
        for k in mine:
            bucket = table.get(k)
            if bucket:
                cands.update(bucket)
        if cands and match(i, sorted(cands)) is not None:
            kept[i] = False
            continue
        for k in mine:
            bucket = table.get(k)
            if bucket is None:
                table[k] = [i]
            else:
                bucket.append(i)
    return kept
