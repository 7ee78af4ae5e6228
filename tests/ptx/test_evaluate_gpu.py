"""`kernelmill ptx evaluate` on a GPU: the reference as its own candidate is
I/O-correct with zero error and timed; a perturbed copy is caught; a faulting
candidate, a hanging one and a non-compiling one are per-candidate results and
the candidates after them in the same batch are still evaluated."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.ptx.evaluate.candidates import perturb
from kernelmill.records import write_jsonl

from ptx_eval_support import ADD, SCALE, add_pair, scale_pair

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")]

FAULT = ADD.replace("  int idx", "  if (threadIdx.x == 0) ((float*)0x100)[blockIdx.x] = 1.0f;\n  int idx", 1)
# a spin on a `volatile` local is removed by ptxas (the local lives in a register), so the
# candidate would finish; clock64() is read each time round and never negative
HANG = ADD.replace("  int idx", "  while (clock64() >= 0) {}\n  int idx", 1)


def test_evaluate_on_the_gpu(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(pairs, [add_pair("a1"), add_pair("a2"), add_pair("a3"), add_pair("a4"), add_pair("a5"),
                        scale_pair("s1")])
    codes = {"a1": ADD, "a2": perturb(ADD, "add_k", ["out"]), "a3": FAULT, "a4": ADD.replace(";", "", 1),
             "a5": HANG, "s1": SCALE}
    samples = tmp_path / "samples.jsonl"
    rows = [{"sample_id": f"{k}#0", "task_id": k, "language": "cuda", "code": v} for k, v in codes.items()]
    # the fault and the hang come first in the batch: the others after them must still run
    order = ["a3", "a5", "a1", "a2", "a4", "s1"]
    samples.write_text("".join(json.dumps(next(r for r in rows if r["task_id"] == k)) + "\n" for k in order))
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["ptx", "evaluate", str(pairs), str(samples), "-o", str(out), "--timeout", "10",
                                 "--workers", "1", "--batch", "8", "--ncu", "--ncu-limit", "2"])
    assert r.exit_code == 0, r.output
    res = {x["task_id"]: x for x in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert res["a1"]["status"] == "ok" and res["a1"]["max_norm_err"] == 0.0
    assert res["a1"]["ref_ms"] > 0 and res["a1"]["cand_ms"] > 0 and res["a1"]["latency_dev"] is not None
    assert res["s1"]["status"] == "ok" and res["s1"]["io_correct"]
    assert res["a2"]["status"] == "incorrect" and res["a2"]["max_norm_err"] > 1e-3 and res["a2"]["ran"]
    assert res["a3"]["status"] == "runtime_error" and res["a3"]["compiled"] and not res["a3"]["ran"]
    assert res["a4"]["status"] == "compile_error"
    assert res["a5"]["status"] == "timeout"
    s = json.loads((out / "summary.json").read_text())
    assert s["compilation_rate"] == pytest.approx(5 / 6) and s["io_correctness_rate"] == pytest.approx(2 / 6)
    assert s["runtime_correctness_rate"] == pytest.approx(3 / 6) and s["io_errors_found"] == 1
    if shutil.which("ncu") and not s["notes"]:
        # the reference as its own candidate: the same kernel, the same counters
        assert res["a1"]["gld_eff_dev"] == 0.0


def _reference_against_itself(tmp_path, pairs: list, code: str):
    """`ptx evaluate --no-timing` of `pairs`, each with `code` as its candidate: (the CLI's
    result, {task id: result row}, the output folder)."""
    path = tmp_path / "pairs.jsonl"
    write_jsonl(path, pairs)
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"sample_id": f"{p.pair_id}#0", "task_id": p.pair_id, "language": "cuda",
                                           "code": code}) + "\n" for p in pairs))
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["ptx", "evaluate", str(path), str(samples), "-o", str(out), "--no-timing",
                                 "--workers", "1"])
    assert r.exit_code == 0, r.output
    return r, {x["task_id"]: x for x in map(json.loads, (out / "results.jsonl").read_text().splitlines())}, out


def test_a_launch_too_small_for_its_output_is_counted_though_it_reads_io_correct(tmp_path):
    """The reference run against itself is I/O-correct under any deterministic launch; a grid that
    covers 256 of the output's 1,000 elements leaves 744 of the fill, and the evaluator says so."""
    small = add_pair("u1")
    small.meta["config"]["grid"] = [2, 1, 1]
    r, res, out = _reference_against_itself(tmp_path, [add_pair("a1"), small], ADD)
    assert res["u1"]["status"] == "ok" and res["u1"]["ref_unwritten"] == {"out": 744}
    assert res["a1"]["status"] == "ok" and "ref_unwritten" not in res["a1"]
    assert json.loads((out / "summary.json").read_text())["ref_unwritten"] == 1
    assert "1 launches left part of an output unwritten" in r.output


NEG = """extern "C" __global__ void neg_k(const int* __restrict__ x, int* __restrict__ out) {
  int i = blockIdx.x * 128 + threadIdx.x;
  if (i < 1000) out[i] = (i % 3 == 0) ? -1 : x[i];
}
"""


def test_an_integer_output_that_computes_the_fill_is_not_called_unwritten(tmp_path):
    """-1 is an integer output's fill and a value kernels compute (an int8 dot product, a "not
    found" index): the evaluator runs such an output again with a second fill, and counts only
    what both runs left. A full grid writes -1 into a third of its output and leaves nothing; a
    grid of 256 threads leaves the other 744 elements, and only those are counted."""
    from ptx_eval_support import Pair, _cfg

    def neg_pair(pid, grid):
        c = _cfg([{"name": "x", "shape": [1000], "dtype": "int32", "role": "in"},
                  {"name": "out", "shape": [1000], "dtype": "int32", "role": "out"}], grid, [128, 1, 1])
        return Pair(pid, "neg_k", "cuda", NEG, ".visible .entry neg_k() { ret; } // " + pid, None, "sm_90",
                    ["-arch=sm_90"], None, "test", {"status": "ok", "config": c})

    _, res, _ = _reference_against_itself(tmp_path, [neg_pair("n1", [8, 1, 1]), neg_pair("n2", [2, 1, 1])], NEG)
    assert res["n1"]["status"] == "ok" and "ref_unwritten" not in res["n1"]
    assert res["n2"]["status"] == "ok" and res["n2"]["ref_unwritten"] == {"out": 744}
