"""Runs of kernel-parameter loads roll (issue 44, session 8): `k_param_N` is a numbered hole.

Every kernel starts by loading its parameters one by one; three or more of the same type in a
row (`ld.param.u64 %rd1, [k_param_0]` ...) are a loop whose parameter index is linear (or a
table where nvcc numbered the registers out of order). Written long, `k_param_(2+i)`, since
`k_param_2+i` inside brackets would read as an address offset."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmill.ptx import RerollStats, count_tokens, expand_stmts, fmt_stmts, parse_statements, reroll_stmts
from kernelmill.ptx.holes import split
from kernelmill.ptx.syntax import Loop

_NAMES = st.sampled_from(["_Z6kernelPKfPfi_param_", "fused_ops_half_param_", "k_param_", "_Z3fooIfEvPT_S1_ii_param_"])
_TYPES = st.sampled_from([("u64", "%rd"), ("u32", "%r"), ("f32", "%f")])


def _roundtrip(text: str) -> tuple[list, list]:
    stmts = parse_statements(text)
    st_ = RerollStats()
    rolled = reroll_stmts(stmts, stats=st_)
    # the printed Rolled-PTX reads back to the same tree, and expands to the input
    again = parse_statements(fmt_stmts(rolled))
    assert again == rolled
    assert expand_stmts(again) == stmts
    return stmts, rolled


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_NAMES, _TYPES, st.integers(0, 6), st.integers(3, 12), st.integers(1, 40), st.booleans(), st.randoms())
def test_param_load_runs_roll_losslessly_and_shrink(name, typ, first, n, reg0, shuffle, rnd):
    ty, prefix = typ
    regs = list(range(reg0, reg0 + n))
    if shuffle:  # nvcc sometimes numbers the registers out of parameter order
        rnd.shuffle(regs)
    lines = [f"ld.param.{ty} \t{prefix}{r}, [{name}{first + k}];" for k, r in enumerate(regs)]
    text = "\n".join(["mov.u32 \t%r99, %tid.x;", *lines, "add.s32 \t%r98, %r99, 1;"]) + "\n"
    stmts, rolled = _roundtrip(text)
    if not shuffle or n >= 6:  # a shuffled short run may not pay for its register table
        assert any(isinstance(s, Loop) for s in rolled)
        assert count_tokens(fmt_stmts(rolled)) < count_tokens(fmt_stmts(stmts))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_NAMES, st.integers(0, 30), _TYPES), min_size=1, max_size=14))
def test_any_mix_of_param_loads_round_trips(loads):
    text = "\n".join(f"ld.param.{ty} \t{p}{k}, [{name}{i}];" for k, (name, i, (ty, p)) in enumerate(loads)) + "\n"
    _roundtrip(text)


def test_param_symbol_is_a_hole_but_other_names_are_not():
    a = parse_statements("ld.param.u64 \t%rd1, [k_param_0];\n")[0]
    b = parse_statements("ld.param.u64 \t%rd2, [k_param_1];\n")[0]
    assert split(a)[0] == split(b)[0] and split(a)[1] != split(b)[1]
    # a leading zero, or a name that only ends in a number, keeps its name in the skeleton
    for other in ("k_param_01", "smem_buf2", "param_3"):
        s = parse_statements(f"ld.shared.u64 \t%rd1, [{other}];\n")[0]
        assert split(s)[1] == (1, 0), other  # the register and the (absent) offset only
        assert other in repr(split(s)[0])


def test_rolled_param_loads_print_the_long_form():
    text = "".join(f"ld.param.u32 \t%r{8 + k}, [fused_ops_half_param_{2 + k}];\n" for k in range(5))
    _, rolled = _roundtrip(text)
    out = fmt_stmts(rolled)
    assert "[fused_ops_half_param_(2+i)]" in out and "%r8+i" in out
