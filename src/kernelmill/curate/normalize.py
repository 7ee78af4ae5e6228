"""Text normalisation, code tokens and shingles for dedup and decontamination.

`normalize_text` is SPEC.md section 4's rule (the Triton dataset's): CRLF ->
LF, strip, runs of spaces/tabs -> one space, 3+ newlines -> 2.

`normalize_code` is the code-aware variant: it also drops comments (`//`,
`/* */`, and `#` comments, but not C preprocessor lines such as `#include`),
strips every line and drops blank lines, so two kernels that differ only in
comments or layout normalise to the same text. It does not parse string
literals: CUDA source embedded in Python strings is the common case here and
its comments should go too; a `//` inside a string literal (a URL) is cut.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

_SPACES = re.compile(r"[ \t]+")
_MANY_NEWLINES = re.compile(r"\n{3,}")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_PREPROCESSOR = ("include", "define", "pragma", "if", "ifdef", "ifndef", "endif", "else", "elif",
                 "undef", "error", "line")
_HASH_COMMENT = re.compile(r"#(?!\s*(?:%s)\b)[^\n]*" % "|".join(_PREPROCESSOR))
_LINE_EDGES = re.compile(r" ?\n[ \n]*")  # a line break with the spaces and blank lines around it
_WORD = re.compile(r"\w+")


def normalize_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    text = _SPACES.sub(" ", text)
    return _MANY_NEWLINES.sub("\n\n", text)


def normalize_code(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # each pass only when its marker occurs: this runs on every record of a dedup
    if "/*" in text:
        text = _BLOCK_COMMENT.sub(" ", text)
    if "//" in text:
        text = _LINE_COMMENT.sub("", text)
    if "#" in text:
        text = _HASH_COMMENT.sub("", text)
    # whole-text passes (not per line): this runs on every record of a dedup
    text = _SPACES.sub(" ", text)
    return _LINE_EDGES.sub("\n", text).strip()


NORMALIZERS = {"text": normalize_text, "code": normalize_code}


def sha1_key(*parts: str) -> str:
    """SPEC.md section 4's exact-dedup key: SHA-1 of the parts joined by '|||'."""
    return hashlib.sha1("|||".join(parts).encode("utf-8")).hexdigest()


# every ASCII punctuation character becomes its own token (the regex
# `\w+|[^\w\s]` on ASCII text), via one C-level translate + split
_PUNCT_APART = str.maketrans({c: f" {c} " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~"})


def code_tokens(text: str) -> list[str]:
    """Identifiers, numbers and single punctuation characters."""
    return text.translate(_PUNCT_APART).split()


def words(text: str) -> set[str]:
    """Lower-cased word set, the unit of SPEC.md's Jaccard word overlap."""
    return {w.lower() for w in _WORD.findall(text)}


class _Vocab(dict):
    """Token -> stable 64-bit id (blake2b, unlike hash() the same in every
    process and run), computed once per distinct token."""

    def __missing__(self, tok: str) -> int:
        v = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little") | 1
        self[tok] = v
        return v


_VOCAB = _Vocab()
_MASK32 = np.uint64(0xFFFFFFFF)


def shingle_hashes(text: str, k: int, unique: bool = True) -> np.ndarray:
    """Unique 32-bit hashes of the k-token shingles of `text` (sorted; with
    `unique=False`, one a shingle position, for MinHash where repeats are harmless).

    A shingle hash is a polynomial combination of its token hashes, computed
    for all shingles at once with numpy (wrapping uint64 arithmetic); texts
    shorter than k tokens give one shingle of all their tokens."""
    toks = code_tokens(text)
    if not toks:
        return np.zeros(0, dtype=np.uint64)
    ids = np.fromiter(map(_VOCAB.__getitem__, toks), dtype=np.uint64, count=len(toks))
    k = max(1, min(k, len(ids)))
    n = len(ids) - k + 1
    acc = np.zeros(n, dtype=np.uint64)
    base = np.uint64(0x100000001B3)
    with np.errstate(over="ignore"):
        for j in range(k):
            acc = acc * base + ids[j:j + n]
        acc ^= acc >> np.uint64(29)
        acc *= np.uint64(0xBF58476D1CE4E5B9)
        acc ^= acc >> np.uint64(32)
    acc &= _MASK32
    return np.unique(acc) if unique else acc


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sorted unique hash arrays."""
    if len(a) == 0 and len(b) == 0:
        return 1.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)
