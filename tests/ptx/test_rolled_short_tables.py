"""Tables printed short (issue 44 item 1, session 15): `[8,4,2,1]` is `[8,4,2,1][i]` (the index
is left out where it is `i`, syntax.table_index), and a register that is one table alone is
`%r[45,48,51]`, not `%r([45,48,51][i])` (syntax.fmt_varreg). Both read back to the same tree, so
expand(parse(print(rolled))) is the plain PTX, byte for byte."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmill.ptx import count_tokens, expand_stmts, fmt_stmts, parse_statements, reroll_stmts
from kernelmill.ptx.holes import split, template
from kernelmill.ptx.syntax import Addr, Imm, ImmTable, Instr, Loop, Reg, VarExpr, VarReg
from reroll_support import roundtrip as _roundtrip

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_VALS = st.lists(st.integers(-300, 300), min_size=1, max_size=9)
_VAR = st.sampled_from(["i", "j", "k"])


def _reparsed(s: Instr) -> Instr:
    (again,) = parse_statements(fmt_stmts([s]))
    return again


@SETTINGS
@given(_VALS, _VAR, _VALS, _VAR, st.integers(-50, 50), st.sampled_from(["%r", "%rd", "%f", "%p"]))
def test_short_tables_read_back_as_printed(regs, rv, imms, iv, off, prefix):
    regs = [abs(v) for v in regs]  # register numbers are never negative
    reg = VarReg(prefix, VarExpr(0, tables=((rv, tuple(regs)),)))
    imm = VarExpr(0, tables=((iv, tuple(imms)),))
    # a register table as an address base, with a table offset after it (`[%rd[9,1]+[0,2]]`)
    addr = Addr(reg, VarExpr(off, tables=((iv, tuple(imms)),)))
    s = Instr("add", (".s32",), (reg, reg, imm))
    assert _reparsed(s) == s
    ld = Instr("ld", (".global", ".u32"), (reg, addr))
    assert _reparsed(ld) == ld
    text = fmt_stmts([s])
    # the index is written unless it is `i` (with two values at least: `[16]` is an address)
    assert ("][i]" in text) == (rv == "i" and len(regs) < 2 or iv == "i" and len(imms) < 2)
    assert f"{prefix}(" not in text


@SETTINGS
@given(st.lists(st.sampled_from(["0f3F800000", "0f40000000", "0fBCA3D70A", "0d3FF0000000000000"]),
                min_size=2, max_size=6), _VAR)
def test_short_literal_tables_read_back(items, var):
    s = Instr("fma", (".rn", ".f32"), (Reg("%f2"), Reg("%f1"), ImmTable(var, tuple(items)), Reg("%f0")))
    assert _reparsed(s) == s
    assert ("][" in fmt_stmts([s])) == (var != "i")


def test_an_address_of_one_number_is_no_table():
    (s,) = parse_statements("ld.u32 \t%r1, [16];\n")
    assert s.operands[1] == Addr(Imm("16"))


def _ladder(offs: list[int], regs: list[int]) -> str:
    """A shuffle butterfly whose offsets sit in registers numbered out of order (a table each)."""
    lines = []
    for t, (o, r) in enumerate(zip(offs, regs)):
        lines += [f"mov.b32 %r{22 + 2 * t}, %f{14 + 2 * t};",
                  f"shfl.sync.bfly.b32 %r{23 + 2 * t}|%p{6 + t}, %r{22 + 2 * t}, %r{r}, {o}, %r9;",
                  f"mov.b32 %f{15 + 2 * t}, %r{23 + 2 * t};",
                  f"add.f32 %f{16 + 2 * t}, %f{14 + 2 * t}, %f{15 + 2 * t};"]
    return "\n".join(lines) + "\n"


@SETTINGS
@given(st.integers(2, 8).flatmap(lambda c: st.tuples(st.lists(st.integers(-40, 40), min_size=c, max_size=c),
                                                    st.lists(st.integers(1, 99), min_size=c, max_size=c))))
def test_irregular_copies_round_trip_through_the_short_text(case):
    offs, regs = case
    stmts = parse_statements(_ladder(offs, regs))
    rolled = _roundtrip(stmts)  # printed, parsed back, expanded: the same statements
    assert expand_stmts(parse_statements(fmt_stmts(rolled))) == stmts


def test_a_register_table_is_shorter_than_before():
    stmts = parse_statements(_ladder([1, 2, 4, 8, 16], [8, 12, 5, 17, 20]))
    rolled = _roundtrip(stmts)
    text = fmt_stmts(rolled)
    assert isinstance(rolled[0], Loop) and "%r[8,12,5,17,20]" in text
    # the long form of the same loop reads back the same and is 5 tokens longer
    long = text.replace("%r[8,12,5,17,20]", "%r([8,12,5,17,20][i])")
    assert parse_statements(long) == rolled
    assert count_tokens(long) == count_tokens(text) + 5


# --- inner loops whose tables differ by an offset fold (holes.shape, session 15) ------------
def _groups(pattern: list[int], groups: int, step: int, per: int) -> str:
    """`groups` runs of len(pattern) copies of an accumulate: the source register of copy t of
    group g is %f(100 + g*step + pattern[t]) (a table within the group), the rest linear."""
    lines = []
    for g in range(groups):
        lines.append(f"ld.shared.v4.f32 \t{{%f{10 + 4 * g}, %f{11 + 4 * g}, %f{12 + 4 * g}, %f{13 + 4 * g}}}, "
                     + ("[%r82];" if g == 0 else f"[%r82+{16 * g}];"))
        for t, off in enumerate(pattern):
            k = g * per + t
            lines += [f"sub.f32 \t%f{300 + 3 * k}, %f{100 + g * step + off}, %f{10 + 4 * g + t % 4};",
                      f"mul.f32 \t%f{301 + 3 * k}, %f{300 + 3 * k}, 0f3FB8AA3B;",
                      f"ex2.approx.f32 \t%f{302 + 3 * k}, %f{301 + 3 * k};"]
    return "\n".join(lines) + "\n"


@SETTINGS
@given(st.lists(st.integers(0, 40), min_size=3, max_size=5, unique=True), st.integers(3, 5),
       st.integers(41, 90))
def test_inner_table_loops_fold_into_an_outer_loop(pattern, groups, step):
    stmts = parse_statements(_groups(pattern, groups, step, len(pattern)))
    rolled = _roundtrip(stmts)
    linear = all(b - a == pattern[1] - pattern[0] for a, b in zip(pattern, pattern[1:]))
    if not linear:  # one loop over the groups (the copies within a group may stay unrolled)
        (outer,) = [s for s in rolled if isinstance(s, Loop)]
        assert outer.trip == groups


def test_register_tables_an_offset_apart_share_a_skeleton():
    # `%f[161,178,187,196]` and `%f[205,222,231,240]`: one skeleton (`%f(N+[0,17,26,35])`),
    # numbers 161 and 205, so the inner loops that hold them fold (mamba_final_state_kernel)
    a, b = (parse_statements(f"sub.f32 \t%f170+i*9, %f[{t}], %f162+i;\n")[0]
            for t in ("161,178,187,196", "205,222,231,240"))
    (ka, va, kinds, sha), (kb, vb, _, _) = split(a), split(b)
    assert ka == kb and va == (170, 161, 162) and vb == (170, 205, 162) and kinds[1] == "vtab"
    t = template(a, va, (("lin", 0), ("lin", 44), ("lin", 0)), "j")
    assert "%f(161+j*44+[0,17,26,35])" in fmt_stmts([t])
    outer = Loop("j", 0, 2, 1, (Loop("i", 0, 4, 1, (t,)),))
    assert parse_statements(fmt_stmts([outer])) == [outer]
    assert expand_stmts([outer]) == expand_stmts([Loop("i", 0, 4, 1, (a,)), Loop("i", 0, 4, 1, (b,))])
