"""The parser's input in one linear pass: tokens, with instruction lines pre-read.

Most of an unrolled kernel is lines holding exactly one instruction. Such a line
(`[@guard] opcode.mods operands;`, nothing else on it) becomes one `stmt` token
whose `Instr` is built here: the operands are split at top-level commas and each
distinct operand text is read once by the parser (`operand_of`) and cached.
Anything unusual on the line (a comment, a `{`, a Rolled-PTX `for`, an operand
the parser does not read alone) sends it through the ordinary tokenizer.
"""

from __future__ import annotations

import re
from typing import Callable

from .lexer import _RX, PtxSyntaxError, Token, line_col, tokenize
from .syntax import Addr, Directive, Imm, Instr, Neg, Reg, Sym, Vec

# groups: the statement's text, guard, opcode (never a Rolled-PTX `for`), modifiers, operands,
# and the whitespace after it (up to the next line's first character)
_LINE = re.compile(r"((?:@([^\s;/]+)[ \t]+)?(?!for(?![\w$]))([A-Za-z_$][\w$]*)((?:\.[\w$]+(?:::[\w$]+)*)*)"
                   r"(?:[ \t]+([^;/\n\"]*?))?[ \t]*;)(?=[ \t]*(?:\n|\Z))(\s*)")
_OPERAND = re.compile(r"[ \t]*((?:[^,{\[(\s]|[ \t]+(?=[^,\s])|\{[^{}\n]*\}|\[[^\[\]\n]*\]|\([^()\n]*\))+)"
                      r"[ \t]*(,|\Z)")
_MOD = re.compile(r"\.[\w$]+(?:::[\w$]+)*")
_WS = re.compile(r"\s+")  # lexer._SPEC's "ws"
_SPACE = frozenset(" \t\n\r\f\v")
# the common operand forms, read directly (the same trees the parser builds)
_REG = r"%[A-Za-z_$][\w$]*(?:\.[\w$]+(?:::[\w$]+)*)*"
_IDENT = r"[A-Za-z_$][\w$]*"
_INT = r"-?(?:0[xX][0-9a-fA-F]+U?|\d+U?)"
_SIMPLE = re.compile(rf"(!)?({_REG})|({_IDENT})|({_INT}|-?0[fF][0-9a-fA-F]{{8}}|-?0[dD][0-9a-fA-F]{{16}})"
                     rf"|\[({_REG}|{_IDENT})(?:([+-])({_INT}))?\]|\{{([^{{}}]*)\}}")
_ITEM = re.compile(rf"({_REG})|({_IDENT})|({_INT})")


def _simple(text: str):
    """The operand for the forms above, or None (then the parser reads it)."""
    m = _SIMPLE.fullmatch(text)
    if m is None:
        return None
    neg, reg, ident, num, base, op, off, vec = m.groups()
    if reg is not None:
        return Neg(Reg(reg)) if neg else Reg(reg)
    if ident is not None:
        return Sym(ident)
    if num is not None:
        return Imm(num)
    if base is not None:
        b = Reg(base) if base[0] == "%" else Sym(base)
        return Addr(b, None if off is None else Imm(off), op or "+")
    items = []
    for x in vec.split(","):
        im = _ITEM.fullmatch(x.strip())
        if im is None:
            return None
        r, i, k = im.groups()
        items.append(Reg(r) if r else Sym(i) if i else Imm(k))
    return Vec(tuple(items))


# an operand list the plain comma split reads as `_OPERAND` does: no bracket, brace or
# parenthesis (whose insides may hold commas) and no whitespace but spaces and tabs
_NOT_PLAIN = re.compile(r"[{\[(\r\f\v]")


def _operands(text: str, cache: dict, operand_of) -> tuple | None:
    if _NOT_PLAIN.search(text) is None:
        # most lines of an unrolled kernel (`%f12, %f11, %f13`): str.split instead of a
        # regex match per operand, a quarter of the parser's time before (issue 44)
        out = []
        for part in text.split(","):
            part = part.strip(" \t")
            if not part:
                return None
            o = cache.get(part, cache)
            if o is cache:
                o = cache[part] = _simple(part) or operand_of(part)
            if o is None:
                return None
            out.append(o)
        return tuple(out)
    out, pos, n = [], 0, len(text)
    while True:
        m = _OPERAND.match(text, pos)
        if m is None:
            return None
        o = cache.get(m.group(1), cache)
        if o is cache:
            o = cache[m.group(1)] = _simple(m.group(1)) or operand_of(m.group(1))
        if o is None:
            return None
        out.append(o)
        pos = m.end()
        if not m.group(2):
            return tuple(out) if pos == n else None


# a `.loc` line (nvcc -lineinfo puts one before most instructions) with no comment or
# string on it: read here in one pass instead of token by token in the parser
_LOC_LINE = re.compile(r"\.loc[ \t][^\n/\"]*(?=\n|\Z)")


def _line_directive(line: str) -> Directive | None:
    """The Directive the parser makes of a line directive alone on its line (the lexer's
    tokens, each glued to the one before when no whitespace parts them), or None: then the
    parser reads the line (and names what is wrong with it)."""
    try:
        toks = tokenize(line)
    except PtxSyntaxError:
        return None
    if not toks or any(t.kind == "comment" for t in toks):
        return None
    return Directive(tuple((t.text, t.glued) for t in toks), semicolon=False)


def scan(text: str, source: str, operand_of: Callable[[str], object]):
    """(tokens, {position of a stmt token: its Instr, or the Directive of a `.loc` line})."""
    toks: list[Token] = []
    stmts: dict[int, Instr | Directive] = {}
    cache: dict = {}
    mods_cache: dict[str, tuple] = {}
    seen: dict[str, tuple] = {}  # instruction text -> (opcode, mods, operands, guard)
    # `.loc` text -> its Directive (frozen, so shared): a -lineinfo unit repeats few of them
    # (7,137 lines, 28 distinct, in ptx_parse_speed.py's 2 MB unit), each tokenized once
    locs: dict[str, Directive | None] = {}
    pos, n, line = 0, len(text), 1
    line_start, glued = True, False
    rx_match, line_match, ws_match = _RX.match, _LINE.match, _WS.match
    while pos < n:
        if line_start:
            if text.startswith(".loc", pos):
                m = _LOC_LINE.match(text, pos)
                d = None
                if m is not None:
                    d = locs.get(m.group(), locs)
                    if d is locs:
                        d = locs[m.group()] = _line_directive(m.group())
                if d is not None:
                    stmts[pos] = d
                    toks.append(Token("stmt", m.group().rstrip(" \t\r"), pos, False))
                    line_start, glued = False, True
                    pos = m.end()
                    continue
            m = line_match(text, pos)
            if m is not None:
                stmt, g_text, opcode, mod_text, op_text, space = m.groups()  # one call: the parser's hot path
                # an instruction text seen before is read from its first reading (46% of the
                # lines of the speed corpus's small files repeat one: +2-6% parse there, ~1% less
                # on unrolled units of distinct lines, issue 44); the parts are immutable, so
                # Instrs may share them
                parts = seen.get(stmt)
                if parts is None:
                    guard = None
                    ok = True
                    if g_text is not None:
                        guard = cache.get(g_text, cache)
                        if guard is cache:
                            guard = cache[g_text] = operand_of(g_text)
                        ok = guard is not None
                    ops = () if op_text is None else (_operands(op_text, cache, operand_of) if ok else None)
                    if ok and ops is not None:
                        mods = mods_cache.get(mod_text)
                        if mods is None:
                            mods = mods_cache[mod_text] = tuple(_MOD.findall(mod_text))
                        parts = seen[stmt] = (opcode, mods, ops, guard)
                if parts is not None:
                    stmts[pos] = Instr(*parts, line)
                    toks.append(Token("stmt", stmt, pos, False))
                    # the whitespace after it (a newline, or the end, follows the `;`) read in
                    # the same match, as the lexer's "ws" token would have been
                    k = space.count("\n")
                    line += k
                    line_start, glued = k > 0, False
                    pos = m.end()
                    continue
        if text[pos] in _SPACE:  # whitespace not read with an instruction line: `_RX` tries it last
            end = ws_match(text, pos).end()
            k = text.count("\n", pos, end)
            line += k
            line_start, glued = k > 0, False
            pos = end
            continue
        m = rx_match(text, pos)
        if m is None or m.end() == pos:
            ln, col = line_col(text, pos)
            raise PtxSyntaxError(f"unexpected character {text[pos]!r}", ln, col, source)
        kind = m.lastgroup
        if kind == "ws":
            k = m.group().count("\n")
            line += k
            line_start, glued = k > 0, False
        else:
            if kind == "comment":
                line += m.group().count("\n")
            toks.append(Token(kind, m.group(), pos, glued and bool(toks)))
            line_start, glued = False, True
        pos = m.end()
    return toks, stmts
