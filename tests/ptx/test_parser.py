"""PTX reader: structure, round trip of tokens, errors with line and column."""

import pytest

from kernelmill.ptx import (PtxSyntaxError, basic_blocks, fmt_module, parse_module,
                            parse_statements, tokenize)
from kernelmill.ptx.syntax import Addr, Imm, Instr, Label, Neg, Pipe, Reg, Vec

SAMPLE = r"""
//
// hand-written, covers the syntax nvcc and Triton emit
//
.version 8.4
.target sm_90
.address_size 64
.extern .shared .align 16 .b8 smem[];
.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

.func  (.param .b32 func_retval0) helper(
	.param .b32 helper_param_0
)
{
	.reg .b32 	%r<3>;
	ld.param.b32 	%r1, [helper_param_0];
	add.s32 	%r2, %r1, -1;
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}

.visible .entry k(
	.param .u64 k_param_0,
	.param .align 8 .b8 k_param_1[16]
)
.maxntid 128, 1, 1
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<20>;
	.reg .f32 	%f<9>;
	.reg .b64 	%rd<9>;
	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	setp.lt.u32 	%p1|%p2, %r1, 0x7F;
	@!%p1 bra 	$L__BB0_2;
	ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd1+-16];
	fma.rn.f32 	%f5, %f1, 0f3FC00000, 0d3FF0000000000000;
	st.shared.f32 	[smem+4], %f5;
	mov.b32 	%r2, 1.5;
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0], %r1;
	.param .b32 retval0;
	call.uni (retval0), helper, (param0);
	ld.param.b32 	%r3, [retval0];
	} // callseq 0
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1], %r5, [%r6];
$L__BB0_2:
	selp.b32 	%r7, 1, 0, !%p2;
	ret;
}
"""


def _tokens(text):
    return [t.text for t in tokenize(text) if t.kind != "comment"]


def test_print_gives_back_the_same_tokens():
    m = parse_module(SAMPLE, "sample.ptx")
    assert _tokens(fmt_module(m)) == _tokens(SAMPLE)
    assert parse_module(fmt_module(m)) == m


def test_structure():
    m = parse_module(SAMPLE)
    helper, k = m.functions
    assert (helper.kind, helper.name, k.kind, k.name) == (".func", "helper", ".entry", "k")
    assert helper.ret is not None and len(k.params) == 2
    instrs = [s for s in k.body if isinstance(s, Instr)]
    setp = next(s for s in instrs if s.opcode == "setp")
    assert setp.mods == (".lt", ".u32")
    assert setp.operands[0] == Pipe(Reg("%p1"), Reg("%p2")) and setp.operands[2] == Imm("0x7F")
    bra = next(s for s in instrs if s.opcode == "bra")
    assert bra.guard == Neg(Reg("%p1"))
    ld = next(s for s in instrs if s.opcode == "ld" and ".v4" in s.mods)
    assert isinstance(ld.operands[0], Vec) and len(ld.operands[0].items) == 4
    assert ld.operands[1] == Addr(Reg("%rd1"), Imm("-16"), "+")
    assert next(s for s in instrs if s.opcode == "mov" and s.operands[1] == Reg("%tid.x"))
    assert any(isinstance(s, Label) and s.name == "$L__BB0_2" for s in k.body)


def test_basic_blocks_split_at_labels_and_branches():
    k = parse_module(SAMPLE).functions[1]
    blocks = basic_blocks(k)
    assert [b.label for b in blocks] == [None, None, "$L__BB0_2"]
    assert blocks[0].stmts[-1].opcode == "bra"


@pytest.mark.parametrize("text,line,col,what", [
    (".version 8.0\n.entry k()\n{\n\tadd.s32 %r1, %r2 3;\n}\n", 4, 19, "expected ','"),
    (".version 8.0\n.entry k()\n{\n\tmov.u32 %r1, %r2\n}\n", 4, 2, "expected ';'"),
    (".version 8.0\n.entry k()\n{\n\tld.global.f32 %f1, [%rd1;\n}\n", 4, 26, "expected ']'"),
    (".entry k()\n{\n\tmov.u32 %r1, #;\n}\n", 3, 15, "unexpected character"),
    (".entry k()\n{\n\tret;\n", 4, 1, "missing '}'"),
])
def test_errors_name_line_and_column(text, line, col, what):
    with pytest.raises(PtxSyntaxError) as ei:
        parse_module(text, "bad.ptx")
    e = ei.value
    assert (e.line, e.col) == (line, col), str(e)
    assert what in str(e) and str(e).startswith(f"bad.ptx:{line}:{col}:")


def test_rolled_syntax_is_parsed():
    stmts = parse_statements("for.size.2 j in range(0, 4, 1):\n"
                             "\tld.shared.f32 %f(1+j*2), [%r8+0+j*64];\n"
                             "\tadd.f32 %f(2+j*2), %f(2+j*2), -8-j*4;\n")
    (loop,) = stmts
    assert (loop.var, loop.trip, loop.size) == ("j", 4, 2)
    with pytest.raises(PtxSyntaxError, match="only 1 statements follow"):
        parse_statements("for.size.2 j in range(0, 4, 1):\n\tret;\n")
