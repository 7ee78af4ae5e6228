"""Unrolled bodies that differ in hex-float literals roll with a literal table (issue 44, session 8).

FIR taps, constant conv weights and thresholds written into the code become one `0f...` literal
per unrolled copy; the reroll writes them as `[0f3C23D70A,0fBCA3D70A,...][i]` (syntax.ImmTable),
never as a linear term (a float's bits are not a useful integer sequence)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmill.ptx import (ExpandError, RerollStats, count_tokens, expand_stmts, fmt_stmts, parse_statements,
                            reroll_stmts)
from kernelmill.ptx.syntax import ImmTable, Loop

_F32 = st.integers(0, 2**32 - 1).map(lambda v: f"0f{v:08X}")
_F64 = st.integers(0, 2**64 - 1).map(lambda v: f"0d{v:016X}")


def _roundtrip(stmts: list) -> list:
    st_ = RerollStats()
    rolled = reroll_stmts(stmts, stats=st_)
    again = parse_statements(fmt_stmts(rolled))
    assert again == rolled  # the printed Rolled-PTX reads back to the same tree
    assert expand_stmts(again) == stmts
    return rolled


def _fir(taps: list[str], seed_imm: bool) -> str:
    """ld + fma per tap, as nvcc unrolls `s += taps[k] * x[i + k]` with constant taps."""
    out = []
    for t, lit in enumerate(taps):
        off = f"+{4 * t}" if t else ""
        acc = "0f00000000" if (t == 0 and seed_imm) else f"%f{2 * t}"
        out += [f"ld.global.nc.f32 \t%f{2 * t + 1}, [%rd6{off}];", f"fma.rn.f32 \t%f{2 * t + 2}, %f{2 * t + 1}, {lit}, {acc};"]
    return "\n".join(out + ["st.global.f32 \t[%rd7], %f{};".format(2 * len(taps))]) + "\n"


def _operands(stmts):
    """Every operand of `stmts`, loop bodies too."""
    for s in stmts:
        if isinstance(s, Loop):
            yield from _operands(s.body)
        else:
            yield from getattr(s, "operands", ())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_F32, min_size=5, max_size=24), st.booleans())
def test_fir_taps_roll_with_a_literal_table_and_shrink(taps, seed_imm):
    stmts = parse_statements(_fir(taps, seed_imm))
    rolled = _roundtrip(stmts)
    loops = [s for s in rolled if isinstance(s, Loop)]
    assert loops and count_tokens(fmt_stmts(rolled)) < count_tokens(fmt_stmts(stmts))
    if len(set(taps)) == len(taps):  # literals that all differ: a table, never a linear term on their bits
        assert any(isinstance(o, ImmTable) for o in _operands(rolled))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["gt", "lt", "ge"]), st.one_of(_F32, _F64)), min_size=4, max_size=12))
def test_threshold_ladders_round_trip(steps):
    # setp against a literal, selp, add: bodies differ only in the literal (f32 or f64 per copy)
    lines = []
    for t, (cmp, lit) in enumerate(steps):
        ty, reg = ("f32", "%f1") if lit.startswith("0f") else ("f64", "%fd1")
        lines += [f"setp.{cmp}.{ty} \t%p{t + 1}, {reg}, {lit};", f"selp.u32 \t%r{t + 10}, 1, 0, %p{t + 1};",
                  f"add.s32 \t%r{t + 40}, %r{t + 39}, %r{t + 10};"]
    _roundtrip(parse_statements("\n".join(lines) + "\n"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["mov.f32 \t%f{r}, {x};", "mul.f32 \t%f{r}, %f{q}, {x};",
                                           "mov.b32 \t%r{r}, {x};", "mov.f64 \t%fd{r}, {x};"]),
                          st.integers(1, 9), st.one_of(_F32, _F64, st.sampled_from(["0f3f800000", "1", "0x10"]))),
                min_size=1, max_size=30))
def test_any_stream_with_literals_round_trips(items):
    # lower-case hex floats and other literals are not holes: they must stay exactly as written
    lines = [tpl.format(r=r, q=r + 1, x=x) for tpl, r, x in items]
    _roundtrip(parse_statements("\n".join(lines) + "\n"))


def test_literal_table_parses_prints_and_expands():
    (loop,) = parse_statements("for.size.1 i in range(3):\n"
                               "\tfma.rn.f32 \t%f2+i*2, %f1+i*2, [0f3C23D70A,0fBCA3D70A,0d3FF0000000000000][i], %f0+i*2;\n")
    op = loop.body[0].operands[2]
    assert op == ImmTable("i", ("0f3C23D70A", "0fBCA3D70A", "0d3FF0000000000000"))
    # the index `[i]` is not written (session 15), another one is
    assert "[0f3C23D70A,0fBCA3D70A,0d3FF0000000000000], " in fmt_stmts([loop])
    assert "[0f3C23D70A,0fBCA3D70A][j]" in fmt_stmts(parse_statements("mov.f32 \t%f1, [0f3C23D70A,0fBCA3D70A][j];\n"))
    assert [s.operands[2].text for s in expand_stmts([loop])] == ["0f3C23D70A", "0fBCA3D70A", "0d3FF0000000000000"]
    # an address still parses as an address
    assert parse_statements("ld.global.f32 \t%f1, [%rd1+4];\n")[0].operands[1].base.name == "%rd1"


def test_literal_table_out_of_range_or_unbound_is_an_expand_error():
    (loop,) = parse_statements("for.size.1 i in range(3):\n\tmov.f32 \t%f1+i, [0f3F800000,0f40000000][i];\n")
    with pytest.raises(ExpandError):
        expand_stmts([loop])
    (s,) = parse_statements("mov.f32 \t%f1, [0f3F800000,0f40000000][j];\n")
    with pytest.raises(ExpandError):
        expand_stmts([s])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 4), st.integers(3, 5), st.lists(_F32, min_size=20, max_size=20), st.booleans())
def test_nested_windows_with_literal_weights_round_trip(rows, cols, lits, same_rows):
    # a KxK window with constant weights: rows load from their own base register, each tap
    # multiplies by its literal; with same_rows every row has the same weights (an outer fold)
    lines, f = [], 1
    for r in range(rows):
        for c in range(cols):
            lit = lits[c if same_rows else (r * cols + c) % 20]
            off = f"+{4 * c}" if c else ""
            lines += [f"ld.global.nc.f32 \t%f{f}, [%rd{10 + r}{off}];", f"fma.rn.f32 \t%f{f + 1}, %f{f}, {lit}, %f{f - 1};"]
            f += 2
    stmts = parse_statements("\n".join(lines) + "\n")
    rolled = _roundtrip(stmts)
    assert count_tokens(fmt_stmts(rolled)) < count_tokens(fmt_stmts(stmts))
