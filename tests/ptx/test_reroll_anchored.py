"""Copies of unequal length with no label between them, cut at the repeats of one statement and
aligned (anchored.py; issue 44 item 1, session 14).

An unrolled grid-stride loop (`#pragma unroll 4` over `i += stride`): nvcc schedules the index
chain's `add.s32`s where it likes (two after one copy, one after the next), and the last copy
writes the loop-carried register, so no body repeats statement for statement."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmill.ptx import RerollConfig, count_tokens, fmt_stmts, parse_statements, reroll_stmts
from kernelmill.ptx.syntax import Instr, Loop, VarExpr
from reroll_support import roundtrip as _roundtrip


def _guarded_loops(stmts) -> int:
    n = 0
    for s in stmts:
        if isinstance(s, Loop):
            n += any(isinstance(x, Instr) and type(x.guard) is VarExpr for x in s.body) + _guarded_loops(s.body)
    return n


def _grid_stride(adds_after: list[int], extra_first: bool) -> str:
    """Copies of `y[i] = a * x[i] + y[i]` stepping two pointers by %rd10, with `adds_after[k]`
    statements of the index chain `%r(n+1) = %r(n) + %r2` after copy k; copy 0 computes its
    addresses from the bases where `extra_first`."""
    lines, rd, f, r = [], 15, 5, 22
    prev_x, prev_y = 2, 1
    if extra_first:
        lines.append("mul.wide.s32 \t%rd14, %r27, 4;")
    for k, n_adds in enumerate(adds_after):
        if k == 0 and extra_first:
            lines.append(f"add.s64 \t%rd{rd}, %rd{prev_x}, %rd14;")
        else:
            lines.append(f"add.s64 \t%rd{rd}, %rd{prev_x}, %rd10;")
        lines.append(f"ld.global.nc.f32 \t%f{f}, [%rd{rd}];")
        lines.append(f"add.s64 \t%rd{rd + 1}, %rd{prev_y}, %rd10;")
        lines.append(f"ld.global.f32 \t%f{f + 1}, [%rd{rd + 1}];")
        lines.append(f"fma.rn.f32 \t%f{f + 2}, %f{f}, %f1, %f{f + 1};")
        lines.append(f"st.global.f32 \t[%rd{rd + 1}], %f{f + 2};")
        for _ in range(n_adds):
            lines.append(f"add.s32 \t%r{r + 1}, %r{r}, %r2;")
            r += 1
        prev_x, prev_y = rd, rd + 1
        rd, f = rd + 2, f + 3
    lines.append("setp.lt.s32 \t%p5, %r27, %r12;")
    return "\n".join(lines) + "\n"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 2), min_size=2, max_size=8), st.booleans())
def test_grid_stride_unrolls_with_scattered_index_adds_round_trip(adds_after, extra_first):
    _roundtrip(parse_statements(_grid_stride(adds_after, extra_first)))


def test_scattered_index_adds_roll_only_with_anchors():
    stmts = parse_statements(_grid_stride([2, 1, 1, 0, 2, 1], True))
    rolled = _roundtrip(stmts)
    assert _guarded_loops(rolled) >= 1
    assert count_tokens(fmt_stmts(rolled)) < 0.8 * count_tokens(fmt_stmts(stmts))
    off = reroll_stmts(stmts, RerollConfig(presence=False))
    assert _guarded_loops(off) == 0
    assert count_tokens(fmt_stmts(rolled)) < count_tokens(fmt_stmts(off))


_ALPHABET = ["add.s32 \t%r{a}, %r{b}, %r2;", "ld.global.f32 \t%f{a}, [%rd{b}];", "fma.rn.f32 \t%f{a}, %f{b}, %f1, %f{a};",
             "st.global.f32 \t[%rd{b}], %f{a};", "mul.wide.s32 \t%rd{a}, %r{b}, 4;", "mov.u32 \t%r{a}, {b};"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 40), st.integers(1, 40)), min_size=1, max_size=7),
                min_size=2, max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6)), max_size=6))
def test_copies_with_statements_dropped_or_added_round_trip(copy, edits):
    """A body repeated, its registers stepping by copy, with statements dropped from one copy
    or added to one (the shapes anchored.py cuts and aligns), round-trips whatever rolls."""
    body = [(k, a, b) for k, a, b in copy[0]]
    copies = [[(k, a + 7 * t, b + 3 * t) for k, a, b in body] for t in range(len(copy) + 1)]
    for t, (at, what) in enumerate(edits):
        cp = copies[t % len(copies)]
        if what == 0 and len(cp) > 1:
            del cp[at % len(cp)]
        else:
            cp.insert(at % (len(cp) + 1), (what % len(_ALPHABET), 90 + t, 95 + t))
    text = "".join(_ALPHABET[k].format(a=a, b=b) + "\n" for cp in copies for k, a, b in cp)
    _roundtrip(parse_statements(text))
