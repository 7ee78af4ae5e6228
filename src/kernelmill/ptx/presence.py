"""Loops whose copies differ by `mov` statements: a presence guard per statement (issue 44).

nvcc materialises a constant in a register where a copy needs it and reuses one it has
already: a shuffle ladder `mov.u32 %r46, 8; shfl ... %r46 ...` has the `mov` in every copy
but the one whose offset (2) was set earlier, and a guarded load's zero `mov.f32 %f5,
0f00000000` sits in some copies only. The copies then differ in length and no body repeats.

Rolled-PTX writes such a statement once in the loop body with a *presence guard*: a VarExpr
where a predicate would be, the statement being emitted in the copies where it evaluates
above 0 (`@2-i`: copies 0 and 1; `@0+i`: all but copy 0; `@[1,1,0,1][i]`: all but copy 2).
Plain PTX never has a number for a guard, so the form is free (expand.py reads it).

The search is the ordinary one (search.Segment) on the stream with the unguarded `mov`s left
out; each loop its plan chooses is then rebuilt on the real statements: the `mov`s between
two statements of the body are slotted into the body where every copy's `mov`s there match
one copy's in order (by skeleton), each hole of a statement keeps to a model over the copies
that have it (linear, `(m>>i)`, or a table), and the loop is kept only where it expands to
the statements it replaces and is shorter.
"""

from __future__ import annotations

from dataclasses import replace
from operator import sub

from .expand import expand_stmts
from .holes import GEOMETRIC_KINDS, TABLE_BIAS, cost, template
from .search import HEADER_TOKENS, Segment, _fresh_var
from .syntax import Instr, Loop, Stmt, VarExpr

_NO_SHAPE = ((), (), ())


def optional(s: Stmt) -> bool:
    """Statements that may be missing from some copies: unguarded `mov`s."""
    return type(s) is Instr and s.opcode == "mov" and s.guard is None


def mov_loops(items: list[Stmt], cfg, known, free: tuple, raw: Segment | None = None,
              check: bool = True) -> list[tuple[int, int, Loop]]:
    """(start, end, loop) for the loops over copies of `items` (a straight-line segment) that
    differ by `mov`s, each shorter than items[start:end]; they may overlap. `raw`: the ordinary
    search's Segment of these items, where it has one (its skeletons and token sums are read)."""
    n = len(items)
    if raw is None:
        raw = Segment(items, cfg, [known.tokens(s) for s in items], free, [known.split(s) for s in items])
    # the skeletons of `mov`s (a skeleton holds the opcode and the guard: one test per skeleton)
    movs = {x for x, ks in raw.where.items() if optional(items[ks[0]])}
    if not movs:
        return []
    sk_all = raw.sk
    core_idx = [k for k, x in enumerate(sk_all) if x not in movs]
    if len(core_idx) < 4:
        return []
    near = _irregular(core_idx, [sk_all[k] for k in core_idx], n)
    if not near:
        return []
    core = [items[k] for k in core_idx]
    # a body statement's tokens with those of the `mov`s up to the next one: what the copies
    # hold, so the plan's scores count them (their holes' costs are counted when built)
    cum = raw.cum
    toks = list(map(sub, [cum[k] for k in core_idx[1:]] + [cum[n]], [cum[k] for k in core_idx]))
    vals, kinds, shapes = raw.vals, raw.kinds, raw.shapes  # (holes.split's, read once by raw)
    seg = _Near(core, replace(cfg, max_period=_WINDOW), toks, free,
                [(sk_all[k], vals[k], kinds[k], shapes[k]) for k in core_idx])
    seg.near = near
    choice = seg._plan_dp()
    out = []
    pos = 0
    while pos < len(core):
        b = choice[pos]
        if b is None:
            pos += 1
            continue
        built = _build(items, core_idx, seg, b, known, free, check, cfg.geometric)
        if built is not None:
            out.append(built)
        pos += b.period * b.copies
    return out


def apply(items: list[Stmt], found: list[tuple[int, int, Loop]], stats) -> list[Stmt]:
    """`items` with the loops found put in place of what they replace, left to right (a loop
    that overlaps one put in before is left out)."""
    if not found:
        return items
    out: list[Stmt] = []
    done = 0
    for start, end, loop in sorted(found, key=lambda x: x[0]):
        if start >= done:
            out.extend(items[done:start])
            out.append(loop)
            done = end
            stats.loops += 1
    out.extend(items[done:])
    return out


_WINDOW = 64  # longest body searched (in statements other than `mov`s)


class _Near(Segment):
    """The search, at the positions where a loop may cover copies that differ (`near`)."""

    near: bytearray

    def options(self, pos: int) -> list:
        return super().options(pos) if self.near[pos] else []


def _irregular(core_idx: list[int], sk: list, n: int) -> bytearray | None:
    """The positions from which a loop may cover copies that differ in their `mov`s (None where
    there is none): up to two bodies (at most _WINDOW) before a statement that has another count
    of `mov`s after it than the next statement of its skeleton, the statements after both
    alike. A run of copies that all have the same `mov`s is the ordinary search's."""
    gap = list(map(sub, core_idx[1:] + [n], core_idx))  # (1 more than the `mov`s after each)
    last: dict = {}
    near = bytearray(len(sk))
    found = False
    m = len(sk)
    for x in range(m - 1, -1, -1):
        y = last.get(sk[x])
        # (and the statement after it repeats there too: the two are in copies of a body)
        if (y is not None and y - x <= _WINDOW and gap[x] != gap[y]
                and (y + 1 == m or sk[x + 1] == sk[y + 1])):
            lo = max(0, x - min(_WINDOW, 2 * (y - x)) + 1)
            near[lo:x + 1] = b"\x01" * (x + 1 - lo)
            found = True
        last[sk[x]] = x
    return near if found else None


def _in_order(g: list[int], ref: list, sk) -> list[int]:
    """The slots (indices into `ref`, skeletons) that `g`'s statements take, matched in order
    by skeleton, as far as they match: a statement with no slot left ends the list."""
    out, j = [], 0
    for x in g:
        k = sk(x)
        while j < len(ref) and ref[j] != k:
            j += 1
        if j == len(ref):
            break
        out.append(j)
        j += 1
    return out


def _merge(gaps: list[list[int]], sk) -> list | None:
    """A body's slots for the `mov`s of one gap: the longest copy's `mov`s, and for each copy
    which of them it has (each copy's `mov`s must match the longest's in order, by skeleton)."""
    longest = max(gaps, key=len)
    if not longest:
        return []
    ref = [sk(x) for x in longest]
    slots = [[None] * len(gaps) for _ in longest]  # slot -> per copy: item index or None
    for t, g in enumerate(gaps):
        taken = _in_order(g, ref, sk)
        if len(taken) < len(g):
            return None
        for x, j in zip(g, taken):
            slots[j][t] = x
    return slots


def _build(items, core_idx, seg: Segment, b, known, free, check: bool = True, geometric: bool = True):
    p, c, pos = b.period, b.copies, b.pos
    first = [core_idx[pos + t * p] for t in range(c)]  # each copy's first core statement
    last_core = core_idx[pos + c * p - 1]

    def sk(x):
        return known.split(items[x])[0]

    # the last copy's tail: the `mov`s after its last statement, as far as they match a tail
    tail_end = last_core + 1
    while tail_end < len(items) and optional(items[tail_end]):
        tail_end += 1
    # per copy, per gap (before body statements 1..p-1, then the tail): the mov indices
    gaps = []
    for t in range(c):
        row = []
        for j in range(1, p + 1):
            lo = core_idx[pos + t * p + j - 1] + 1
            hi = (core_idx[pos + t * p + j] if j < p or t < c - 1 else tail_end)
            row.append(list(range(lo, hi)))
        gaps.append(row)
    if all(len(gaps[t][j]) == 0 for t in range(c) for j in range(p)):
        return None  # no `mov`s: the ordinary search has seen this run
    slots_per_gap = []
    for j in range(p):
        if j == p - 1:
            # the last copy's tail is cut where it stops matching (what follows stays outside)
            ref = _merge([gaps[t][j] for t in range(c - 1)], sk)
            if ref is None:
                return None
            got = _match_prefix(gaps[c - 1][j], ref, sk)
            tail_end = (gaps[c - 1][j][got - 1] + 1) if got else last_core + 1
            gaps[c - 1][j] = gaps[c - 1][j][:got]
        s = _merge([gaps[t][j] for t in range(c)], sk)
        if s is None:
            return None
        slots_per_gap.append(s)
    start, end = first[0], tail_end
    # the body: core statement j, then the slots of gap j
    body_rows: list[list] = []  # per body statement: per copy item index or None
    for j in range(p):
        body_rows.append([core_idx[pos + t * p + j] for t in range(c)])
        body_rows.extend(slots_per_gap[j])
    loop = loop_of_rows(items, body_rows, start, end, c, known, free, check, geometric)
    return None if loop is None else (start, end, loop)


def loop_of_rows(items, body_rows: list, start: int, end: int, c: int, known, free: tuple,
                 check: bool = True, geometric: bool = True) -> Loop | None:
    """The loop of c copies whose body statements are `body_rows` (per copy: an index into
    items, or None where the copy lacks it), replacing items[start:end]; None unless it is
    shorter and (`check`) expands to them. Unchecked, the caller compares the function's
    expansion (reroll.reroll_function, as for the ordinary loops)."""
    if all(None not in row for row in body_rows):
        return None  # every copy has every statement: the ordinary search's loop
    span = items[start:end]
    # models first, and the loop's tokens from them (holes.cost, exact for the linear and
    # table terms): most loops a plan offers here do not pay once their `mov`s' holes are
    # counted, and are then never printed. Each row's floor (_floor: its statement and guard,
    # no hole terms) is summed first, and replaced by the row's exact tokens as its models
    # are fitted: a group that does not pay is left at its first rows (the sum only rises, as
    # the terms cost >= 0 tokens, so what is kept is what the row-by-row sum kept)
    limit = known.length(span)
    floors = []
    est = HEADER_TOKENS
    for row in body_rows:
        fl = _floor(items, row, known, c)
        if fl is None:
            return None
        floors.append(fl)
        est += fl
    if est >= limit:
        return None
    fitted = []
    for row, fl in zip(body_rows, floors):
        f = _models(items, row, known, c, geometric)
        if f is None:
            return None
        fitted.append(f)
        est += f[4] - fl
        if est >= limit:
            return None
    # (the copies' statements hold the variables the body's do: holes' shapes are skeleton)
    reps = [f[0] for f in fitted]
    var = _fresh_var(reps, free, [known.split(s)[3] for s in reps])
    body = [_template(f, var, c) for f in fitted]
    loop = Loop(var, 0, c, 1, tuple(body))
    if known.length([loop]) >= limit:
        return None
    if not check:
        return loop
    envs = [{}] if not free else [{v: x for v in free} for x in (0, 1)]
    try:
        if not all(expand_stmts([loop], env) == expand_stmts(span, env) for env in envs):
            return None
    except ValueError:
        return None
    return loop


def _match_prefix(g: list[int], slots: list, sk) -> int:
    """How many of `g`'s first statements match the slots' skeletons in order."""
    return len(_in_order(g, [sk(next(x for x in row if x is not None)) for row in slots], sk))


def _floor(items, row: list, known, c: int) -> int | None:
    """_models' tokens for the row less its hole terms (its first statement, its presence
    guard), or None where _models is: a statement missing from a copy that may not be."""
    if None not in row:
        return known.tokens(items[row[0]])
    present = [t for t, x in enumerate(row) if x is not None]
    a = present[0]
    s0 = items[row[a]]
    if type(s0) is not Instr or s0.guard is not None:
        return None
    run = len(present) == present[-1] + 1 - a and (a == 0 or present[-1] == c - 1)
    return known.tokens(s0) + (4 if run else 2 * c + 2 + TABLE_BIAS)


_LIN0 = ("lin", 0)


def _models(items, row: list, known, c: int, geometric: bool = True) -> tuple | None:
    """(statement of the first copy that has it, hole values at copy 0, models, copies that
    have it, estimated tokens in the loop body) of one body statement, or None."""
    present = [t for t in range(c) if row[t] is not None]
    a = present[0]
    s0 = items[row[a]]
    _, v_a, kinds, shapes = known.split(s0)
    split = known.split
    cols = list(zip(*[split(items[row[t]])[1] for t in present]))  # per hole, its values
    base, models = [], []
    toks = known.tokens(s0)
    for h, kd in enumerate(kinds):
        col = cols[h]
        if col.count(col[0]) == len(col):  # (_fit's first case, at C speed)
            base.append(col[0])
            models.append(_LIN0)
            continue
        m = _fit(kd, list(zip(present, col)), c, shapes[h] != _NO_SHAPE, geometric)
        if m is None:
            return None
        base.append(m[1])
        models.append(m[0])
        if m[0] != ("lin", 0):
            toks += 1 if kd == "fimm" else cost(kd, v_a[h], m[0], shapes[h])
    if len(present) < c:
        if type(s0) is not Instr or s0.guard is not None:
            return None  # only an unguarded instruction may be missing from a copy
        run = len(present) == present[-1] + 1 - a and (a == 0 or present[-1] == c - 1)
        toks += 4 if run else 2 * c + 2 + TABLE_BIAS  # `@2-i`, `@0+i`; `@[1,0,1]`
    return s0, tuple(base), tuple(models), present, toks


def _template(f: tuple, var: str, c: int) -> Stmt:
    s0, base, models, present, _ = f
    s = template(s0, base, models, var)
    if len(present) < c:
        s = Instr(s.opcode, s.mods, s.operands, _presence(present, c, var), s.line)
    return s


def _presence(present: list[int], c: int, var: str) -> VarExpr:
    a, b = present[0], present[-1] + 1
    if b - a == len(present):
        if a == 0:
            return VarExpr(b, ((var, -1),))  # `b-i`: copies before b
        if b == c:
            return VarExpr(1 - a, ((var, 1),))  # `1-a+i`: copies from a on
    return VarExpr(0, (), (), ((var, tuple(int(t in present) for t in range(c))),))


def _fit(kind: str, pts: list[tuple[int, int]], c: int, shaped: bool, geometric: bool = True):
    """(model, value at copy 0) of a hole known at some copies, or None."""
    (a, va) = pts[0]
    if all(v == va for _, v in pts):
        return ("lin", 0), va
    if kind == "fimm":
        return _table(pts, c), va
    if len(pts) >= 2:
        (b, vb) = pts[1]
        d, r = divmod(vb - va, b - a)
        if r == 0 and all(v == va + (t - a) * d for t, v in pts):
            v0 = va - a * d
            if v0 >= 0 or kind not in ("reg", "sym", "psym"):
                return ("lin", d), v0
    if geometric and kind in GEOMETRIC_KINDS and not shaped and va > 0:
        for k in (1, 2):
            m = va << (a * k)
            model = ("shr", 0, m, k)
            if all(v == m >> (t * k) for t, v in pts):
                return model, m
            model = ("shl", 0, va >> (a * k), k) if va % (1 << (a * k)) == 0 else None
            if model and model[2] and all(v == model[2] << (t * k) for t, v in pts):
                return model, model[2]
    if shaped:  # a table on a hole that already has terms: not offered (as in search.py)
        return None
    return _table(pts, c), va


def _table(pts: list[tuple[int, int]], c: int) -> tuple:
    got = dict(pts)
    fill = pts[0][1]
    return ("tab", tuple(got.get(t, fill) for t in range(c)))
