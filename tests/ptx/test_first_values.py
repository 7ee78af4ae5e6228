"""First values (session 16): `%f3+i*3!1` is `%f1` in copy 0 and `%f(3+i*3)` in the others.

Copy 0 of an unrolled body is often off the model the other copies keep to (an accumulator's
first source, a register numbered before the copies' own). The format writes its value after
a `!`; the reroller offers such loops (first_copy.py) and writes tables that are linear but for
copy 0 that way (firsts.py)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from kernelmill.ptx import (Loop, RerollConfig, count_tokens, expand_stmts, fmt_stmts, parse_statements,
                            reroll_stmts)
from kernelmill.ptx.firsts import first_form, rewrite
from kernelmill.ptx.syntax import VarExpr, VarReg, fmt_operand


# --- format ---------------------------------------------------------------------
def test_first_values_print_and_read_back():
    text = ("\tfor.size.2 \ti in range(4):\n"
            "\t\tadd.f32 \t%f3+i*3!1, %f(7!2), 5+i!-3;\n"
            "\t\tld.global.f32 \t%f9+j*2!j=4, [%rd2+4+i*4!0];")
    stmts = parse_statements(text)
    assert fmt_stmts(stmts) == text
    add = stmts[0].body[0]
    assert add.operands[0] == VarReg("%f", VarExpr(3, (("i", 3),), pins=(("i", 0, 1),)))
    assert add.operands[1] == VarReg("%f", VarExpr(7, pins=(("i", 0, 2),)))
    assert add.operands[2] == VarExpr(5, (("i", 1),), pins=(("i", 0, -3),))


def test_first_value_is_the_value_where_its_variable_is_0():
    e = VarExpr(3, (("i", 3), ("j", 10)), pins=(("i", 0, 1),))
    assert [e.eval({"i": t, "j": 1}) for t in range(4)] == [1, 16, 19, 22]
    loop = parse_statements("for.size.1 i in range(4):\n ld.global.f32 %f3+i*3!1, [%rd2+4+i*4!0];")
    assert fmt_stmts(expand_stmts(loop)).split("\n") == [
        "\tld.global.f32 \t%f1, [%rd2];", "\tld.global.f32 \t%f6, [%rd2+8];",
        "\tld.global.f32 \t%f9, [%rd2+12];", "\tld.global.f32 \t%f12, [%rd2+16];"]


@settings(max_examples=200, deadline=None)
@given(base=st.integers(0, 500), terms=st.lists(st.tuples(st.sampled_from("ijk"), st.integers(-9, 9).filter(bool)),
                                                 max_size=2, unique_by=lambda t: t[0]),
       var=st.sampled_from("ijk"), first=st.integers(-40, 500), prefix=st.sampled_from(["%r", "%f", "%rd", ""]))
def test_any_first_value_reads_back(base, terms, var, first, prefix):
    e = VarExpr(base, tuple(terms), pins=((var, 0, first),))
    op = VarReg(prefix, e) if prefix else e
    text = f"add.s32 %r1, {fmt_operand(op)}, 4;"
    (s,) = parse_statements(text)
    assert s.operands[1] == op


# --- the rewrite of tables (firsts.py) ------------------------------------------
def test_a_table_linear_but_for_copy_0_is_written_with_a_first_value():
    (loop,) = parse_statements("for.size.2 i in range(4):\n ld.global.f32 %f[1,6,9,12], [%rd28+-8+i*4];\n"
                               " min.f32 %f[3,7,10,13], %f2, %f[1,6,9,12];")
    out = rewrite([loop])
    assert fmt_stmts(out).split("\n")[1:] == ["\t\tld.global.f32 \t%f3+i*3!1, [%rd28+-8+i*4];",
                                              "\t\tmin.f32 \t%f4+i*3!3, %f2, %f3+i*3!1;"]
    assert expand_stmts(out) == expand_stmts([loop])
    assert count_tokens(fmt_stmts(out)) == count_tokens(fmt_stmts([loop])) - 9


def test_three_values_read_with_the_smaller_step():
    # `[13,17,1]`: a chain's result in a low register (`33-i*16!13` would fit as well), and no
    # shorter pinned (`%r13+i*4!2:1`): left a table
    assert first_form(VarExpr(0, tables=(("i", (13, 17, 1)),))) == VarExpr(13, (("i", 4),), pins=(("i", 2, 1),))
    (loop,) = parse_statements("for.size.1 i in range(3):\n add.s32 %r[13,17,1], %r9+i*4, %r10+i*4;")
    assert rewrite([loop]) == [loop]
    assert first_form(VarExpr(0, tables=(("i", (115, 2, 3)),))) == VarExpr(1, (("i", 1),), pins=(("i", 0, 115),))
    assert first_form(VarExpr(0, tables=(("i", (5, 9, 2, 7)),))) is None  # no step after copy 0
    assert first_form(VarExpr(0, (("j", 4),), tables=(("i", (5, 1, 2, 3)),))) is None  # j's term: no


def test_a_table_linear_but_for_its_last_value_is_written_with_a_pinned_value():
    # the last copy of a chain writes the register the code after reads (cp_async_stage_dot)
    (loop,) = parse_statements("for.size.1 i in range(4):\n"
                               " fma.rn.f32 %f[2,3,4,115], %f18+i*19, %f26+i*19, %f[115,2,3,4];")
    out = rewrite([loop])
    assert fmt_stmts(out).split("\n")[1] == "\t\tfma.rn.f32 \t%f2+i!3:115, %f18+i*19, %f26+i*19, %f1+i!115;"
    assert expand_stmts(out) == expand_stmts([loop])
    (s,) = parse_statements("add.s32 %r1, %r2+j*3!j=3:7, 4;")
    assert s.operands[1].expr.pins == (("j", 3, 7),)


# --- loops offered with first values (first_copy.py) -----------------------------
def _chain(copies: int, first_src: int) -> list:
    """An unrolled dot product: copy 0 reads the accumulator the code before left."""
    lines = []
    for t in range(copies):
        src = first_src if t == 0 else 12 + 3 * t
        off = f"+{4 * t}" if t else ""  # (nvcc writes no offset for 0)
        lines += [f"ld.global.nc.f32 %f{10 + 3 * t}, [%rd4{off}];",
                  f"ld.global.nc.f32 %f{11 + 3 * t}, [%rd5{off}];",
                  f"fma.rn.f32 %f{15 + 3 * t}, %f{10 + 3 * t}, %f{11 + 3 * t}, %f{src};"]
    return parse_statements("\n".join(lines))


def test_an_accumulator_chain_rolls_with_its_first_source():
    stmts = _chain(4, 90)
    rolled = reroll_stmts(stmts)
    assert len(rolled) == 1 and isinstance(rolled[0], Loop) and rolled[0].trip == 4
    assert "%f12+i*3!90" in fmt_stmts(rolled)
    assert expand_stmts(parse_statements(fmt_stmts(rolled))) == stmts
    # without them, or in the paper's grammar, no first value is written
    for cfg in (RerollConfig(firsts=False), RerollConfig(tables=False)):
        assert "!" not in fmt_stmts(reroll_stmts(stmts, cfg))


@settings(max_examples=120, deadline=None)
@given(copies=st.integers(3, 9), body=st.lists(st.tuples(st.sampled_from(["add.s32", "mul.lo.s32", "ld.shared.u32"]),
                                                         st.integers(0, 40), st.sampled_from([0, 1, 2, 4, -1])),
                                               min_size=1, max_size=3),
       off=st.dictionaries(st.integers(0, 5), st.integers(0, 200), max_size=3))
def test_copies_with_copy_0_off_roll_losslessly_and_never_longer(copies, body, off):
    # each statement: `op %rD, %rS, imm`; hole h of copy 0 may be off its model (`off`)
    lines = []
    for t in range(copies):
        for k, (op, b, d) in enumerate(body):
            vals = [100 + 10 * k + b + t * (d or 1), b + 50 + t * d, b + t * 4]
            if t == 0:
                for h, v in off.items():
                    if h // 3 == k:
                        vals[h % 3] = v
            lines.append(f"{op} %r{vals[0]}, %r{vals[1]}, {vals[2]};")
    stmts = parse_statements("\n".join(lines))
    rolled = reroll_stmts(stmts)
    text = fmt_stmts(rolled)
    assert expand_stmts(parse_statements(text)) == stmts
    assert count_tokens(text) <= count_tokens(fmt_stmts(stmts))


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["reg", "imm", "off", "off0"]), v0=st.integers(-50, 300), base=st.integers(-50, 300),
       d=st.integers(-9, 9))
def test_first_cost_is_what_the_template_prints(kind, v0, base, d):
    from kernelmill.ptx.first_copy import first_cost
    from kernelmill.ptx.holes import template

    if kind == "reg":
        v0, text = abs(v0), f"mov.u32 %r{abs(v0)}, %r7;"
    elif kind == "imm":
        text = f"add.s32 %r2, %r7, {v0};"
    elif kind == "off":
        v0 = v0 or 1  # (an explicit offset is never 0 as a hole)
        text = f"ld.shared.u32 %r2, [%r7+{v0}];"
    else:
        v0, text = 0, "ld.shared.u32 %r2, [%r7];"
    (s,) = parse_statements(text)
    from kernelmill.ptx.holes import split
    _, vals, kinds, _ = split(s)
    h = kinds.index(kind)
    models = tuple(("first", d, base) if k == h else ("lin", 0) for k in range(len(vals)))
    t = template(s, vals, models, "i")
    assert count_tokens(fmt_stmts([t])) - count_tokens(fmt_stmts([s])) == first_cost(kind, v0, base, d)
    assert expand_stmts([Loop("i", 0, 1, 1, (t,))]) == [s]


# 49 statements of sgemm_t_8x8_sliced_k_f32x4_kernel (tuning split, nvcc 13.0 sm_90), cut down to
# where a loop with first values (`%f802+i*2!801`) wins the first pass and blocks the nested fold
# the plain loops make: 252 tokens where the plans kept it, 232 where they run again without
SGEMM_SLICE = (
    "fma.rn.f32 	%f794, %f792, %f724, %f714;\n"
    "fma.rn.f32 	%f797, %f792, %f730, %f717;\n"
    "fma.rn.f32 	%f798, %f792, %f732, %f718;\n"
    "fma.rn.f32 	%f799, %f792, %f734, %f719;\n"
    "fma.rn.f32 	%f800, %f792, %f736, %f720;\n"
    "fma.rn.f32 	%f825, %f818, %f814, %f745;\n"
    "fma.rn.f32 	%f826, %f818, %f816, %f746;\n"
    "ld.shared.f32 	%f827, [%r11+88];\n"
    "fma.rn.f32 	%f828, %f827, %f801, %f748;\n"
    "fma.rn.f32 	%f829, %f827, %f804, %f749;\n"
    "fma.rn.f32 	%f830, %f827, %f806, %f750;\n"
    "fma.rn.f32 	%f831, %f827, %f808, %f751;\n"
    "fma.rn.f32 	%f832, %f827, %f810, %f752;\n"
    "fma.rn.f32 	%f833, %f827, %f812, %f753;\n"
    "fma.rn.f32 	%f834, %f827, %f814, %f754;\n"
    "fma.rn.f32 	%f835, %f827, %f816, %f755;\n"
    "ld.shared.f32 	%f836, [%r11+120];\n"
    "fma.rn.f32 	%f837, %f836, %f801, %f757;\n"
    "fma.rn.f32 	%f838, %f836, %f804, %f758;\n"
    "fma.rn.f32 	%f839, %f836, %f806, %f759;\n"
    "fma.rn.f32 	%f840, %f836, %f808, %f760;\n"
    "fma.rn.f32 	%f841, %f836, %f810, %f761;\n"
    "fma.rn.f32 	%f842, %f836, %f812, %f762;\n"
    "fma.rn.f32 	%f843, %f836, %f814, %f763;\n"
    "fma.rn.f32 	%f844, %f836, %f816, %f764;\n"
    "fma.rn.f32 	%f847, %f845, %f804, %f767;\n"
    "fma.rn.f32 	%f848, %f845, %f806, %f768;\n"
    "fma.rn.f32 	%f849, %f845, %f808, %f769;\n"
    "fma.rn.f32 	%f850, %f845, %f810, %f770;\n"
    "fma.rn.f32 	%f852, %f845, %f814, %f772;\n"
    "fma.rn.f32 	%f853, %f845, %f816, %f773;\n"
    "ld.shared.f32 	%f854, [%r11+184];\n"
    "fma.rn.f32 	%f855, %f854, %f801, %f775;\n"
    "fma.rn.f32 	%f856, %f854, %f804, %f776;\n"
    "fma.rn.f32 	%f857, %f854, %f806, %f777;\n"
    "fma.rn.f32 	%f858, %f854, %f808, %f778;\n"
    "fma.rn.f32 	%f859, %f854, %f810, %f779;\n"
    "fma.rn.f32 	%f860, %f854, %f812, %f780;\n"
    "fma.rn.f32 	%f861, %f854, %f814, %f781;\n"
    "fma.rn.f32 	%f862, %f854, %f816, %f782;\n"
    "ld.shared.f32 	%f863, [%r11+216];\n"
    "fma.rn.f32 	%f864, %f863, %f801, %f784;\n"
    "fma.rn.f32 	%f865, %f863, %f804, %f785;\n"
    "fma.rn.f32 	%f866, %f863, %f806, %f786;\n"
    "fma.rn.f32 	%f867, %f863, %f808, %f787;\n"
    "fma.rn.f32 	%f868, %f863, %f810, %f788;\n"
    "fma.rn.f32 	%f869, %f863, %f812, %f789;\n"
    "fma.rn.f32 	%f870, %f863, %f814, %f790;\n"
    "fma.rn.f32 	%f871, %f863, %f816, %f791;\n"
)


def test_first_value_loops_that_block_a_nested_fold_are_run_again_without():
    stmts = parse_statements(SGEMM_SLICE)
    out = reroll_stmts(stmts)
    plain = reroll_stmts(stmts, RerollConfig(firsts=False))
    assert count_tokens(fmt_stmts(out)) <= count_tokens(fmt_stmts(plain)) == 232
    assert expand_stmts(parse_statements(fmt_stmts(out))) == stmts
