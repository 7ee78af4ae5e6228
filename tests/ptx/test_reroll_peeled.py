"""Peeled copies (session 21): the statements right after a loop (or right before it) that are its
body at the next copy (or copy -1) but for a few values are taken into the loop, with pinned values
or a table one value longer (kernelmill.ptx.peeled, a rewrite of the output)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from kernelmill.ptx import (
    Loop,
    RerollConfig,
    count_tokens,
    expand_stmts,
    fmt_stmts,
    parse_statements,
    reroll_stmts,
)
from kernelmill.ptx.peeled import rewrite


def _roundtrip(stmts, rolled):
    text = fmt_stmts(rolled)
    assert expand_stmts(parse_statements(text)) == expand_stmts(stmts)
    return text


def test_a_peeled_last_copy_of_an_accumulator_chain_is_taken_in():
    # cp_async_stage_dot<3, 512>: three copies rolled, the fourth writes the accumulator (%f2)
    loop = parse_statements("for.size.1 i in range(3):\n fma.rn.f32 %f28+i, %f12+i, %f20+i, %f27+i!73;")
    tail = parse_statements("fma.rn.f32 %f2, %f15, %f23, %f30;\nbar.sync 0;")
    out = rewrite(loop + tail)
    assert len(out) == 2 and isinstance(out[0], Loop) and out[0].trip == 4
    assert "%f28+i!3:2" in fmt_stmts(out)
    assert expand_stmts(out) == expand_stmts(loop + tail)
    assert count_tokens(fmt_stmts(out)) < count_tokens(fmt_stmts(loop + tail))
    _roundtrip(loop + tail, out)


def test_a_peeled_first_copy_is_taken_in_shifted_by_one_copy():
    head = parse_statements("mov.u32 %r1, %r40;\nadd.s32 %r9, %r8, 16;")
    loop = parse_statements("for.size.1 i in range(3):\n add.s32 %r10+i, %r8, 32+i*16;")
    out = rewrite(head + loop)
    assert len(out) == 2 and out[1].trip == 4
    assert "add.s32 \t%r9+i, %r8, 16+i*16;" in fmt_stmts(out)
    _roundtrip(head + loop, out)


def test_tables_grow_by_the_peeled_value_and_other_operands_stay():
    loop = parse_statements("for.size.1 i in range(3):\n mul.lo.s32 %r[5,9,2], %r7, [3,8,1];")
    tail = parse_statements("mul.lo.s32 %r11, %r7, 4;")
    out = rewrite(loop + tail)
    assert out[0].trip == 4 and "%r[5,9,2,11]" in fmt_stmts(out) and "[3,8,1,4]" in fmt_stmts(out)
    _roundtrip(loop + tail, out)


def test_what_is_not_a_copy_is_left():
    loop = parse_statements("for.size.1 i in range(3):\n add.f32 %f10+i, %f20+i, %f30;")
    for tail in ("sub.f32 %f13, %f23, %f30;",        # another opcode
                 "add.f32 %f13, %f23, 0f3F800000;",  # a literal where the body has a register
                 "add.f32 %rd13, %f23, %f30;"):      # another register kind
        stmts = loop + parse_statements(tail)
        assert rewrite(stmts) == stmts
    # a loop over another variable's terms is not touched (a pin would fix the outer copies too)
    nested = parse_statements("for.size.1 i in range(3):\n add.f32 %f10+i+j*4, %f20+i, %f30;\n"
                              "add.f32 %f1, %f23, %f30;")
    assert rewrite(nested) == nested


def test_peeled_copies_inside_an_outer_loop_take_its_terms():
    # the inner loop over i and its peeled last copy are rolled over j: the peeled copy's holes
    # that follow the inner model keep the outer terms; one that does not is left (no pin can
    # hold a term of j), so the whole copy is left
    inner = ("for.size.4 j in range(2):\n for.size.1 i in range(3):\n  fma.rn.f32 %f10+i+j*8, %f20+i+j*8, %f5, %f9+i+j*8;\n"
             " fma.rn.f32 %f13+j*8, %f23+j*8, %f5, %f12+j*8;\n st.shared.f32 [%r1+j*4], %f13+j*8;")
    stmts = parse_statements(inner)
    out = rewrite(stmts)
    text = fmt_stmts(out)
    assert "range(4)" in text and "%f10+i+j*8, %f20+i+j*8, %f5, %f9+i+j*8;" in text
    assert expand_stmts(out) == expand_stmts(stmts)
    off = parse_statements(inner.replace("%f23+j*8", "%f40+j*9"))
    assert expand_stmts(rewrite(off)) == expand_stmts(off) and "range(4)" not in fmt_stmts(rewrite(off))
    # parameter names take pinned numbers too; an address without an offset is offset 0
    loop = parse_statements("for.size.1 i in range(3):\n ld.param.u64 %rd3+i, [k_param_(1+i)];\n"
                            "for.size.1 i in range(3):\n ld.global.f32 %f1+i, [%rd8+4+i*4];")
    head = parse_statements("ld.param.u64 %rd9, [k_param_0];")
    tail = parse_statements("ld.global.f32 %f4, [%rd8];")
    out = rewrite(head + loop + tail)
    assert [s.trip for s in out] == [4, 4]
    assert expand_stmts(out) == expand_stmts(head + loop + tail)
    _roundtrip(head + loop + tail, out)


def test_a_peeled_copy_that_lacks_a_statement_is_taken_with_a_presence_guard():
    # depthwise_conv_k3_vectorized: copy 0 has no `add` (its offset is 0, the row is %r107 itself)
    head = parse_statements("setp.gt.s32 %p58, %r107, -1;\nsetp.lt.s32 %p59, %r107, %r91;\nand.pred %p1, %p58, %p59;")
    loop = parse_statements("for.size.4 i in range(2):\n add.s32 %r108+i, %r107+i, %r95;\n"
                            " setp.gt.s32 %p60+i*2, %r108+i, -1;\n setp.lt.s32 %p61+i*2, %r108+i, %r91;\n"
                            " and.pred %p2+i, %p60+i*2, %p61+i*2;")
    out = rewrite(head + loop)
    text = fmt_stmts(out)
    assert len(out) == 1 and out[0].trip == 3 and "@0+i add.s32" in text
    _roundtrip(head + loop, out)
    assert rewrite(head + loop, presence=False) == head + loop
    # a shuffle ladder's last copy reuses the offset register the copies before loaded
    loop = parse_statements("for.size.3 i in range(3):\n mov.u32 %r45+i*3, 16-i*4;\n"
                            " shfl.sync.down.b32 %r46+i*3, %r44+i*3, %r45+i*3, 31, -1;\n"
                            " add.f32 %f57+i*2, %f55+i*2, %f56+i*2;")
    tail = parse_statements("shfl.sync.down.b32 %r55, %r53, %r42, 31, -1;\nadd.f32 %f63, %f61, %f62;")
    out = rewrite(loop + tail)
    assert len(out) == 1 and out[0].trip == 4 and "@3-i mov.u32" in fmt_stmts(out)
    _roundtrip(loop + tail, out)


def test_a_peeled_copy_with_one_statement_more_keeps_it_in_its_copy_alone():
    head = parse_statements("add.s32 %r10, %r1, 4;\nmov.u32 %r5, 0;\nst.shared.u32 [%r2], %r10;")
    loop = parse_statements("for.size.2 i in range(3):\n add.s32 %r11+i, %r1, 8+i*4;\n"
                            " st.shared.u32 [%r2+4+i*4], %r11+i;")
    out = rewrite(head + loop)
    text = fmt_stmts(out)
    assert len(out) == 1 and out[0].trip == 4 and "@1-i mov.u32 \t%r5, 0;" in text
    _roundtrip(head + loop, out)
    tail = parse_statements("add.s32 %r14, %r1, 20;\nmov.u32 %r5, 0;\nst.shared.u32 [%r2+16], %r14;")
    out = rewrite(loop + tail)
    assert len(out) == 1 and out[0].trip == 4 and "@-2+i mov.u32" in fmt_stmts(out)
    _roundtrip(loop + tail, out)
    assert rewrite(loop + tail, presence=False) == loop + tail


@settings(max_examples=150, deadline=None)
@given(copies=st.integers(2, 8),
       body=st.lists(st.tuples(st.sampled_from(["add.s32", "mul.lo.s32", "ld.shared.u32", "fma.rn.f32"]),
                               st.integers(0, 40), st.sampled_from([0, 1, 2, 4, -1])), min_size=1, max_size=3),
       last=st.dictionaries(st.integers(0, 8), st.integers(0, 300), max_size=3),
       first=st.dictionaries(st.integers(0, 8), st.integers(0, 300), max_size=2),
       chain=st.booleans(), lack=st.sets(st.integers(0, 5), max_size=2),
       extra=st.sampled_from([None, (0, 0), (0, 1), (1, 0), (1, 2)]))
def test_chains_with_peeled_copies_roll_losslessly_and_never_longer(copies, body, last, first, chain, lack, extra):
    # each statement `op %rD, %rS, %rT` (fma: four operands); the last copy's holes in `last` and
    # copy 0's in `first` are off the model; `chain`: each copy's source is the previous copy's
    # destination (an accumulator), so copy 0 reads a register from before and the last writes one;
    # `lack`: statements a peeled copy lacks; `extra`: a statement only copy 0 or the last has
    lines = []
    for t in range(copies):
        for k, (op, b, d) in enumerate(body):
            dst = 100 + 10 * k + b + t * (d or 1)
            vals = [dst, (dst - (d or 1)) if chain else b + 50 + t * d, b + t * 4, 7]
            for h, v in (last.items() if t == copies - 1 else first.items() if t == 0 else ()):
                if h // 3 == k:
                    vals[h % 3] = v
            n = 4 if op.startswith("fma") else 3
            if extra is not None and t == (copies - 1) * extra[0] and k == extra[1]:  # one statement more
                lines.append("mov.u32 %r999, 0;")
            if t in (0, copies - 1) and (k + 3 * (t > 0)) in lack:  # a peeled copy that lacks it
                continue
            lines.append(f"{op} " + ", ".join(f"%r{v}" for v in vals[:n]) + ";")
    lines.append("bar.sync 0;")
    stmts = parse_statements("\n".join(lines))
    for cfg in (RerollConfig(), RerollConfig(firsts=False)):
        rolled = reroll_stmts(stmts, cfg)
        text = _roundtrip(stmts, rolled)
        assert count_tokens(text) <= count_tokens(fmt_stmts(stmts))
    # the rewrite alone, on the rolled output: exact and never longer
    base = reroll_stmts(stmts, RerollConfig(firsts=False))
    again = rewrite(base)
    assert expand_stmts(again) == expand_stmts(base)
    assert count_tokens(fmt_stmts(again)) <= count_tokens(fmt_stmts(base))
