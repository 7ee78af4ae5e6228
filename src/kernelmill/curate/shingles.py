"""Code-token shingles and MinHash rows, computed for many texts at once.

Dedup hashes every token of 100,000 kernels; doing that one Python object per
token (a token list, a vocabulary lookup per token) was most of its time. Here
a batch of texts is joined into one byte array and everything runs as a few
numpy passes over it:

* tokens: identifiers/numbers (runs of non-space, non-punctuation bytes) and
  single ASCII punctuation characters -- the split of `normalize.code_tokens`;
* a token's hash: a polynomial hash of its bytes, read off prefix sums (so no
  per-token loop), then avalanche-mixed;
* a shingle's hash: a polynomial combination of its k token hashes, mixed and
  cut to 32 bits; shingles never span two texts, and a text with fewer than k
  tokens gives one shingle of all its tokens;
* MinHash rows: datasketch's `affine32` permutations (a*h + b mod 2^32, with
  its (a, b) for the seed) applied to the (already mixed) shingle hashes, min
  per text: one `minimum.reduceat` per block of texts.
"""

from __future__ import annotations

import numpy as np

_U64 = np.uint64
_M1, _M2 = _U64(0xBF58476D1CE4E5B9), _U64(0x94D049BB133111EB)  # splitmix64 finaliser
_TOKEN_BASE = _U64(0x100000001B3)      # polynomial base over bytes (odd: invertible mod 2^64)
_SHINGLE_BASE = _U64(0x9E3779B97F4A7C15)
_SEP = b"\n"                            # whitespace: no token spans two joined texts

# byte class: 0 whitespace (as str.split sees ASCII), 1 part of a word, 2 punctuation
_CLASS = np.ones(256, dtype=np.int8)
_CLASS[list(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")] = 0
_CLASS[list(b"!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~")] = 2

_pow_cache: dict[str, np.ndarray] = {}


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """TOKEN_BASE^i and its inverse^i for i < n (wrapping uint64), cached and grown."""
    have = _pow_cache.get("pow")
    if have is None or len(have) < n:
        size = max(n, 1 << 16, 2 * (0 if have is None else len(have)))
        inv = pow(int(_TOKEN_BASE), -1, 1 << 64)
        with np.errstate(over="ignore"):
            _pow_cache["pow"] = np.cumprod(np.full(size, _TOKEN_BASE, dtype=_U64))
            _pow_cache["inv"] = np.cumprod(np.full(size, _U64(inv), dtype=_U64))
        _pow_cache["pow"] = np.concatenate(([_U64(1)], _pow_cache["pow"][:-1]))
        _pow_cache["inv"] = np.concatenate(([_U64(1)], _pow_cache["inv"][:-1]))
    return _pow_cache["pow"][:n], _pow_cache["inv"][:n]


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on a uint64 array, in place (wrapping); returns it."""
    with np.errstate(over="ignore"):
        x ^= x >> _U64(30)
        x *= _M1
        x ^= x >> _U64(27)
        x *= _M2
        x ^= x >> _U64(31)
    return x


def _joined(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The texts as one byte array (separated by a newline) and each text's start offset."""
    parts = []
    for t in texts:
        if not t.isascii():
            # only ASCII whitespace is a separator below; make Unicode spaces ASCII
            # (token-preserving: tokens never contain whitespace)
            t = " ".join(t.split())
        parts.append(t.encode("utf-8"))
    starts = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p) + 1 for p in parts], out=starts[1:])
    return np.frombuffer(_SEP.join(parts) + _SEP, dtype=np.uint8), starts


def token_hashes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(hash of every token of every text, in order; token offsets per text, len n+1)."""
    buf, starts = _joined(texts)
    cls = _CLASS[buf]
    prev = np.empty_like(cls)
    prev[0], prev[1:] = 0, cls[:-1]
    nxt = np.empty_like(cls)
    nxt[-1], nxt[:-1] = 0, cls[1:]
    word = cls != 0
    punct = cls == 2
    tok_start = np.flatnonzero(word & (punct | (prev != cls)))
    tok_end = np.flatnonzero(word & (punct | (nxt != cls))) + 1
    pw, inv = _powers(len(buf) + 1)
    with np.errstate(over="ignore"):
        prefix = np.zeros(len(buf) + 1, dtype=_U64)
        np.cumsum((buf.astype(_U64) + _U64(1)) * pw[:len(buf)], out=prefix[1:])
        h = (prefix[tok_end] - prefix[tok_start]) * inv[tok_start]
    h = mix64(h)
    offsets = np.searchsorted(tok_start, starts)
    return h, offsets


def shingle_batch(texts: list[str], k: int, group_bytes: int = 1 << 22) -> tuple[np.ndarray, np.ndarray]:
    """(32-bit hash of every k-token shingle of every text, in position order, as
    uint32; shingle offsets per text, len n+1). Repeated shingles are kept.

    Texts go through numpy in groups of about `group_bytes` (the byte-level
    arrays take ~40 bytes per input byte), so huge inputs stay bounded."""
    if k < 1:
        raise ValueError(f"shingle size must be >= 1, not {k}")
    groups, start, size = [], 0, 0
    for i, t in enumerate(texts):
        size += len(t) + 1
        if size >= group_bytes:
            groups.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(texts) or not groups:
        groups.append((start, len(texts)))
    if len(groups) == 1:
        return _shingle_group(texts, k)
    parts = [_shingle_group(texts[a:b], k) for a, b in groups]
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    base = 0
    for (a, b), (_, off) in zip(groups, parts):
        offsets[a + 1:b + 1] = off[1:] + base
        base += off[-1]
    return np.concatenate([sh for sh, _ in parts]), offsets


def _shingle_group(texts: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    toks, toff = token_hashes(texts)
    counts = np.diff(toff)
    n = len(toks)
    m = max(0, n - k + 1)
    acc = np.zeros(m, dtype=_U64)
    with np.errstate(over="ignore"):
        for j in range(k):
            acc *= _SHINGLE_BASE
            acc += toks[j:j + m]
    # a shingle starting at token t is whole when t + k <= end of its text
    owner = np.repeat(np.arange(len(texts)), counts)
    ok = np.flatnonzero(np.arange(m) + k <= toff[1:][owner[:m]]) if m else np.zeros(0, dtype=np.int64)
    shingles = acc[ok]
    sh_counts = np.maximum(counts - k + 1, 0)
    short = np.flatnonzero((counts > 0) & (counts < k))
    if len(short):
        # texts with fewer than k tokens: one shingle of all their tokens
        extra = np.zeros(len(short), dtype=_U64)
        with np.errstate(over="ignore"):
            for s_i, t in enumerate(short):
                v = _U64(0)
                for x in toks[toff[t]:toff[t + 1]]:
                    v = v * _SHINGLE_BASE + x
                extra[s_i] = v
        sh_counts[short] = 1
        insert_at = np.concatenate(([0], np.cumsum(np.maximum(counts - k + 1, 0))))[short]
        shingles = np.insert(shingles, insert_at, extra)
    shingles = (mix64(shingles) >> _U64(32)).astype(np.uint32)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(sh_counts, out=offsets[1:])
    return shingles, offsets


def unique_shingles(texts: list[str], k: int) -> list[np.ndarray]:
    """Each text's sorted set of shingle hashes (the unit of exact Jaccard)."""
    sh, off = shingle_batch(texts, k)
    return [np.unique(sh[off[i]:off[i + 1]]) for i in range(len(texts))]


def minhash_rows(shingles: np.ndarray, offsets: np.ndarray, permutations: np.ndarray,
                 block: int = 1 << 16) -> np.ndarray:
    """One MinHash row per text: min over its shingles h of a*h + b (uint32
    wrap-around, datasketch's affine32). A text without shingles keeps the
    empty value (2^32 - 1), as an empty datasketch MinHash does.

    The loop is over permutations, each a flat pass over a block of texts'
    shingles and one 1-d `minimum.reduceat`: 3x faster than a (shingles x
    permutations) matrix reduced along its first axis."""
    a, b = (np.asarray(p, dtype=np.uint32) for p in permutations)
    n = len(offsets) - 1
    rows = np.full((len(a), n), np.iinfo(np.uint32).max, dtype=np.uint32)
    nonempty = np.flatnonzero(np.diff(offsets) > 0)
    starts = offsets[nonempty]
    vals = np.empty(0, dtype=np.uint32)
    i = 0
    while i < len(nonempty):
        # a block of whole texts with about `block` shingles (at least one text)
        j = max(int(np.searchsorted(starts, starts[i] + block, side="right")), i + 1)
        lo, hi = starts[i], offsets[nonempty[j - 1] + 1]
        h = shingles[lo:hi]
        seg = starts[i:j] - lo
        if len(vals) < len(h):
            vals = np.empty(len(h), dtype=np.uint32)
        v = vals[:len(h)]
        cols = nonempty[i:j]
        for p in range(len(a)):
            np.multiply(h, a[p], out=v)
            v += b[p]
            rows[p, cols] = np.minimum.reduceat(v, seg)
        i = j
    return np.ascontiguousarray(rows.T)
