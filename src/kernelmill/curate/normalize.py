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

from .shingles import shingle_batch

_MANY_NEWLINES = re.compile(r"\n{3,}")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_PREPROCESSOR = ("include", "define", "pragma", "if", "ifdef", "ifndef", "endif", "else", "elif",
                 "undef", "error", "line")
_HASH_COMMENT = re.compile(r"#(?!\s*(?:%s)\b)[^\n]*" % "|".join(_PREPROCESSOR))
_WORD = re.compile(r"\w+")


def _squeeze(text: str, pair: str, one: str) -> str:
    """Every run of `one` down to a single one. Whitespace runs are short, so a
    few C-level replaces beat a regex, whose per-character scan was most of a
    dedup's normalisation time."""
    while pair in text:
        text = text.replace(pair, one)
    return text


def _blanks(text: str) -> str:
    """Runs of spaces and tabs -> one space (the regex `[ \t]+`)."""
    if "\t" in text:
        text = text.replace("\t", " ")
    return _squeeze(text, "  ", " ")


def normalize_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    text = _blanks(text)
    return _MANY_NEWLINES.sub("\n\n", text) if "\n\n\n" in text else text


def normalize_code(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # each pass only when its marker occurs: this runs on every record of a dedup
    if "/*" in text:
        text = _BLOCK_COMMENT.sub(" ", text)
    if "//" in text:
        text = _LINE_COMMENT.sub("", text)
    if "#" in text:
        text = _HASH_COMMENT.sub("", text)
    # whole-text passes (not per line): this runs on every record of a dedup.
    # With blanks squeezed, a line break's surrounding whitespace is at most one
    # space on each side plus more line breaks: drop those spaces, then squeeze.
    text = _blanks(text).replace(" \n", "\n").replace("\n ", "\n")
    return _squeeze(text, "\n\n", "\n").strip()


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


def shingle_hashes(text: str, k: int, unique: bool = True) -> np.ndarray:
    """32-bit hashes of the k-token shingles of `text` (`code_tokens`' split):
    sorted and unique, or with `unique=False` one a shingle position. A text
    shorter than k tokens gives one shingle of all its tokens. Many texts at
    once: `shingles.shingle_batch`."""
    sh, _ = shingle_batch([text], k)
    return np.unique(sh) if unique else sh


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sorted unique hash arrays."""
    if len(a) == 0 and len(b) == 0:
        return 1.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)
