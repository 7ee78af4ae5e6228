"""Rerolling: expand(reroll(P)) == P on every stream; loops found and nested."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmill.ptx import (Loop, count_tokens, expand_stmts, fmt_stmts, parse_statements,
                            reroll_stmts, RerollConfig, RerollStats)
from kernelmill.ptx.expand import expand_text
from kernelmill.ptx.reroll import reroll_text

OPS = ["add.s32", "ld.shared.f32", "fma.rn.f32", "mul.wide.u32", "st.global.f32", "mov.u32"]
PREFIX = ["%r", "%f", "%rd", "%p"]


@st.composite
def hole(draw):
    kind = draw(st.sampled_from(["reg", "reg", "imm", "addr", "vec", "const"]))
    base = draw(st.integers(0, 40))
    delta = draw(st.sampled_from([0, 0, 1, 2, 3, -1, 64, -4]))
    return kind, draw(st.sampled_from(PREFIX)), base, delta


def render(op, holes, t, perturb):
    ops = []
    for kind, prefix, base, delta in holes:
        v = base + t * delta + perturb
        if kind == "reg":
            ops.append(f"{prefix}{abs(v)}")
        elif kind == "imm":
            ops.append(str(v))
        elif kind == "addr":  # nvcc style: no offset when 0, `+-4` when negative
            ops.append("[%rd7]" if v == 0 else f"[%rd7+{v}]")
        elif kind == "vec":
            ops.append("{" + f"{prefix}{abs(v)}, {prefix}{abs(v) + 1}" + "}")
        else:
            ops.append("0f3F800000")
    guard = "@%p1 " if len(holes) % 3 == 0 else ""
    return f"{guard}{op} " + ", ".join(ops) + ";"


@st.composite
def stream(draw):
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            body = [(draw(st.sampled_from(OPS)), draw(st.lists(hole(), min_size=1, max_size=4)))
                    for _ in range(draw(st.integers(1, 4)))]
            copies = draw(st.integers(2, 9))
            bad = draw(st.integers(-1, copies - 1))  # one copy that breaks linearity
            for t in range(copies):
                for op, holes in body:
                    lines.append(render(op, holes, t, 5 if t == bad else 0))
        else:
            lines.append(render(draw(st.sampled_from(OPS)), draw(st.lists(hole(), min_size=1, max_size=3)), 0, 0))
        if draw(st.booleans()):
            lines.append("bar.sync 0;")
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream())
def test_expand_reroll_is_identity(text):
    stmts = parse_statements(text)
    stats = RerollStats()
    rolled = reroll_stmts(stmts, stats=stats)
    assert expand_stmts(rolled) == stmts
    # and through the Rolled-PTX text: print, parse, expand
    assert expand_stmts(parse_statements(fmt_stmts(rolled))) == stmts
    # a loop is only applied when it shortens the text
    assert count_tokens(fmt_stmts(rolled)) <= count_tokens(fmt_stmts(stmts))


def test_unrolled_loop_is_found_and_shortened():
    lines = []
    for t in range(16):
        lines += [f"ld.shared.f32 %f{8 + 3 * t}, [%r8+{64 * t}];",
                  f"ld.shared.f32 %f{9 + 3 * t}, [%r7+{4 * t}];",
                  f"fma.rn.f32 %f{10 + 3 * t}, %f{9 + 3 * t}, %f{8 + 3 * t}, %f{7 + 3 * t};"]
    stmts = parse_statements("\n".join(l.replace("+0]", "]") for l in lines))
    rolled = reroll_stmts(stmts)
    assert len(rolled) == 1 and isinstance(rolled[0], Loop)
    assert (rolled[0].trip, rolled[0].size) == (16, 3)
    text = fmt_stmts(rolled)
    assert "%f8+i*3" in text and "[%r8+0+i*64]" in text and "[%r7+0+i*4]" in text
    assert "range(16):" in text
    assert count_tokens(text) < 0.25 * count_tokens(fmt_stmts(stmts))


def test_nested_unroll_folds_into_two_loops():
    lines = []
    for r in range(4):      # rows with a stride that is not a multiple of the row length
        for c in range(8):
            lines += [f"ld.global.f32 %f{1 + 2 * (8 * r + c)}, [%rd1+{4096 * r + 4 * c}];",
                      f"add.f32 %f{2 + 2 * (8 * r + c)}, %f{1 + 2 * (8 * r + c)}, %f100;"]
    stmts = parse_statements("\n".join(lines).replace("+0]", "]"))  # nvcc writes [%rd1]
    rolled = reroll_stmts(stmts)
    assert expand_stmts(rolled) == stmts
    (outer,) = rolled
    assert isinstance(outer, Loop) and isinstance(outer.body[0], Loop)
    assert (outer.trip, outer.body[0].trip) == (4, 8)
    assert "4096" in fmt_stmts(rolled) and "+j*" in fmt_stmts(rolled)


def test_peeled_first_iteration_does_not_hide_the_loop():
    # the first copy reads a different accumulator (as nvcc emits for acc += ...)
    lines = ["fma.rn.f32 %f10, %f9, %f8, %f56;"]
    lines += [f"fma.rn.f32 %f{10 + t}, %f9, %f8, %f{9 + t};" for t in range(1, 12)]
    stmts = parse_statements("\n".join(lines))
    rolled = reroll_stmts(stmts, RerollConfig(firsts=False))
    assert isinstance(rolled[1], Loop) and rolled[1].trip == 11
    # since session 16 copy 0 joins the loop with a first value: `%f9+i!56`
    rolled = reroll_stmts(stmts)
    assert len(rolled) == 1 and rolled[0].trip == 12 and "%f9+i!56" in fmt_stmts(rolled)
    assert expand_stmts(rolled) == stmts


def test_explicit_zero_offset_and_nonlinear_values_stay_exact():
    text = "\n".join(["ld.f32 %f1, [%rd1+0];", "ld.f32 %f2, [%rd1+4];", "ld.f32 %f3, [%rd1+8];",
                      "ld.f32 %f4, [%rd1+16];", "ld.f32 %f5, [%rd1+20];", "ld.f32 %f6, [%rd1+24];",
                      "ld.f32 %f7, [%rd1+28];"])
    stmts = parse_statements(text)
    assert expand_stmts(reroll_stmts(stmts)) == stmts


def test_module_text_round_trip(tmp_path):
    ptx = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 p\n)\n{\n"
           + "\n".join(f"\tadd.s32 %r{t + 2}, %r1, {t * 32};" for t in range(10)) + "\n\tret;\n}\n")
    rolled = reroll_text(ptx)
    assert "for.size.1" in rolled
    assert expand_text(rolled) == expand_text(ptx)  # both canonical plain PTX
