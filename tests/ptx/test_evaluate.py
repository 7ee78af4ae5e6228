"""`kernelmill ptx evaluate` on a CPU machine: configs, harnesses (nvcc builds
where nvcc exists), metrics, CodeBLEU parts, candidate sets, resume, the CLI
saying runs were not run, and pairs -> generate (fake server) -> evaluate."""

from __future__ import annotations

import json
import math
import shutil

import pytest
import torch
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.ptx.evaluate import codebleu as cb
from kernelmill.ptx.evaluate.candidates import NoStore, make_candidates, perturb
from kernelmill.ptx.evaluate.config import (ConfigError, KernelConfig, config_from_meta, derive_config,
                                            eval_launch_expr, pair_config)
from kernelmill.ptx.evaluate.harness import Builder, harness_source
from kernelmill.ptx.evaluate.metrics import (efficiency_deviation, latency_deviation, normalised_error,
                                             summarize)
from kernelmill.records import Pair, read_jsonl, write_jsonl

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

from ptx_eval_support import ADD, SCALE, _cfg, add_pair, scale_pair  # noqa: E402


# --- configs ---------------------------------------------------------------------------

def test_stored_config_is_read_and_checked():
    cfg = pair_config(add_pair())
    assert cfg.kernel == "add_k" and [p.role for p in cfg.params] == ["in", "in", "out"]
    assert cfg.grid == [8, 1, 1] and [p.name for p in cfg.outputs] == ["out"]
    assert KernelConfig.from_dict(cfg.to_dict()).to_dict() == cfg.to_dict()
    with pytest.raises(ConfigError, match="grid must be"):
        config_from_meta(_cfg([{"name": "x", "shape": [4], "dtype": "float32", "role": "in"}], [0], [1]), "k")
    with pytest.raises(ConfigError, match="unknown dtype"):
        config_from_meta(_cfg([{"name": "x", "shape": [4], "dtype": "complex32", "role": "in"}], [1], [1]), "k")
    with pytest.raises(ConfigError, match="role must be"):
        config_from_meta(_cfg([{"name": "x", "shape": [4], "dtype": "float32", "role": "both"}], [1], [1]), "k")


def test_config_derived_from_a_launch_site():
    src = ("__global__ void saxpy(const float* x, float* y, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += 2.0f * x[i]; }\n")
    cfg = derive_config(src, "saxpy", {"grid": "(size + 255) / 256", "block": "256",
                                       "args": ["a.data_ptr<float>()", "b.data_ptr<float>()", "size"]})
    n = cfg.params[2].value
    assert cfg.derived and cfg.params[2].role == "scalar" and n == 1 << 22
    assert cfg.grid == [(n + 255) // 256, 1, 1] and cfg.block == [256, 1, 1]
    assert cfg.params[0].role == "in" and cfg.params[1].role == "out" and cfg.params[1].init == "zero"
    assert cfg.params[1].numel == n
    two = derive_config("__global__ void mm(const float* a, float* c, int rows, int cols) {}", "mm",
                        {"grid": "dim3((cols + 15) / 16, (rows + 15) / 16)", "block": "dim3(16, 16)",
                         "args": ["p", "q", "r", "k"]})
    s = two.params[2].value
    assert s ** 2 <= 1 << 22 and two.params[0].numel == s * s and two.grid == [(s + 15) // 16] * 2 + [1]


@pytest.mark.parametrize("src,launch,why", [
    ("__global__ void k(float* x, int n) {}", None, "no launch site"),
    ("__global__ void k(float* x, int n) {}", {"grid": "blocks", "block": "256", "args": ["x", "n"]},
     "unknown value 'blocks'"),
    ("struct S { int a; };\n__global__ void k(float* x, S s) {}", {"grid": "1", "block": "1", "args": ["x", "s"]},
     "not an integer"),
    ("template <typename T> __global__ void k(T* x, int n) {}", {"grid": "1", "block": "1", "args": ["x", "n"]},
     "template"),
    ("__global__ void k(float* x, int n) {}", {"grid": "n / 256", "block": "256", "args": ["x", "x.numel()"]},
     "is an expression"),
])
def test_no_configuration_reasons(src, launch, why):
    with pytest.raises(ConfigError, match=why):
        derive_config(src, "k", launch)


def test_launch_expressions():
    assert eval_launch_expr("(n + 255) / 256", {"n": 1000}) == 4
    assert eval_launch_expr("std::min(n, 1024u)", {"n": 4096}) == 1024
    assert eval_launch_expr("dim3(n / 32, (int)m)", {"n": 64, "m": 3}) == [2, 3]
    assert eval_launch_expr("n > 512 ? 512 : n", {"n": 100}) == 100
    with pytest.raises(ConfigError):
        eval_launch_expr("__import__('os')", {})


# --- harness ----------------------------------------------------------------------------

def test_harness_source_launches_with_the_config():
    cfg = pair_config(add_pair())
    text = harness_source(ADD, cfg)
    assert 'extern "C" int kmh_launch(void* const* args, void* stream)' in text
    assert "add_k<<<dim3(8, 1, 1), dim3(128, 1, 1), 0, (cudaStream_t)stream>>>" in text
    assert "kmh_detail::Ptr{args[2]}" in text and ADD.strip() in text
    big = KernelConfig.from_dict({**cfg.to_dict(), "shared_mem": 100 * 1024})
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize, 102400" in harness_source(ADD, big)
    scal = derive_config("__global__ void k(float* x, long long n) {}", "k",
                         {"grid": "1", "block": "32", "args": ["x", "n"]})
    assert f"((long long){scal.params[1].value}LL)" in harness_source("__global__ void k(float* x, long long n) {}", scal)


@needs_nvcc
def test_builds_are_content_addressed_and_failures_remembered(tmp_path):
    b = Builder(tmp_path / "build")
    cfg = pair_config(add_pair())
    first = b.build(harness_source(ADD, cfg))
    assert first.ok and not first.cached and first.so.endswith(".so")
    again = b.build(harness_source(ADD, cfg))
    assert again.ok and again.cached and again.so == first.so
    half = b.build(harness_source(SCALE, pair_config(scale_pair())))
    assert half.ok, half.error
    bad = b.build(harness_source(ADD.replace("a + b", "a + undeclared"), cfg))
    assert not bad.ok and "undeclared" in bad.error and "harness.cu" in bad.error
    assert b.build(harness_source(ADD.replace("a + b", "a + undeclared"), cfg)).cached
    # the candidate spells its pointer types differently: the harness converts to them
    other = ADD.replace("const float* __restrict__ x", "const float4* __restrict__ x4").replace(
        "float a = x[idx];", "float a = ((const float*)x4)[idx];")
    assert b.build(harness_source(other, cfg)).ok


# --- metrics -----------------------------------------------------------------------------

def test_normalised_error_matches_the_verifier_rule():
    from kernelmill.verify.measure.correctness import CheckRule, compare
    r = torch.tensor([1.0, -4.0, 2.0])
    assert normalised_error(r, r.clone()) == 0.0
    c = r + torch.tensor([0.0, 0.002, 0.0])
    assert normalised_error(r, c) == pytest.approx(0.0005, rel=1e-3)
    c2 = r + torch.tensor([0.0, 0.008, 0.0])
    assert normalised_error(r, c2) == pytest.approx(0.002, rel=1e-3)
    rule = CheckRule(mode="max_norm_abs", norm_tol=1e-3)
    for cand in (c, c2):
        assert compare(r, cand, rule).correct == (normalised_error(r, cand) <= 1e-3)
    nan = torch.tensor([float("nan"), 1.0])
    assert normalised_error(nan, nan.clone()) == 0.0
    assert math.isinf(normalised_error(nan, torch.tensor([0.0, 1.0])))
    assert normalised_error(torch.zeros(3), torch.full((3,), 0.5)) == 0.5  # all-zero reference: absolute
    assert normalised_error(torch.tensor([1, 2], dtype=torch.int32), torch.tensor([1, 3], dtype=torch.int32)) == 0.5
    h = torch.tensor([1.0, 2.0], dtype=torch.float16)
    assert normalised_error(h, h.clone()) == 0.0


def test_deviations_and_summary():
    assert latency_deviation(2.0, 3.0) == pytest.approx(0.5)
    assert latency_deviation(2.0, 1.0) == pytest.approx(-0.5)
    assert latency_deviation(None, 1.0) is None and latency_deviation(0.0, 1.0) is None
    assert efficiency_deviation(80.0, 50.0) == -30.0 and efficiency_deviation(None, 5.0) is None
    rows = [{"status": "ok", "compiled": True, "ran": True, "io_correct": True, "latency_dev": 0.1,
             "codebleu": {"codebleu": 1.0, "ngram": 1.0}},
            {"status": "incorrect", "compiled": True, "ran": True, "io_correct": False, "latency_dev": 9.0,
             "codebleu": {"codebleu": 0.5, "ngram": 0.0}},
            {"status": "compile_error", "compiled": False, "ran": False, "io_correct": False},
            {"status": "no_configuration"}, {"status": "reference_failed"}]
    s = summarize(rows, compiled_measured=True, run_measured=True)
    assert s["evaluated"] == 3 and s["samples"] == 5
    assert s["compilation_rate"] == pytest.approx(2 / 3) and s["runtime_correctness_rate"] == pytest.approx(2 / 3)
    assert s["io_correctness_rate"] == pytest.approx(1 / 3)
    assert s["latency_deviation"]["n"] == 1 and s["latency_deviation"]["median"] == pytest.approx(0.1)
    assert s["codebleu"]["codebleu"] == pytest.approx(0.75) and s["codebleu"]["n"] == 2
    cpu = summarize(rows, compiled_measured=True, run_measured=False, not_run_reason="no GPU")
    assert cpu["runtime_correctness_rate"] is None and cpu["io_correctness_rate"] is None
    assert cpu["not_run"] == "no GPU"


# --- CodeBLEU ------------------------------------------------------------------------------

RENAMED = ADD.replace("idx", "tid").replace("float a", "float lhs").replace("float b", "float rhs").replace(
    "a + b", "lhs + rhs")


def test_codebleu_identical_code_is_one():
    s = cb.codebleu(ADD, ADD)
    assert (s.codebleu, s.ngram, s.weighted_ngram, s.syntax, s.dataflow) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert cb.codebleu(ADD, "// comment\n" + ADD).codebleu == 1.0  # comments are not code


def test_codebleu_renamed_copy_keeps_structure_and_dataflow():
    s = cb.codebleu(ADD, RENAMED)
    assert s.syntax == 1.0 and s.dataflow == 1.0
    assert s.ngram < 0.8 and s.codebleu < 1.0
    # equal weights: the score is the mean of the four parts
    assert s.codebleu == pytest.approx((s.ngram + s.weighted_ngram + s.syntax + s.dataflow) / 4)


def test_codebleu_parts_by_hand():
    # 4 tokens, 3 shared unigrams, 1 shared bigram... counted by hand
    ref, cand = ["for", "(", "x", ")"], ["for", "(", "y", ")"]
    # p1 = 3/4, p2 = 1/3 ("for (" only), p3 = eps 0.1/2, p4 = eps 0.1/1; BP = 1
    expect = math.exp((math.log(3 / 4) + math.log(1 / 3) + math.log(0.05) + math.log(0.1)) / 4)
    assert cb.bleu(ref, cand) == pytest.approx(expect)
    # weighted unigrams: keyword "for" weighs 1, others 0.2 -> (1 + 0.2 + 0.2) / (1 + 0.6)
    w1 = (1 + 0.2 + 0.2) / 1.6
    expect_w = math.exp((math.log(w1) + math.log(1 / 3) + math.log(0.05) + math.log(0.1)) / 4)
    assert cb.bleu(ref, cand, cb.keyword_weight) == pytest.approx(expect_w)
    # brevity penalty for a short candidate
    assert cb.bleu(["a", "b", "c", "d"], ["a", "b"]) < cb.bleu(["a", "b"], ["a", "b"]) == 1.0


def test_codebleu_dataflow_and_syntax_see_changes():
    flows = cb.dataflow(cb._tree(ADD))
    assert ("var_3", "computedFrom", ("var_0", "var_4")) in flows or any(
        rel == "computedFrom" and len(src) == 2 for _, rel, src in flows)
    swapped = ADD.replace("out[idx] = a + b;", "out[idx] = a + a;")  # reads a twice, b never
    assert cb.codebleu(ADD, swapped).dataflow < 1.0
    looped = ADD.replace("if (idx < 1000) {", "for (; idx < 1000; idx += 1024) {")
    assert cb.codebleu(ADD, looped).syntax < 1.0
    empty = cb.codebleu(ADD, "")
    assert empty.codebleu == 0.0
    assert cb.codebleu(ADD, SCALE).codebleu < cb.codebleu(ADD, RENAMED).codebleu


# --- candidate sets ---------------------------------------------------------------------

def test_perturb_changes_only_output_stores():
    p = perturb(ADD, "add_k", ["out"])
    assert "out[idx] = km_perturb(a + b);" in p and "float a = x[idx];" in p
    h = perturb(SCALE, "scale_h", ["out"])
    assert "out[i] = km_perturb(__float2half(__half2float(x[i]) * 3.0f));" in h
    with pytest.raises(NoStore):
        perturb(ADD, "add_k", ["nothing"])
    rows = ("__global__ void sm(const float* x, float* out) {\n  float* row = out + blockIdx.x * 64;\n"
            "  const float* in = x + blockIdx.x * 64;\n  row[threadIdx.x] = in[threadIdx.x];\n}\n")
    assert "row[threadIdx.x] = km_perturb(in[threadIdx.x]);" in perturb(rows, "sm", ["out"])


@needs_nvcc
def test_perturbed_copies_compile_for_every_stored_type(tmp_path):
    vec = ("extern \"C\" __global__ void v4(const float4* x, float4* out) {\n"
           "  out[threadIdx.x] = make_float4(x[threadIdx.x].x, 1.0f, 2.0f, 3.0f);\n}\n")
    ints = "extern \"C\" __global__ void ik(const int* x, long long* out) { out[threadIdx.x] = x[threadIdx.x] * 2LL; }\n"
    b = Builder(tmp_path / "build")
    def two(name, dt_in, dt_out, n):
        return config_from_meta(_cfg([{"name": "x", "shape": [n], "dtype": dt_in, "role": "in"},
                                      {"name": "out", "shape": [n], "dtype": dt_out, "role": "out"}], [1], [32]), name)
    for src, cfg in ((ADD, pair_config(add_pair())), (SCALE, pair_config(scale_pair())),
                     (vec, two("v4", "float32", "float32", 128)), (ints, two("ik", "int32", "int64", 32))):
        name = cfg.kernel
        built = b.build(harness_source(perturb(src, name, [q.name for q in cfg.outputs]), cfg))
        assert built.ok, built.error


def test_make_candidates(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    nocfg = Pair("p_none", "k", "cuda", "__global__ void k(float* x) { x[0] = 1.0f; }", "ptx", meta={})
    write_jsonl(pairs, [add_pair(), scale_pair(), nocfg])
    n, skipped = make_candidates(pairs, tmp_path / "ref.jsonl", "reference")
    assert n == 3 and not skipped
    n, skipped = make_candidates(pairs, tmp_path / "pert.jsonl", "perturbed")
    assert n == 2 and skipped == {"no configuration": 1}
    rows = [json.loads(x) for x in (tmp_path / "pert.jsonl").read_text().splitlines()]
    assert {r["task_id"] for r in rows} == {"p_add", "p_scale"} and all("km_perturb(" in r["code"] for r in rows)


# --- the command on a CPU machine ---------------------------------------------------------

def _samples(tmp_path, codes: dict[str, str]):
    path = tmp_path / "samples.jsonl"
    rows = [{"sample_id": f"{tid}#0", "task_id": tid, "language": "cuda", "code": code, "meta": {}}
            for tid, code in codes.items()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _results(out):
    return {r["sample_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}


def test_cli_on_cpu_says_runs_were_not_run(tmp_path, monkeypatch):
    pairs = tmp_path / "pairs.jsonl"
    nocfg = Pair("p_none", "k", "cuda", "__global__ void k(float* x) { x[0] = 1.0f; }", "ptx", meta={})
    write_jsonl(pairs, [add_pair(), nocfg])
    samples = _samples(tmp_path, {"p_add": RENAMED, "p_none": "x", "p_missing": ADD})
    # no nvcc either: compile rate is not measured, never 0
    monkeypatch.setattr("kernelmill.ptx.evaluate.harness.find_nvcc", lambda: None)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["ptx", "evaluate", str(pairs), str(samples), "-o", str(out), "--device", "cpu"])
    assert r.exit_code == 0, r.output
    assert "not run" in r.output and "nvcc not found" in r.output
    s = json.loads((out / "summary.json").read_text())
    assert s["compilation_rate"] is None and s["runtime_correctness_rate"] is None and s["io_correctness_rate"] is None
    assert s["counts"] == {"no_configuration": 1, "no_pair": 1, "not_run": 1} and s["evaluated"] == 1
    res = _results(out)
    assert res["p_add#0"]["codebleu"]["dataflow"] == 1.0 and res["p_add#0"]["compiled"] is None
    assert "no configuration" in res["p_none#0"]["message"]
    assert (out / "figures.png").stat().st_size > 1000


@needs_nvcc
def test_cpu_run_compiles_and_resumes(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(pairs, [add_pair(), scale_pair()])
    samples = _samples(tmp_path, {"p_add": RENAMED, "p_scale": SCALE.replace("3.0f)", "3.0f")})
    out = tmp_path / "out"
    args = ["ptx", "evaluate", str(pairs), str(samples), "-o", str(out), "--device", "cpu", "--build-jobs", "2"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    res = _results(out)
    assert res["p_add#0"]["status"] == "not_run" and res["p_add#0"]["compiled"] is True
    assert res["p_scale#0"]["status"] == "compile_error" and "harness.cu" in res["p_scale#0"]["message"]
    s = json.loads((out / "summary.json").read_text())
    assert s["compilation_rate"] == 0.5 and s["io_correctness_rate"] is None and "no GPU" in s["not_run"]
    # a re-run adds nothing; a lost line is evaluated again, once
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0 and len((out / "results.jsonl").read_text().splitlines()) == 2
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text(lines[0] + "\n")
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert sorted(_results(out)) == ["p_add#0", "p_scale#0"]
    assert len((out / "results.jsonl").read_text().splitlines()) == 2


@needs_nvcc
def test_pairs_generate_evaluate_with_a_scripted_server(tmp_path):
    """`ptx pairs` on hand-written CUDA (config derived from the launch site) and a stored-config
    pair -> `generate -t ptx2cuda` against the fake server with scripted answers -> `evaluate`."""
    from kernelmill.generate.fake_server import FakeOpenAIServer, ScriptedResponder, load_answers

    cu = tmp_path / "scale.cu"
    cu.write_text("__global__ void scale2(const float* x, float* y, int n) {\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2.0f * x[i];\n}\n"
                  "void run(const float* x, float* y, int n) { scale2<<<(n + 255) / 256, 256>>>(x, y, n); }\n")
    pairs = tmp_path / "pairs.jsonl"
    r = CliRunner().invoke(app, ["ptx", "pairs", str(cu), "-o", str(pairs)])
    assert r.exit_code == 0, r.output
    write_jsonl(tmp_path / "stored.jsonl", [add_pair("stored_add")])
    with open(pairs, "a") as fh:
        fh.write((tmp_path / "stored.jsonl").read_text())
    ps = read_jsonl(pairs, Pair)
    hand = next(p for p in ps if p.kernel_name == "scale2")
    assert pair_config(hand).derived
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"task_id": hand.pair_id, "completion": f"```cuda\n{hand.source}\n```"}) + "\n"
                       + json.dumps({"task_id": "stored_add", "completion": "```cuda\n" + ADD.replace(";", "", 1)
                                     + "\n```"}) + "\n")
    responder = ScriptedResponder(load_answers(answers), {p.pair_id: p.ptx for p in ps})
    samples = tmp_path / "samples.jsonl"
    with FakeOpenAIServer(responder) as srv:
        r = CliRunner().invoke(app, ["generate", str(pairs), "-t", "ptx2cuda", "-o", str(samples), "-n", "1",
                                     "--model", "fake-model", "--base-url", srv.url, "--no-progress"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["ptx", "evaluate", str(pairs), str(samples), "-o", str(out), "--device", "cpu"])
    assert r.exit_code == 0, r.output
    res = {v["task_id"]: v for v in _results(out).values()}
    assert res[hand.pair_id]["status"] == "not_run" and res[hand.pair_id]["compiled"] is True
    assert res[hand.pair_id]["codebleu"]["codebleu"] == 1.0 and res[hand.pair_id]["config_derived"] is True
    assert res["stored_add"]["status"] == "compile_error" and res["stored_add"]["compiled"] is False
    s = json.loads((out / "summary.json").read_text())
    assert s["compilation_rate"] == 0.5 and s["runtime_correctness_rate"] is None


@needs_nvcc
def test_shared_prelude_of_augmented_pairs(tmp_path):
    """`ptx augment` keeps the headers and macros its kernels share in PAIRS.preludes.json (by key in
    meta.config.prelude): both sides are compiled with it; a key that is not there is no configuration."""
    src = ADD.replace("a + b", "KM_COMBINE(a, b)")
    p = add_pair("with_prelude")
    p.source = src
    p.meta["config"]["prelude"] = "k1"
    q = add_pair("missing_prelude")
    q.meta["config"]["prelude"] = "k2"
    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(pairs, [p, q])
    (tmp_path / "pairs.jsonl.preludes.json").write_text(json.dumps({"k1": "#define KM_COMBINE(x, y) ((x) + (y))\n"}))
    samples = _samples(tmp_path, {"with_prelude": src, "missing_prelude": ADD})
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["ptx", "evaluate", str(pairs), str(samples), "-o", str(out), "--device", "cpu"])
    assert r.exit_code == 0, r.output
    res = _results(out)
    assert res["with_prelude#0"]["status"] == "not_run" and res["with_prelude#0"]["compiled"] is True
    assert res["missing_prelude#0"]["status"] == "no_configuration" and "k2" in res["missing_prelude#0"]["message"]


def test_a_summary_reads_infinite_errors_as_stored_in_json():
    # JSON has no infinity: results.jsonl stores "inf"; the H100 run's figures step failed on it
    from kernelmill.ptx.evaluate.metrics import summarize

    rows = [{"status": "incorrect", "compiled": True, "ran": True, "io_correct": False, "max_norm_err": "inf"},
            {"status": "ok", "compiled": True, "ran": True, "io_correct": True, "max_norm_err": 0.0},
            {"status": "incorrect", "compiled": True, "ran": True, "io_correct": False, "max_norm_err": 0.5}]
    out = summarize(rows, compiled_measured=True, run_measured=True)
    assert out["max_norm_err_median"] == 0.5 and out["io_errors_found"] == 2


def test_outputs_a_reference_launch_left_unwritten_are_counted():
    """A launch whose grid or block is too small (the dim3 the host evaluator once read as 1x1x1)
    writes part of an output; the reference run against itself still passes, so the evaluator counts
    what is left of the fill: torch's NaN, whose payload a kernel's own NaN does not have."""
    from kernelmill.ptx.evaluate.config import KernelConfig
    from kernelmill.ptx.evaluate.metrics import summarize, unwritten
    from kernelmill.ptx.evaluate.worker import make_buffers

    cfg = KernelConfig.from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "params": [
        {"name": "x", "shape": [64], "dtype": "float32", "role": "in"},
        {"name": "y", "shape": [64], "dtype": "float32", "role": "out"},
        {"name": "idx", "shape": [64], "dtype": "int32", "role": "out"},
        {"name": "h", "shape": [64], "dtype": "float16", "role": "out"}]})
    _, fy, fi, fh = make_buffers(cfg, 0, "p")
    y, i, h = fy.clone(), fi.clone(), fh.clone()
    y[:32], i[:40], h[:] = 1.0, 3, 0.5  # the first 32 threads wrote y, 40 elements of idx, all of h
    y[5] = float("nan")  # a NaN the kernel computed itself (CUDA's payload): written
    y.view(torch.int32)[5] = 0x7FFFFFFF
    assert unwritten(fy, y) == 32 and unwritten(fi, i) == 24 and unwritten(fh, h) == 0
    assert unwritten(fy, fy.clone()) == 64 and unwritten(None, y) == 0
    rows = [{"status": "ok", "compiled": True, "ran": True, "io_correct": True, "ref_unwritten": {"y": 32}},
            {"status": "ok", "compiled": True, "ran": True, "io_correct": True}]
    assert summarize(rows, compiled_measured=True, run_measured=True)["ref_unwritten"] == 1


def test_an_integer_output_that_computes_minus_one_is_not_called_unwritten():
    """-1, an integer output's fill, is also a value kernels compute (an int8 dot product now and
    then: 3 of gemm_int8_rowtile<256>'s 256,000 outputs in session 25's GPU run). The reference runs
    again with another fill, and only what both runs left is unwritten."""
    from kernelmill.ptx.evaluate.config import KernelConfig
    from kernelmill.ptx.evaluate.metrics import reference_unwritten, second_fill
    from kernelmill.ptx.evaluate.worker import make_buffers

    cfg = KernelConfig.from_dict({"kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "params": [
        {"name": "a", "shape": [64], "dtype": "int8", "role": "in"},
        {"name": "c", "shape": [64], "dtype": "int32", "role": "out"},
        {"name": "y", "shape": [64], "dtype": "float32", "role": "out"},
        {"name": "z", "shape": [16], "dtype": "int64", "role": "out", "init": "zero"}]})
    bufs = make_buffers(cfg, 0, "p")
    runs = []

    def kernel(inputs):  # writes c[:60] (three of them -1), y[:48]; leaves z alone (zero-initialised)
        runs.append(inputs)
        c, y, z = inputs[1].clone(), inputs[2].clone(), inputs[3].clone()
        c[:60] = torch.arange(60, dtype=torch.int32) % 7
        c[[3, 17, 41]] = -1
        y[:48] = 2.0
        return [c, y, z]

    got = reference_unwritten(cfg.params, bufs, kernel(bufs), kernel)
    assert got == {"c": 4, "y": 16}  # c: the last 4, not the three computed -1; y from its NaN payload
    assert len(runs) == 2 and int(runs[1][1][0]) == second_fill(torch.int32) != -1
    assert torch.equal(runs[1][0], bufs[0]) and torch.isnan(runs[1][2]).all()  # only the integer output refilled

    def covers(inputs):  # every element written, some of them -1: nothing unwritten, one extra run
        runs.append(inputs)
        return [torch.full((64,), -1, dtype=torch.int32), torch.zeros(64), inputs[3].clone()]

    runs.clear()
    assert reference_unwritten(cfg.params, bufs, covers(bufs), covers) == {} and len(runs) == 2
    runs.clear()
    assert reference_unwritten(cfg.params, bufs, [torch.zeros(64, dtype=torch.int32), torch.zeros(64), bufs[3]],
                               covers) == {} and runs == []  # no -1 and no NaN left: no second run
    assert {second_fill(d) for d in (torch.int8, torch.uint8, torch.int16, torch.int64)} == {
        0x5A, 0x5A5A, 0x5A5A5A5A5A5A5A5A}
