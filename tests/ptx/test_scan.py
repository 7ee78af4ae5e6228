"""The parser's one-pass line reader gives the same trees as the token parser, in linear time."""

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmill.ptx import PtxSyntaxError, count_tokens, parse_module, parse_statements
from kernelmill.ptx.lexer import tokenize
from kernelmill.ptx.parser import _Parser
from kernelmill.ptx.syntax import Block, Function, Instr, Loop

from .test_parser import SAMPLE
from .test_reroll import stream

# lines that look like instructions where they are not statements, and the
# operand forms the line reader reads itself or hands to the parser
TRICKY = r"""
.version 8.4
.target sm_90
.address_size 64
.global .align 8 .u64 table[2] = {
generic(x),
generic(y)};
.global .align 4 .b8 arr[4] = {1, 2,
 3, 4};
.global .u32 first,
second;
.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .b32 	%r<20>;
	.loc	1 12 3
	ld.param.u64 	%rd1, [k_param_0];
	.loc	1 13 3
	.loc	1 14 5, function_name $L__info_string0, inlined_at 1 12 3
	.loc 1 15 2,function_name $L__info_string1,inlined_at 1 12 3   
	.loc	1 16 3 // a comment on a .loc line
	.loc	1 17 3 /* and a block */ .loc 1 18 4
	.loc	1 19 "not a number"
	mov.u32 	%r1, %tid.x; // a comment after
	add.s32 %r2, %r1 , 4;
	add.s32	%r3,%r2,-4;
	ld.global.v2.f32 	{%f1, _}, [%rd1+-16];
	ld.global.f32 	%f2, [arr+4];
	ld.global.f32 	%f3, [arr-4];
	st.shared.f32 	[%r1+0x10], %f2;
	setp.lt.u32 	%p1|%p2, %r1, 0x7FU;
	@!%p1 bra 	$L__BB0_2;
	mov.f32 	%f4, 0f3F800000;
	mov.f64 	%fd1, -0d3FF0000000000000;
	mov.f32 	%f5, 1.5;
	call.uni (retval0), helper, (param0, param1);
	{ cvt.rn.f16.f32 %rs1, %f1; }
	bar.sync 	0;
	ret;
$L__BB0_2:
	exit;
}
"""

ROLLED = """.visible .entry r()
{
\tfor.size.2 \ti in range(0, 4, 1):
\t\tld.shared.f32 \t%f(1+i*2), [%r8+0+i*64];
\t\tshfl.sync.down.b32 \t%r(2+i*2), %r(1+i*2), (16>>i), 31, -1;
$L__BB0_(3+i*2):
\tret;
}
"""


def _lines(stmts):
    for s in stmts:
        if isinstance(s, Instr):
            yield s.opcode, s.line
        elif isinstance(s, (Block, Loop)):
            yield from _lines(s.body)


def _both(text):
    fast, slow = _Parser(text, "t", fast=True).module(), _Parser(text, "t", fast=False).module()
    assert fast == slow
    for f, g in zip(fast.items, slow.items):
        if isinstance(f, Function) and f.body:
            assert list(_lines(f.body)) == list(_lines(g.body))  # `line` is not compared by ==
    return fast


# a `.loc` before the first function and one at the end of the text (no newline after it)
LOC_EDGES = ".version 8.4\n.loc 1 2 3\n.visible .entry k()\n{\n\tret;\n\t.loc\t1 4 1"


@pytest.mark.parametrize("text", [SAMPLE, TRICKY, ROLLED])
def test_line_reader_and_token_parser_agree(text):
    m = _both(text)
    assert m.functions


def test_loc_lines_read_alike_wherever_they_stand():
    with pytest.raises(PtxSyntaxError) as fast:
        _Parser(LOC_EDGES, "t", fast=True).module()
    with pytest.raises(PtxSyntaxError) as slow:
        _Parser(LOC_EDGES, "t", fast=False).module()
    assert str(fast.value) == str(slow.value)  # the body never closes: both say where
    m = _both(LOC_EDGES + "\n}\n")
    body = m.functions[0].body
    assert [d.tokens for d in body if not isinstance(d, Instr)] == [
        ((".loc", False), ("1", False), ("4", False), ("1", False))]


@pytest.mark.parametrize("text", [".version 8.4\nadd.s32 %r1, %r2, 1;\n",
                                  ".entry k()\n{\n\tadd.s32 %r1, %r2, 1;\n",
                                  ".entry k()\n{\n\tld.f32 %f1, [%rd1+4;\n}\n"])
def test_same_errors(text):
    errors = []
    for fast in (True, False):
        with pytest.raises(PtxSyntaxError) as ei:
            _Parser(text, "bad.ptx", fast=fast).module()
        errors.append(str(ei.value))
    assert errors[0] == errors[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream())
def test_agree_on_generated_streams(text):
    fast = parse_statements(text)
    p = _Parser(text, "t", fast=False)
    slow = []
    while not p.eof():
        slow.extend(p.statement())
    assert fast == slow and list(_lines(fast)) == list(_lines(slow))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("extra", [(), ("-lineinfo",)])
def test_agree_on_nvcc_output(extra):
    from kernelmill.ptx import NvccOptions, nvcc_ptx
    src = ("#include <cuda_fp16.h>\n__global__ void k(const __half2* x, __half2* y, float* z) {\n"
           "  float a = 0.f;\n  #pragma unroll\n  for (int i = 0; i < 16; ++i) {\n"
           "    y[i * 64 + threadIdx.x] = __hmul2(x[i * 64 + threadIdx.x], x[i]);\n"
           "    a += __shfl_down_sync(0xffffffff, a + i, 1 << (i % 5));\n  }\n"
           "  if (threadIdx.x == 0) atomicAdd(z, a);\n}\n")
    _both(nvcc_ptx(src, NvccOptions(extra=extra)))


def test_no_per_statement_line_search(monkeypatch):
    """The old parser found each statement's line by counting newlines from the
    start of the text (quadratic: 19 s for a 2.4 MB file). Parsing a valid file
    now never calls that search."""
    import kernelmill.ptx.parser as parser_mod
    import kernelmill.ptx.scan as scan_mod

    def forbidden(*a):
        raise AssertionError("line_col called while parsing valid PTX")

    monkeypatch.setattr(parser_mod, "line_col", forbidden)
    monkeypatch.setattr(scan_mod, "line_col", forbidden)
    body = "".join(f"\tadd.s32 \t%r{k + 1}, %r{k}, {k};\n\t.loc 1 {k} 2\n" for k in range(2000))
    m = parse_module(".version 8.4\n.target sm_90\n.entry k()\n{\n" + body + "\tret;\n}\n")
    instrs = [s for s in m.functions[0].body if isinstance(s, Instr)]
    assert len(instrs) == 2001 and instrs[-2].line == 4 + 2 * 2000 - 1


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='ab%$._ 09xXfFdDeE+-*/"\\\n\t{}[]();:,@!<>|&^~?=U', max_size=40))
def test_token_count_is_the_lexers(text):
    """count_tokens (one regex `findall`) counts what the lexer's token loop finds, comments
    and whitespace excluded, on any text, PTX or not."""
    from kernelmill.ptx.lexer import _RX

    assert count_tokens(text) == sum(1 for m in _RX.finditer(text) if m.lastgroup not in ("ws", "comment"))
    try:
        toks = tokenize(text)
    except PtxSyntaxError:
        return
    assert count_tokens(text) == sum(t.kind != "comment" for t in toks)


def test_a_repeated_instruction_line_is_read_once_and_keeps_its_own_line():
    # scan reads an instruction text it has seen from the first reading (the parts are
    # shared, immutable); each Instr still carries its own line number
    text = ".visible .entry k()\n{\n\tadd.f32 %f1, %f1, %f2;\n\tmov.u32 %r1, 3;\n\tadd.f32 %f1, %f1, %f2;\n\tret;\n}\n"
    body = _both(text).functions[0].body
    first, again = body[0], body[2]
    assert first == again and (first.line, again.line) == (3, 5)
    assert first.operands is again.operands


def test_a_repeated_loc_line_is_tokenized_once_and_read_alike(monkeypatch):
    # a -lineinfo unit repeats few `.loc` texts (28 distinct of 7,137 lines in ptx_parse_speed's
    # 2 MB unit): each distinct text goes through the lexer once, and the directives are the
    # token parser's, in their places
    import kernelmill.ptx.scan as scan_mod

    seen = []
    real = scan_mod._line_directive
    monkeypatch.setattr(scan_mod, "_line_directive", lambda line: seen.append(line) or real(line))
    body = "".join(f"\t.loc\t1 {k % 3} 2\n\tadd.s32 %r{k + 1}, %r{k}, 1;\n" for k in range(30))
    text = ".version 8.4\n.visible .entry k()\n{\n" + body + "\tret;\n}\n"
    m = _both(text)
    assert sorted(seen) == sorted({f".loc\t1 {k} 2" for k in range(3)})
    locs = [s for s in m.functions[0].body if not isinstance(s, Instr)]
    assert [d.tokens[2][0] for d in locs] == [str(k % 3) for k in range(30)]
