"""Tokens of PTX (and of Rolled-PTX, which adds only `(`, `)`, `*` and words).

The lexer is the one place that decides what a token is; the parser, the
round-trip check and the length statistics all count with it, so "length in
tokens" means the same thing everywhere.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class PtxSyntaxError(ValueError):
    """Malformed PTX: names the source, line and column."""

    def __init__(self, message: str, line: int, col: int, source: str = "<ptx>"):
        self.line, self.col, self.source, self.bare = line, col, source, message
        super().__init__(f"{source}:{line}:{col}: {message}")

    def __reduce__(self):  # raised in a worker process (batch.py), re-raised here
        return PtxSyntaxError, (self.bare, self.line, self.col, self.source)


class Token(NamedTuple):
    """One token. A named tuple, not a frozen dataclass: the scanner makes one per
    instruction line, and a tuple is built in half the time (issue 44: ~6% of a parse)."""

    kind: str   # comment string float hex dec num reg dot ident punct
    text: str
    pos: int    # offset in the source text
    glued: bool  # no whitespace between this token and the previous one


_SPEC = [
    ("comment", r"//[^\n]*|/\*.*?\*/"),
    ("string", r'"(?:[^"\\\n]|\\.)*"'),
    ("float", r"0[fF][0-9a-fA-F]{8}(?![\w$])|0[dD][0-9a-fA-F]{16}(?![\w$])"),
    ("hex", r"0[xX][0-9a-fA-F]+U?"),
    ("num", r"\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+"),
    ("dec", r"\d+U?"),
    ("reg", r"%[A-Za-z_$][\w$]*"),
    ("dot", r"\.[\w$]+(?:::[\w$]+)*"),
    ("ident", r"[A-Za-z_$][\w$]*"),
    ("punct", r"[{}\[\](),;:+\-*|!@=<>/&^~?]"),
    ("ws", r"\s+"),
]
_RX = re.compile("|".join(f"(?P<{k}>{p})" for k, p in _SPEC), re.S)


def tokenize(text: str, source: str = "<ptx>", keep_comments: bool = True) -> list[Token]:
    toks: list[Token] = []
    pos, n = 0, len(text)
    glued = False
    while pos < n:
        m = _RX.match(text, pos)
        if m is None or m.end() == pos:
            line, col = line_col(text, pos)
            raise PtxSyntaxError(f"unexpected character {text[pos]!r}", line, col, source)
        kind = m.lastgroup
        if kind == "ws":
            glued = False
        else:
            if kind != "comment" or keep_comments:
                toks.append(Token(kind, m.group(), pos, glued and bool(toks)))
            glued = True
        pos = m.end()
    return toks


def line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


# the tokens without whitespace, comments as the one group: `findall` (a loop in C) gives
# "" per token and the text of each comment; whitespace matches nothing and is stepped over,
# as no other token starts with it (the reroll counts tokens of every statement it prints).
# Registers, dot-words and punctuation but `/` go first: no other kind starts with their
# first character, so the tokens are the same, found with fewer failed alternatives (a
# quarter faster)
_FIRST = [("reg", dict(_SPEC)["reg"]), ("dot", dict(_SPEC)["dot"]), ("punct", r"[{}\[\](),;:+\-*|!@=<>&^~?]")]
_COUNT = re.compile("|".join(f"({p})" if k == "comment" else f"(?:{p})"
                             for k, p in _FIRST + [x for x in _SPEC if x[0] not in ("ws", "reg", "dot")]), re.S)


def count_tokens(text: str) -> int:
    """Length of PTX text in lexical tokens (comments excluded)."""
    return _COUNT.findall(text).count("")
