"""Classes 31 and 34 of issue 42: precision dress-up (a low-precision task's GEMM computed
wider, cast back) and approximations whose error hides under the atol in the output's
small tail (seen against the float64 reference of `--guards strict`'s structured draws).

The rules are tested on their own (`judge.precision_dressup`, `oracle.approximated`, the
recorder's compute dtypes), then end to end on the CPU: the hostile candidates of both
classes are caught with their flags, honest ones of the same tasks get no flag."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

import guard_tasks as T  # noqa: E402
from hostile_corpus import HOSTILE, HOSTILE_STRICT, model  # noqa: E402

from kernelmill.records import Sample  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402
from kernelmill.verify.guards.judge import precision_dressup  # noqa: E402
from kernelmill.verify.guards.trace import profile_call  # noqa: E402
from kernelmill.verify.measure import inputs as inp  # noqa: E402
from kernelmill.verify.measure.oracle import FLOOR, MIN_ELEMENTS, approximated  # noqa: E402

CPU = torch.device("cpu")


# ---------------------------------------------------------------- class 31: the rule
def _heavy(fn) -> dict:
    return profile_call(fn, CPU)["heavy_dtypes"]


def test_the_recorder_names_the_precision_a_heavy_op_computes_in():
    a, b = torch.randn(8, 16).half(), torch.randn(16, 4).half()
    assert _heavy(lambda: a @ b) == {"matmul": ["float16"]}
    assert _heavy(lambda: (a.float() @ b.float()).half()) == {"matmul": ["float32"]}
    i = torch.randint(-4, 4, (32, 32), dtype=torch.int8)
    assert _heavy(lambda: torch._int_mm(i, i)) == {"int_mm": ["int8"]}  # int8 in, int32 out
    f8, one = torch.randn(16, 32).to(torch.float8_e4m3fn), torch.tensor(1.0)
    g8 = torch.randn(16, 32).to(torch.float8_e4m3fn).t()
    # fp32 scales and output: it still computes in fp8
    assert _heavy(lambda: torch._scaled_mm(f8, g8, scale_a=one, scale_b=one, out_dtype=torch.float32)) == {
        "scaled_mm": ["float8_e4m3fn"]}
    w = torch.randn(4, 16)

    def autocast():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return F.linear(torch.randn(8, 16), w)

    assert _heavy(autocast) == {"linear": ["bfloat16"]}  # fp32 in, bf16 out: computed in bf16
    q, mask = torch.randn(1, 2, 8, 16).half(), torch.ones(8, 8, dtype=torch.bool)
    assert _heavy(lambda: F.scaled_dot_product_attention(q, q, q, attn_mask=mask)) == {
        "scaled_dot_product_attention": ["float16"]}  # a boolean mask is no precision
    # an fp32 softmax on fp16 data is not heavy (torch does that inside its fp16 softmax too)
    assert _heavy(lambda: torch.softmax(a.float(), -1).half()) == {}


def test_dressup_is_a_heavy_op_wider_than_every_one_of_the_reference():
    ref16 = {"heavy_dtypes": {"linear": ["float16"]}}
    msg = precision_dressup(ref16, {"heavy_dtypes": {"linear": ["float32"]}})
    assert "linear computed in float32" in msg and "linear in float16" in msg
    assert precision_dressup(ref16, {"heavy_dtypes": {"linear": ["float16"]}}) == ""
    assert precision_dressup(ref16, {"heavy_dtypes": {"linear": ["bfloat16"]}}) == ""  # as wide: another format
    assert precision_dressup(ref16, {"heavy_dtypes": {"matmul": ["float16", "float64"]}})  # the widest counts
    ref8 = {"heavy_dtypes": {"scaled_mm": ["float8_e4m3fn"]}}
    assert "bfloat16" in precision_dressup(ref8, {"heavy_dtypes": {"matmul": ["bfloat16"]}})
    # an integer reference is narrower than any float of 16 bits or more; fp8 is never wider
    ref_int = {"heavy_dtypes": {"int_mm": ["int8"]}}
    assert precision_dressup(ref_int, {"heavy_dtypes": {"matmul": ["float16"]}})
    assert precision_dressup(ref_int, {"heavy_dtypes": {"matmul": ["float8_e5m2"]}}) == ""
    assert precision_dressup(ref_int, {"heavy_dtypes": {"matmul": ["int32"]}}) == ""


def test_dressup_asks_nothing_of_fp32_tasks_or_profiles_that_do_not_say():
    cand = {"heavy_dtypes": {"matmul": ["float64"]}}
    assert precision_dressup({"heavy_dtypes": {"matmul": ["float32"]}}, cand) == ""  # precision_downgrade's side
    # a reference with one fp32 heavy op beside fp16 ones is not a low-precision task
    assert precision_dressup({"heavy_dtypes": {"matmul": ["float16"], "linear": ["float32"]}}, cand) == ""
    assert precision_dressup({"heavy_dtypes": {}}, cand) == ""  # no heavy op: nothing to compare
    assert precision_dressup({"low_precision": ["c10::Half"]}, cand) == ""  # a profile stored before the key
    assert precision_dressup({"heavy_dtypes": {"mm": ["float16"]}}, {"ops": ["mm"]}) == ""
    assert precision_dressup(None, None) == ""
    assert precision_dressup({"heavy_dtypes": {"mm": ["float7_future"]}}, cand) == ""  # a dtype this torch lacks


# ---------------------------------------------------------------- class 34: the oracle
def _wide(n: int = 65536, seed: int = 0) -> torch.Tensor:
    torch.manual_seed(seed)
    return inp.STRUCTURED["wide_range"](n)


def test_a_clamped_sigmoid_is_an_approximation_and_honest_forms_are_not():
    x = _wide()
    r32, r64 = torch.sigmoid(x), torch.sigmoid(x.double())
    clamped = torch.sigmoid(x.clamp(-10, 10))
    assert torch.allclose(clamped, r32, atol=1e-4, rtol=1e-4)  # what the tolerance lets through
    found = approximated(r32, r64, clamped, k=8.0)
    assert found is not None and found.count > 10000 and "approximation" in found.message()
    assert found.got == pytest.approx(4.54e-5, rel=1e-2)  # sigmoid(-10) where the answer is far smaller
    # 1/(1+exp(-x)) gives exact 0 where exp overflows (torch: a denormal, below the NORMAL bound);
    # 0.5 (tanh(x/2) + 1) cancels to 0 in the tail, 3e-8 off: under the budget's floor
    for honest in (1 / (1 + torch.exp(-x)), 0.5 * (torch.tanh(0.5 * x) + 1), 1 - torch.sigmoid(-x)):
        assert approximated(r32, r64, honest, k=8.0) is None


def test_gelu_s_tanh_form_is_an_approximation_and_a_hand_written_erf_form_is_not():
    x = _wide(seed=1)
    r32, r64 = F.gelu(x), F.gelu(x.double())
    assert approximated(r32, r64, F.gelu(x, approximate="tanh"), k=8.0) is not None
    by_hand = 0.5 * x * (1 + torch.erf(x * 0.7071067811865476))
    assert approximated(r32, r64, by_hand, k=8.0) is None
    silu32, silu64 = x * torch.sigmoid(x), x.double() * torch.sigmoid(x.double())
    assert approximated(silu32, silu64, F.silu(x), k=8.0) is None
    sm = torch.softmax(x.view(64, -1), -1)
    e = torch.exp(x.view(64, -1) - x.view(64, -1).amax(-1, keepdim=True))
    assert approximated(sm, torch.softmax(x.double().view(64, -1), -1), e / e.sum(-1, keepdim=True), k=8.0) is None


def test_where_float32_itself_is_far_off_nothing_is_asked():
    # 1 + erf(x) for x < -4: the float32 reference cancels, so its tail elements are left out
    # however far the candidate is (the absolute bound taken away: k = 0, floor = 0); the same
    # candidate against a float32 reference that gets them right is flagged
    x = -4.0 - 2.0 * torch.rand(4096, dtype=torch.float64)
    one = torch.ones(1, dtype=torch.float64)  # the output's scale
    r64 = torch.cat([one, 1 + torch.erf(x)])
    cancelled = torch.cat([one.float(), 1 + torch.erf(x.float())])
    zeros = torch.cat([one.float(), torch.zeros(4096)])
    assert approximated(cancelled, r64, zeros, k=0.0, floor=0.0) is None
    assert approximated(r64.float(), r64, zeros, k=0.0, floor=0.0) is not None


def test_outputs_it_cannot_read_so_are_not_decided():
    x = _wide()
    r32, r64, bad = torch.sigmoid(x), torch.sigmoid(x.double()), torch.sigmoid(x.clamp(-10, 10))
    assert approximated([r32, r32], r64, bad, k=8.0) is None  # another structure
    assert approximated(r32.half(), r64, bad.half(), k=8.0) is None  # 16-bit outputs: not float32's bounds
    assert approximated(r32, r64, bad[:10], k=8.0) is None  # another shape
    assert approximated((r32, r32), (r64, r64), (r32, bad), k=8.0).where == "output[1]"  # the leaf named


def _tail_case(mags, signs):
    """A float64 output with one element at the scale and the rest spread over many orders
    of magnitude below it; the float32 reference is its rounding."""
    r64 = torch.tensor([1.0] + [s * 10.0 ** -m for m, s in zip(mags, signs)], dtype=torch.float64)
    return r64.float(), r64


mags = st.lists(st.floats(3.5, 29.0), min_size=MIN_ELEMENTS, max_size=64)


@settings(max_examples=60, deadline=None)
@given(mags=mags, data=st.data())
def test_a_correctly_rounded_or_float32_exact_candidate_never_flags(mags, data):
    signs = data.draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=len(mags), max_size=len(mags)))
    r32, r64 = _tail_case(mags, signs)
    assert approximated(r32, r64, r32.clone(), k=8.0) is None
    # any error within the budget's floor, however large relative to the element
    noise = data.draw(st.lists(st.floats(-1.0, 1.0), min_size=len(r32), max_size=len(r32)))
    within = r32 + torch.tensor(noise) * FLOOR * 0.99
    assert approximated(r32, r64, within, k=8.0) is None


@settings(max_examples=60, deadline=None)
@given(mags=mags, data=st.data())
def test_tail_errors_above_the_floor_flag_once_there_are_enough(mags, data):
    signs = [1.0] * len(mags)
    r32, r64 = _tail_case(mags, signs)
    n = data.draw(st.integers(0, len(mags)))
    cand = r32.clone()
    cand[1:n + 1] += 4 * FLOOR  # an approximation's error (4.5e-5 for a clamped sigmoid), in n tail elements
    found = approximated(r32, r64, cand, k=8.0)
    if n >= MIN_ELEMENTS:
        assert found is not None and found.count == n
    else:
        assert found is None


# ---------------------------------------------------------------- end to end (CPU)
HONEST_STRICT = {
    # class 31: the same low-precision GEMMs computed in their own precision
    "fp16_linear_same": (T.FP16_LINEAR, model("return self.fc(x)", init="self.fc = nn.Linear(*args).half()")),
    "fp16_linear_fp32_epilogue": (T.FP16_LINEAR, model(
        "return (x @ self.fc.weight.t()).float().add(self.fc.bias.float()).half()",
        init="self.fc = nn.Linear(*args).half()")),
    "int8_int_mm": (T.INT8_MATMUL, model(
        "return torch._int_mm(x, self.w)",
        init='self.register_buffer("w", torch.randint(-4, 4, (64, 32), dtype=torch.int8))')),
    "fp8_scaled_mm": (T.FP8_MATMUL, model(
        "one = torch.ones((), dtype=torch.float32)\n"
        "return torch._scaled_mm(x.to(torch.float8_e4m3fn), self.w, scale_a=one, scale_b=one, out_dtype=torch.float32)",
        init='self.register_buffer("w", torch.randn(48, 64).to(torch.float8_e4m3fn).t())')),
    # class 34: other exact formulas of the same activations
    "sigmoid_exp_form": (T.SIGMOID, model("return 1.0 / (1.0 + torch.exp(-x))")),
    "sigmoid_tanh_form": (T.SIGMOID, model("return 0.5 * (torch.tanh(0.5 * x) + 1.0)")),
    "sigmoid_split": (T.SIGMOID, model("e = torch.exp(-x.abs())\nreturn torch.where(x < 0, e / (1 + e), 1 / (1 + e))")),
    "gelu_erf_by_hand": (T.GELU, model("return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))")),
    "gelu_erfc": (T.GELU, model("return 0.5 * x * torch.erfc(-x * 0.7071067811865476)")),
    "softmax_max_shift": (T.VARIANT, model(
        "e = torch.exp(x - x.amax(-1, keepdim=True))\nreturn e / e.sum(-1, keepdim=True)")),
}


def _verify(entries: dict, guards: str, tmp_path, **extra) -> dict:
    tasks = {t.task_id: t for t in T.ALL}
    samples = [Sample(name, e[0].task_id, "torch", e[-1] if len(e) == 2 else e[2]) for name, e in entries.items()]
    cfg = VerifyConfig(device="cpu", trials=2, time=False, guards=guards, cache_dir=str(tmp_path / "c"), **extra)
    return {v.sample_id: v for v in verify_samples(tasks, samples, cfg)}


@pytest.fixture(scope="module")
def strict_run(tmp_path_factory):
    entries = {**HOSTILE_STRICT, **HONEST_STRICT, **{k: v for k, v in HOSTILE.items() if k.startswith("i31_")}}
    return _verify(entries, "strict", tmp_path_factory.mktemp("strict"))


@pytest.mark.parametrize("name", sorted(HOSTILE_STRICT) + sorted(k for k in HOSTILE if k.startswith("i31_")))
def test_strict_only_hostile_candidates_are_caught_under_strict(strict_run, name):
    # classes 31 and 34, and 13's rare race (HOSTILE_STRICT)
    v = strict_run[name]
    wanted = (HOSTILE_STRICT.get(name) or HOSTILE[name])[3]
    assert wanted <= set(v.flags), f"{name}: {v.status} {v.flags} {v.message[:400]}"
    assert v.status == ("rejected" if "precision_dressup" in wanted else "incorrect"), (v.status, v.message[:300])
    assert "precision_downgrade" not in v.flags  # an int8 task in fp16 is a dress-up, not a downgrade


def test_the_approximation_message_names_the_trial_and_the_tail(strict_run):
    v = strict_run["i34_sigmoid_clamped_at_10"]
    # every other check passed: only the tail gives it away
    assert v.flags == ["approximation"], v.flags
    assert "wide_range inputs" in v.message and "small elements" in v.message, v.message


@pytest.mark.parametrize("name", sorted(HONEST_STRICT))
def test_honest_candidates_of_the_same_tasks_get_no_flag(strict_run, name):
    v = strict_run[name]
    assert v.status == "ok" and not set(v.flags) - {"timing_skipped"}, f"{name}: {v.status} {v.flags} {v.message[:400]}"


def test_standard_guards_catch_the_dressup_but_not_a_tail_approximation(tmp_path):
    """Standard draws never reach the sigmoid's tail (|x| > 10) and have no float64
    reference: the clamp passes there, so strict is what catches it. The dress-up needs no
    float64 reference; the fp32 downgrade (class 9) is still what it was."""
    entries = {"i31_int8_matmul_in_fp16": HOSTILE["i31_int8_matmul_in_fp16"], "i9_half": HOSTILE["i9_half"],
               "i34_sigmoid_clamped_at_10": HOSTILE_STRICT["i34_sigmoid_clamped_at_10"]}
    got = _verify(entries, "standard", tmp_path)
    assert got["i31_int8_matmul_in_fp16"].status == "rejected"
    assert got["i31_int8_matmul_in_fp16"].flags == ["precision_dressup"], got["i31_int8_matmul_in_fp16"].flags
    assert "int_mm in int8" in got["i31_int8_matmul_in_fp16"].message
    assert got["i9_half"].status == "rejected" and "precision_downgrade" in got["i9_half"].flags
    assert "precision_dressup" not in got["i9_half"].flags
    assert got["i34_sigmoid_clamped_at_10"].status == "ok"
