"""holes.split's skeleton key (issue 44: built in one walk, no syntax nodes) groups statements
exactly as the statement rebuilt with its holes blanked and printed with repr() did, and
gives the same hole values, kinds and shapes; the tokens a reroll counts per skeleton
(reroll._Known) are those of the printed statement."""

from __future__ import annotations

from itertools import combinations

from kernelmill.ptx import parse_statements
from kernelmill.ptx.holes import REGNUM, SYM_KINDS, _symnum, hole_value, map_stmt, shape, split
from kernelmill.ptx.reroll import _Known, _tokens
from kernelmill.ptx.syntax import Block, Imm, Instr, Label, Loop, Reg, Sym

TEXT = """\
ld.param.u64 \t%rd1, [k_param_0];
ld.param.u64 \t%rd2, [k_param_1];
ld.param.u64 \t%rd3, [kp_param_01];
ld.global.f32 \t%f1, [%rd1];
ld.global.f32 \t%f2, [%rd1+4];
ld.global.f32 \t%f3, [%rd1+-4];
ld.global.f32 \t%f4, [%rd1+0];
ld.global.f32 \t%f5, [%rd2+0x10];
st.shared.f32 \t[smem+8], %f1;
st.shared.f32 \t[smem], %f1;
ld.shared.v4.f32 \t{%f1, %f2, %f3, %f4}, [%r9+16];
ld.shared.v4.f32 \t{%f5, %f6, %f7, %f8}, [%r9+32];
add.s32 \t%r1, %r2, 4;
add.s32 \t%r3, %r4, -4;
add.s32 \t%r3, %r4, 0;
add.s32 \t%r3, %tid.x, 7;
add.s32 \t%r3, %r04, 7;
mul.f32 \t%f1, %f2, 0f3F800000;
mul.f32 \t%f1, %f2, 0f40000000;
mul.f64 \t%fd1, %fd2, 0d3FF0000000000000;
mul.f32 \t%f1, %f2, 0F3F800000;
@%p1 bra \t$L__BB0_2;
@!%p1 bra \t$L__BB0_3;
@%p2 bra \t$L__BB0_3;
setp.lt.s32 \t%p1|%p2, %r1, %r2;
$L__BB0_2:
$L__BB0_7:
mov.u32 \t%r1, %r(2+i*3);
mov.u32 \t%r1, %r(5+i*3);
mov.u32 \t%r1, %r(5+i*4);
add.s32 \t%r1, %r2, 8+i*4;
add.s32 \t%r1, %r2, 12+i*4;
ld.global.f32 \t%f1, [%rd1+4+i*4];
ld.global.f32 \t%f1, [%rd1+8+i*4];
"""


def _old_split(s):
    """The split before issue 44's speed work: the statement rebuilt with its holes blanked."""
    vals, kinds, shapes = [], [], []

    def rec(kind, node):
        vals.append(hole_value(node))
        kinds.append(kind)
        shapes.append(shape(node))
        if kind == "reg":
            return Reg(REGNUM.match(node.name).group(1) + "#")
        if kind in SYM_KINDS:
            return Sym(_symnum(node.name).group(1) + "#")
        if kind == "vreg":
            return Reg(f"{node.prefix}#{shape(node)}")
        if kind in ("off", "off0"):
            return Imm(f"#o{shape(node)}")
        if kind == "fimm":
            return Sym("#" + node.text[:2])
        return Sym(f"#i{shape(node)}")

    skel = repr(map_stmt(s, rec)) if isinstance(s, (Instr, Loop, Label, Block)) else repr(s)
    return skel, tuple(vals), tuple(kinds), tuple(shapes)


def _statements():
    stmts = parse_statements(TEXT)
    loops = parse_statements("for.size.2 \ti in range(4):\n\tadd.s32 \t%r1, %r(2+i), 1;\n"
                             "\tst.global.f32 \t[%rd1+4+i*4], %f1;\n"
                             "for.size.2 \ti in range(8):\n\tadd.s32 \t%r1, %r(9+i), 1;\n"
                             "\tst.global.f32 \t[%rd1+8+i*4], %f1;\n")
    return stmts + loops


def test_split_groups_and_numbers_holes_as_the_rebuilt_statement_did():
    stmts = _statements()
    assert len(stmts) > 30
    for s in stmts:
        assert split(s)[1:] == _old_split(s)[1:], s
    for a, b in combinations(stmts, 2):
        assert (split(a)[0] == split(b)[0]) == (_old_split(a)[0] == _old_split(b)[0]), (a, b)


def test_tokens_counted_per_skeleton_are_the_printed_ones():
    known = _Known()
    for s in _statements() * 2:  # the second time from the skeleton's count
        assert known.tokens(s) == _tokens(s), s
