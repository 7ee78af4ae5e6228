"""benchmarks/calibration (issue 42): the suite's shape, its honest PyTorch controls, the
table's bookkeeping, and one small run of the checks on a CPU (~30 s)."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

CAL = Path(__file__).resolve().parents[2] / "benchmarks" / "calibration"
sys.path.insert(0, str(CAL))

import families as F  # noqa: E402
import suite  # noqa: E402

_spec = importlib.util.spec_from_file_location("calibration_run", CAL / "run.py")
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)

KERNELS = suite.all_kernels()


def test_the_suite_has_what_the_issue_asks():
    kinds = Counter(k.kind for k in KERNELS)
    assert kinds["wrong"] >= 60 and kinds["control"] >= 60
    assert len({k.family for k in KERNELS}) >= 8
    assert {k.language for k in KERNELS} == {"torch", "cpp", "triton", "cuda"}
    for k in KERNELS:
        assert k.style and k.why and k.devices, k.kernel_id
        ast.parse(k.code)  # every candidate is a module
        assert "class ModelNew" in k.code
        ast.parse(F.task_code(k.task))
    # the CPU run has its own 60 + 60 minus what only a GPU runs
    cpu = Counter(k.kind for k in KERNELS if "cpu" in k.devices)
    assert cpu["wrong"] >= 50 and cpu["control"] >= 50
    # styles the issue names are all there
    styles = {k.style for k in KERNELS if k.kind == "wrong"}
    assert {"off_by_one", "missed_tail", "race", "uninitialised_memory", "wrong_broadcast", "approximation",
            "reduction_precision"} <= styles
    controls = {k.style for k in KERNELS if k.kind == "control"}
    assert {"summation_order", "kahan", "tf32_off", "fused_epilogue", "online_softmax", "welford", "atomic_order"} <= controls


def test_cuda_candidates_define_what_they_bind():
    from kernelmill.tasks.builtin.nvcc_check import extract_cuda_source

    for k in KERNELS:
        if k.language == "cuda":
            code, funcs = extract_cuda_source(k.code, k.kernel_id)
            assert funcs == ["run"] and "torch::Tensor run(" in code and "__global__" in code, k.kernel_id
            assert k.devices == ("cuda",)


@pytest.mark.parametrize("k", [k for k in KERNELS if k.language == "torch" and k.kind == "control"],
                         ids=lambda k: k.kernel_id)
def test_torch_controls_match_the_reference(k):
    ns_t, ns_k = {}, {}
    exec(F.task_code(k.task), ns_t)
    exec(k.code, ns_k)
    torch.manual_seed(1)
    inputs = ns_t["get_inputs"]()
    ref = ns_t["Model"]()(*[x.clone() for x in inputs])
    got = ns_k["ModelNew"]()(*[x.clone() for x in inputs])
    assert got.shape == ref.shape
    assert float((got.double() - ref.double()).abs().max()) <= 2e-6 * max(1.0, float(ref.abs().max()))


def test_caught_by_names_what_decided():
    assert R.caught_by("ok", [], "") == ""
    assert R.caught_by("rejected", ["weak_task", "precision_downgrade"], "x") == "flag:precision_downgrade"
    assert R.caught_by("incorrect", [], "trial 1 (float64 error budget): output: error ...") == "fp64_budget"
    assert R.caught_by("incorrect", [], "trial 4/5 (wide_range inputs): output: NaN") == "trial:wide_range"
    assert R.caught_by("runtime_error", [], "boom") == "runtime_error"


def test_the_table_lists_every_miss_and_false_flag():
    def row(kid, kind, passes):
        return {"kernel": kid, "family": "f", "language": "torch", "kind": kind, "style": "s", "why": "w",
                **{c: {"passed": p, "why": "because", "caught_by": "" if p else "trial:normal"} for c, p in
                   zip(R.CHECKS, passes)}}

    rows = [row("t/torch/missed", "wrong", [True, True, True, True]),
            row("t/torch/caught_late", "wrong", [True, True, False, False]),
            row("t/torch/flagged", "control", [True, False, True, True])]
    text = R.markdown(rows, list(R.CHECKS), "h")
    assert "missed by strict_fp64: `t/torch/missed`" in text
    assert "`t/torch/flagged` by kernelmill" in text
    assert "| kernelmill_fp64 | 1 |" in text  # the first check to catch caught_late
    s = R.summarise(rows, list(R.CHECKS))
    assert (s["kb_allclose_caught"], s["strict_fp64_caught"], s["kernelmill_false_flags"]) == (0, 1, 1)


def test_a_small_cpu_run(tmp_path):
    """KernelBench's rule passes the softmax without its max shift (normal inputs never
    overflow); strict's wide-range trial catches it; the honest max-shifted one passes both."""
    only = "softmax/torch/no_max_subtraction,softmax/torch/max_shift"
    assert R.main(["--device", "cpu", "--only", only, "--checks", "kb_allclose,strict_fp64",
                   "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "calibration_cpu.json").read_text())
    rows = {r["kernel"]: r for r in data["rows"]}
    wrong, control = rows["softmax/torch/no_max_subtraction"], rows["softmax/torch/max_shift"]
    assert wrong["kb_allclose"]["passed"] and not wrong["strict_fp64"]["passed"]
    assert wrong["strict_fp64"]["caught_by"] == "trial:wide_range"
    assert control["kb_allclose"]["passed"] and control["strict_fp64"]["passed"]
    assert data["summary"]["strict_fp64_caught"] == 1 and data["summary"]["strict_fp64_false_flags"] == 0
    assert "softmax" in (tmp_path / "calibration_cpu.md").read_text()


def test_a_cut_run_resumes_without_deciding_again(tmp_path):
    """--resume keeps what the partial file of a cut run decided and verifies only the rest."""
    with pytest.raises(SystemExit):  # nothing to resume: a clear error, not a fresh run
        R.main(["--device", "cpu", "--only", "softmax/torch/max_shift", "--out", str(tmp_path), "--resume"])
    kept = {"passed": False, "status": "incorrect", "flags": [], "caught_by": "trial:normal", "why": "from the cut run"}
    rows = [{"kernel": "softmax/torch/no_max_subtraction", "strict_fp64": kept}]
    (tmp_path / "calibration_cpu.partial.json").write_text(json.dumps({"seconds": {"strict_fp64": 7.0}, "rows": rows}))
    only = "softmax/torch/no_max_subtraction,softmax/torch/max_shift"
    assert R.main(["--device", "cpu", "--only", only, "--checks", "strict_fp64", "--out", str(tmp_path),
                   "--resume"]) == 0
    data = json.loads((tmp_path / "calibration_cpu.json").read_text())
    got = {r["kernel"]: r["strict_fp64"] for r in data["rows"]}
    assert got["softmax/torch/no_max_subtraction"] == kept  # not verified again
    assert got["softmax/torch/max_shift"]["passed"]  # verified now
    assert data["summary"]["phase_seconds"]["strict_fp64"] > 7.0
    assert not (tmp_path / "calibration_cpu.partial.json").exists()


def test_the_kernelbench_worker_loads_a_triton_candidate_from_a_file(tmp_path, monkeypatch):
    """Triton's @jit reads its function's source back: a candidate exec'd from a string
    raised "@jit functions should be defined in a Python file" on the GPU (every Triton
    kernel of the suite failed KernelBench's rule, session_2026-11-30c). The worker loads
    each source from a file, as KernelBench does; no GPU is needed to decorate."""
    triton = pytest.importorskip("triton")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # the interpreter reads no source back
    code = ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr):\n    pass\n"
            "\nclass ModelNew:\n    pass\n")
    with pytest.raises(ValueError, match="Python file"):
        exec(compile(code, "<cand>", "exec"), {})  # noqa: S102 - the failure the worker no longer meets
    ns = R._module(tmp_path / "cand_0.py", code)
    assert isinstance(ns["k"], triton.runtime.jit.JITFunction) and "ModelNew" in ns


def test_a_check_cut_in_the_middle_keeps_the_verdicts_that_landed(tmp_path, monkeypatch):
    """The partial file is written as verdicts land, not when the check's batch returns: a
    device call cut in the middle of a check kept none of its 143 verdicts (session_2026-11-30c)."""
    import kernelmill.verify as kv
    from kernelmill.records import Verdict

    def cut_after_one(tasks, samples, cfg, on_verdict=None, **kw):
        first = samples[0]
        on_verdict(Verdict(sample_id=first.sample_id, task_id=first.task_id, status="incorrect", message="from the fake"))
        raise KeyboardInterrupt  # the device's time limit

    monkeypatch.setattr(kv, "verify_samples", cut_after_one)
    monkeypatch.setattr(R, "PARTIAL_EVERY_S", 0.0)
    only = "softmax/torch/no_max_subtraction,softmax/torch/max_shift"
    with pytest.raises(KeyboardInterrupt):
        R.main(["--device", "cpu", "--only", only, "--checks", "strict_fp64", "--out", str(tmp_path)])
    rows = json.loads((tmp_path / "calibration_cpu.partial.json").read_text())["rows"]
    done = [r for r in rows if "strict_fp64" in r]
    assert len(done) == 1 and done[0]["strict_fp64"]["why"] == "from the fake" and not done[0]["strict_fp64"]["passed"]


def test_first_caught_credits_the_weakest_check_whatever_order_they_ran_in(tmp_path, capsys):
    """--checks strict_fp64,kb_allclose,kernelmill (the device's order) once credited strict
    with every catch; the table orders the checks weakest first, and --render rebuilds it."""
    def row(kid, passes):
        return {"kernel": kid, "family": "f", "language": "cuda", "kind": "wrong", "style": "s", "why": "w",
                **{c: {"passed": p, "why": "", "caught_by": "" if p else "trial:normal"} for c, p in passes.items()}}

    rows = [row("a", {"strict_fp64": False, "kb_allclose": False, "kernelmill": False}),
            row("b", {"strict_fp64": False, "kb_allclose": True, "kernelmill": False}),
            row("c", {"strict_fp64": False, "kb_allclose": True, "kernelmill": True})]
    checks = ["strict_fp64", "kb_allclose", "kernelmill"]
    text = R.markdown(rows, checks, "h")
    assert "| kb_allclose | 1 |" in text and "| kernelmill | 1 |" in text and "| strict_fp64 | 1 |" in text
    assert "in the order kb_allclose, kernelmill, strict_fp64" in text
    summary = {"device": "cuda", "seconds": 1.0, "families": 1, "harness_version": "9.9", **R.summarise(rows, checks)}
    saved = tmp_path / "calibration_cuda.json"
    saved.write_text(json.dumps({"summary": summary, "checks": checks, "rows": rows}))
    assert R.main(["--render", str(saved), "--out", str(tmp_path / "md")]) == 0
    md = (tmp_path / "md" / "calibration_cuda.md").read_text()
    assert "kernelmill 9.9" in md and "| kb_allclose | 1 |" in md
    with pytest.raises(SystemExit, match="not a calibration run"):
        (tmp_path / "bad.json").write_text("{}")
        R.main(["--render", str(tmp_path / "bad.json")])
