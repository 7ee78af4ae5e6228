"""Rolled-PTX format 2: short VarRegs (`%f22+i*21`), `+i` for a coefficient of 1,
`range(n)` / `range(a, b)` headers; format 1 text (`%f(22+i*21)`, `range(0, n, 1)`)
still parses to the same tree."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmill.ptx import (PtxSyntaxError, count_tokens, expand_stmts, fmt_stmts,
                            parse_statements, reroll_stmts)
from kernelmill.ptx.syntax import Addr, Imm, Instr, Label, Loop, Reg, Sym, Vec, VarExpr, VarReg


def one(text):
    (s,) = parse_statements(text)
    return s


def test_short_varreg_and_unit_coefficient_parse():
    s = one("fma.rn.f32 %f22+i*21, %f23+i-j*2, %f7-i, 16+i;")
    assert s.operands == (VarReg("%f", VarExpr(22, (("i", 21),))),
                          VarReg("%f", VarExpr(23, (("i", 1), ("j", -2)))),
                          VarReg("%f", VarExpr(7, (("i", -1),))),
                          VarExpr(16, (("i", 1),)))
    assert fmt_stmts([s]).strip() == "fma.rn.f32 \t%f22+i*21, %f23+i-j*2, %f7-i, 16+i;"


def test_short_varreg_in_addresses_vectors_guards_and_pipes():
    s = one("@!%p3+i ld.global.v2.f32 {%f1+i*2, %f2+i*2}, [%rd7+j+16+i*16];")
    assert s.guard.operand == VarReg("%p", VarExpr(3, (("i", 1),)))
    assert s.operands[0] == Vec((VarReg("%f", VarExpr(1, (("i", 2),))),
                                 VarReg("%f", VarExpr(2, (("i", 2),)))))
    # the register's terms come first, then the offset, which starts with an integer
    assert s.operands[1] == Addr(VarReg("%rd", VarExpr(7, (("j", 1),))), VarExpr(16, (("i", 16),)))
    s = one("shfl.sync.down.b32 %r17+i*10|%p10+i*12, %r13+i*10, 16, 31, -1;")
    assert s.operands[0].left == VarReg("%r", VarExpr(17, (("i", 10),)))
    assert one("ld.shared.f32 %f1, [%r3+0+i*64];").operands[1] == Addr(Reg("%r3"), VarExpr(0, (("i", 64),)))
    assert one("ld.shared.f32 %f1, [%r3+i*4+(16>>i)];").operands[1] == \
        Addr(VarReg("%r", VarExpr(3, (("i", 4),))), VarExpr(0, (), ((16, ">>", "i", 1),)))


def test_short_label_varreg():
    body = parse_statements("@%p1+i bra $L__BB0_2+i*2;\nadd.s32 %r1, %r1, 1;\n$L__BB0_2+i*2:\n")
    assert body[0].operands == (VarReg("$L__BB0_", VarExpr(2, (("i", 2),))),)
    assert body[2] == Label("$L__BB0_", VarExpr(2, (("i", 2),)))
    assert "$L__BB0_2+i*2:" in fmt_stmts(body)
    # a plain label and a symbol with an offset are unchanged
    assert parse_statements("$L__BB0_2:\n")[0] == Label("$L__BB0_2")
    assert one("mov.u64 %rd1, smem+4;").operands[1] == Addr(Sym("smem"), Imm("4"), bracket=False)


def test_range_forms():
    for head, rng in (("range(4)", (0, 4, 1)), ("range(1, 4)", (1, 4, 1)),
                      ("range(0, 8, 2)", (0, 8, 2)), ("range(0, 4, 1)", (0, 4, 1))):
        (loop,) = parse_statements(f"for.size.1 i in {head}:\n\tadd.s32 %r1+i, %r2, 1;\n")
        assert (loop.start, loop.limit, loop.step) == rng
    printed = fmt_stmts([Loop("i", 0, 4, 1, (Instr("ret"),)), Loop("i", 1, 4, 1, (Instr("ret"),)),
                         Loop("i", 0, 8, 2, (Instr("ret"),))])
    assert "range(4):" in printed and "range(1, 4):" in printed and "range(0, 8, 2):" in printed
    with pytest.raises(PtxSyntaxError):
        parse_statements("for.size.1 i in range():\n\tret;\n")


def test_format1_text_reads_the_same():
    old = ("for.size.2 \ti in range(0, 4, 1):\n"
           "\tld.shared.f32 \t%f(1+i*2), [%rd(7+j*1)+16+i*16];\n"
           "\t@%p(1+i*1) bra \t$L__BB0_(2+i*2);\n")
    new = ("for.size.2 \ti in range(4):\n"
           "\tld.shared.f32 \t%f1+i*2, [%rd7+j+16+i*16];\n"
           "\t@%p1+i bra \t$L__BB0_2+i*2;\n")
    assert parse_statements(old) == parse_statements(new)
    assert fmt_stmts(parse_statements(old)) == fmt_stmts(parse_statements(new))
    assert count_tokens(new) < count_tokens(old)


def test_varreg_without_terms_keeps_parentheses():
    # `%f(3)` is a VarReg, `%f3` a register: the short form would change the tree
    s = one("mov.f32 %f(3), %f3;")
    assert s.operands == (VarReg("%f", VarExpr(3)), Reg("%f3"))
    assert "%f(3), %f3" in fmt_stmts([s])


# --- print -> parse is the identity on random format-2 operands -------------------------
_VARS = st.sampled_from(["i", "j", "k", "i1"])
_TERMS = st.lists(st.tuples(_VARS, st.integers(-70, 70).filter(bool)), max_size=3).map(tuple)
_SHIFTS = st.lists(st.tuples(st.integers(-4096, 4096).filter(bool), st.sampled_from([">>", "<<"]),
                             _VARS, st.integers(1, 3)), max_size=2).map(tuple)
_TABLE = st.tuples(_VARS, st.lists(st.integers(-99, 400), min_size=1, max_size=6).map(tuple))
_TABLES = st.lists(_TABLE, max_size=2).map(tuple)


@st.composite
def operand(draw):
    kind = draw(st.sampled_from(["vreg", "label", "vimm", "addr", "reg", "vec"]))
    prefix = draw(st.sampled_from(["%r", "%f", "%rd", "%p", "%fd", "%rs"]))
    base = draw(st.integers(0, 400))
    terms = draw(_TERMS)
    if kind == "vreg":
        return VarReg(prefix, VarExpr(base, terms, draw(_SHIFTS) if draw(st.booleans()) else (),
                                      draw(_TABLES)))
    if kind == "label":
        return VarReg("$L__BB0_", VarExpr(base, terms, (), draw(_TABLES)))
    if kind == "vimm":
        e = VarExpr(draw(st.integers(-500, 500)), terms, draw(_SHIFTS), draw(_TABLES))
        return e if (e.terms or e.shifts or e.tables) else Imm(str(e.base))
    if kind == "addr":
        b = VarReg(prefix, VarExpr(base, terms)) if terms else Reg(f"{prefix}{base}")
        off = draw(st.one_of(st.none(), st.builds(VarExpr, st.integers(-64, 512), _TERMS.filter(bool)),
                             st.builds(VarExpr, st.integers(0, 64), _TERMS, st.just(()),
                                       st.lists(_TABLE, min_size=1, max_size=2).map(tuple))))
        return Addr(b, off)
    if kind == "vec":
        return Vec(tuple(VarReg(prefix, VarExpr(base + k, terms)) if terms else Reg(f"{prefix}{base + k}")
                         for k in range(draw(st.integers(1, 4)))))
    return Reg(f"{prefix}{base}")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operand(), min_size=1, max_size=4), st.booleans())
def test_print_parse_roundtrip(ops, guarded):
    guard = VarReg("%p", VarExpr(1, (("i", 1),))) if guarded else None
    s = Instr("add", (".s32",), tuple(ops), guard)
    text = fmt_stmts([s])
    assert parse_statements(text) == [s], text
    labels = [Label(o.prefix, o.expr) for o in ops if isinstance(o, VarReg) and o.prefix.startswith("$")]
    if labels:
        assert parse_statements(fmt_stmts(labels)) == labels


def test_reroll_output_is_format2_and_lossless():
    lines = []
    for t in range(6):
        lines += [f"ld.global.nc.f32 %f{2 * t + 1}, [%rd4+{4 * t}];",
                  f"add.f32 %f{2 * t + 2}, %f{2 * t + 1}, %f{2 * t};"]
    stmts = parse_statements("\n".join(lines).replace("+0]", "]"))
    rolled = reroll_stmts(stmts)
    text = fmt_stmts(rolled)
    assert "range(6):" in text and "%f1+i*2" in text and "(" not in text.replace("range(6)", "")
    assert expand_stmts(parse_statements(text)) == stmts


# --- table terms `[v0,v1,...][i]`: a hole that keeps to no model ------------------------
def test_table_terms_parse_print_and_evaluate():
    s = one("shfl.sync.bfly.b32 %r23+i*2|%p6+i, %r22+i*2, %r([8,12,5,17,20][i]), 31, [3,-1,4][i];")
    assert s.operands[2] == VarReg("%r", VarExpr(0, tables=(("i", (8, 12, 5, 17, 20)),)))
    assert s.operands[4] == VarExpr(0, tables=(("i", (3, -1, 4)),))
    # printed short (session 15): no index where it is `i`, no parentheses on a register alone
    assert "%r[8,12,5,17,20], 31, [3,-1,4];" in fmt_stmts([s])
    assert one("shfl.sync.bfly.b32 %r23, %r22, %r[8,12,5,17,20], 31, [3,-1,4];") == one(
        "shfl.sync.bfly.b32 %r23, %r22, %r([8,12,5,17,20][i]), 31, [3,-1,4][i];")
    assert one("ld.shared.f32 %f1, [%r3+4+[0,8][j]];").operands[1] == \
        Addr(Reg("%r3"), VarExpr(4, tables=(("j", (0, 8)),)))
    assert VarExpr(1, (("i", 2),), (), (("j", (5, 7)),)).eval({"i": 3, "j": 1}) == 14
    # an absolute address `[0]` and an address list are not tables
    assert one("ld.u32 %r1, [0];").operands[1] == Addr(Imm("0"))
    loop = parse_statements("for.size.1 i in range(3):\n\tadd.s32 %r([9,4,1][i]), %r1, [7,0,-2][i];\n")
    assert [fmt_stmts([x]).strip() for x in expand_stmts(loop)] == [
        "add.s32 \t%r9, %r1, 7;", "add.s32 \t%r4, %r1, 0;", "add.s32 \t%r1, %r1, -2;"]


def test_table_index_out_of_range_is_an_expand_error():
    from kernelmill.ptx import ExpandError
    loop = parse_statements("for.size.1 i in range(4):\n\tadd.s32 %r1, %r1, [7,0,-2][i];\n")
    with pytest.raises(ExpandError):
        expand_stmts(loop)


def test_irregular_shuffle_offsets_roll_with_a_table():
    # a butterfly whose offsets sit in registers nvcc numbered out of order
    offs = [8, 12, 5, 17, 20]
    lines = []
    for t, r in enumerate(offs):
        lines += [f"mov.b32 %r{22 + 2 * t}, %f{14 + 2 * t};",
                  f"shfl.sync.bfly.b32 %r{23 + 2 * t}|%p{6 + t}, %r{22 + 2 * t}, %r{r}, %r7, %r9;",
                  f"mov.b32 %f{15 + 2 * t}, %r{23 + 2 * t};",
                  f"add.f32 %f{16 + 2 * t}, %f{14 + 2 * t}, %f{15 + 2 * t};"]
    stmts = parse_statements("\n".join(lines))
    from kernelmill.ptx import RerollStats
    st = RerollStats()
    rolled = reroll_stmts(stmts, stats=st)
    assert len(rolled) == 1 and rolled[0].trip == 5 and st.table_loops == 1
    assert "%r[8,12,5,17,20]" in fmt_stmts(rolled)
    assert expand_stmts(parse_statements(fmt_stmts(rolled))) == stmts
    # without tables it stays unrolled
    from kernelmill.ptx import RerollConfig
    assert not any(isinstance(x, Loop) for x in reroll_stmts(stmts, RerollConfig(tables=False)))


def test_last_copy_renumbered_rolls_with_a_table():
    # nvcc gives the chain's last result a low register (%r1), breaking the linear model
    lines = []
    for t in range(3):
        dst = 13 + 4 * t if t < 2 else 1
        lines += [f"ld.global.nc.f32 %f{6 + 3 * t}, [%rd7+{4 + 4 * t}];",
                  f"setp.lt.f32 %p{3 + 2 * t}, %f{6 + 3 * t}, %f1;",
                  f"selp.u32 %r{10 + 4 * t}, 1, 0, %p{3 + 2 * t};",
                  f"add.s32 %r{dst}, %r{9 + 4 * t}, %r{10 + 4 * t};",
                  f"st.global.f32 [%rd8+{4 + 4 * t}], %f{6 + 3 * t};"]
    stmts = parse_statements("\n".join(lines))
    rolled = reroll_stmts(stmts)
    assert len(rolled) == 1 and "%r[13,17,1]" in fmt_stmts(rolled)
    assert expand_stmts(rolled) == stmts


@st.composite
def irregular_stream(draw):
    """Copies whose holes follow a linear model except for random breaks."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        copies = draw(st.integers(2, 7))
        body = draw(st.lists(st.tuples(st.sampled_from(["add.s32", "mov.b32", "ld.shared.f32"]),
                                       st.integers(0, 30), st.sampled_from([0, 1, 2, 4, -4])),
                             min_size=1, max_size=3))
        breaks = draw(st.dictionaries(st.tuples(st.integers(0, copies - 1), st.integers(0, 2)),
                                      st.integers(0, 60), max_size=3))
        for t in range(copies):
            for k, (op, base, d) in enumerate(body):
                v = breaks.get((t, k), base + t * d + 40)
                r = breaks.get((t, k + 10), base + 2 * t)
                lines.append(f"{op} %r{v}, %r{r}, [%rd2+{4 * v}];" if op == "ld.shared.f32"
                             else f"{op} %r{v}, %r{r}, {v - 50};")
        if draw(st.booleans()):
            lines.append("bar.sync 0;")
    return "\n".join(lines).replace("+0]", "]")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(irregular_stream())
def test_expand_reroll_is_identity_with_tables(text):
    stmts = parse_statements(text)
    rolled = reroll_stmts(stmts)
    printed = fmt_stmts(rolled)
    assert expand_stmts(rolled) == stmts
    assert expand_stmts(parse_statements(printed)) == stmts
    assert count_tokens(printed) <= count_tokens(fmt_stmts(stmts))
