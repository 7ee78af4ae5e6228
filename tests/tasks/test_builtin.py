"""The builtin suite: its tasks run, its example candidates say what they promise."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest
import torch

from kernelmill.records import LANGUAGES
from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import BUILTIN_CANDIDATES_DIR, builtin_samples, parse_candidate_path
from kernelmill.tasks.builtin.selfcheck import build_reference, check_candidate, load_program

TASKS = load_tasks("builtin")
TASK_IDS = [t.task_id for t in TASKS]
SAMPLES = builtin_samples()


def _init_params(code: str, cls: str) -> list[str]:
    tree = ast.parse(code)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return [a.arg for a in item.args.args[1:]]
            return []
    raise AssertionError(f"no class {cls}")


def test_suite_size_and_spread():
    assert TASKS.problems == []
    assert len(TASKS) >= 40
    spread = Counter((t.level, t.op_type) for t in TASKS)
    assert spread[(1, "single")] >= 24
    assert spread[(2, "fusion")] >= 12
    assert spread[(3, "network")] >= 5
    assert sum(spread.values()) == len(TASKS), "every task has level 1-3 with the matching op_type"
    for t in TASKS:
        assert t.code.startswith(f"# kernelmill: level={t.level} op_type={t.op_type}\n"), t.task_id
        assert t.task_id.startswith(f"level{t.level}/")
        assert set(t.sizes) == {"small"}, t.task_id


def test_small_profile_names_real_globals():
    # a typo in SIZE_PROFILES would silently leave the full size in place
    for t in TASKS:
        tree = ast.parse(t.code)
        names = {tg.id for n in tree.body if isinstance(n, ast.Assign) for tg in n.targets if isinstance(tg, ast.Name)}
        assert set(t.sizes["small"]) <= names, (t.task_id, set(t.sizes["small"]) - names)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_runs_on_cpu_small(task_id):
    task = TASKS.by_id()[task_id]
    module, model, _ = build_reference(task, "small", seed=0)
    torch.manual_seed(1)
    inputs = module.get_inputs()
    assert all(isinstance(x, torch.Tensor) and x.device.type == "cpu" for x in inputs)
    # tiny tensors, so Triton-interpreter candidates stay fast; this also proves
    # get_inputs reads the overridden globals at call time
    assert sum(x.numel() for x in inputs) <= 5000, task_id
    assert model.training  # the harness runs the reference as constructed
    with torch.no_grad():
        out = model(*inputs)
    assert isinstance(out, torch.Tensor)
    if out.is_floating_point():
        assert torch.isfinite(out.float()).all(), task_id
    # the same seed gives the same answer (no hidden randomness in forward)
    with torch.no_grad():
        again = model(*inputs)
    assert torch.equal(out, again), task_id


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_full_profile_shapes_on_meta(task_id):
    # the GPU-sized profile, shape-checked without allocating or computing
    task = TASKS.by_id()[task_id]
    module = load_program(task.code, "reference")
    with torch.device("meta"):
        model = module.Model(*module.get_init_inputs())
        inputs = module.get_inputs()
        out = model(*inputs)
    assert out.device.type == "meta"
    big = sum(x.numel() for x in inputs) + sum(p.numel() for p in model.parameters())
    assert big >= 1_000_000, f"{task_id}: full profile looks too small to time on a GPU"


def test_dtype_mix():
    dtypes = Counter()
    for t in TASKS:
        module, model, _ = build_reference(t, "small")
        inputs = module.get_inputs()
        dtypes[inputs[0].dtype] += 1
    assert dtypes[torch.float32] >= 40
    assert dtypes[torch.float16] + dtypes[torch.bfloat16] >= 3


def test_candidate_files_are_well_formed():
    assert len(SAMPLES) == len(list(BUILTIN_CANDIDATES_DIR.rglob("*.py")))
    tasks = TASKS.by_id()
    for s in SAMPLES:
        assert s.task_id in tasks, s.sample_id
        assert s.sample_id == f"builtin/{s.task_id}/{s.language}__{s.meta['expect']}"
        tree = ast.parse(s.code, filename=s.meta["path"])
        assert any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body), s.sample_id
        assert _init_params(s.code, "ModelNew") == _init_params(tasks[s.task_id].code, "Model"), s.sample_id
        if s.language in ("cuda", "cpp"):
            assert "load_inline" in s.code
        if s.language == "triton":
            assert "@triton.jit" in s.code and ".cuda(" not in s.code and "torch.cuda" not in s.code


def test_candidate_coverage():
    have = Counter((s.language, s.meta["expect"]) for s in SAMPLES)
    assert have[("cuda", "ok")] >= 10
    assert have[("cuda", "incorrect")] >= 1 and have[("cuda", "compile_error")] >= 1
    assert have[("cuda", "runtime_error")] >= 1
    assert have[("triton", "ok")] >= 6 and have[("triton", "incorrect")] >= 1
    assert (have[("cpp", "ok")], have[("cpp", "incorrect")], have[("cpp", "compile_error")]) == (2, 1, 1)
    assert have[("torch", "ok")] >= 3 and have[("torch", "incorrect")] >= 1
    assert have[("torch", "runtime_error")] >= 1 and have[("torch", "timeout")] >= 1
    assert len({s.task_id for s in SAMPLES}) >= 10
    assert {s.language for s in builtin_samples(["triton", "cpp"])} == {"triton", "cpp"}
    with pytest.raises(ValueError, match="unknown language"):
        builtin_samples(["fortran"])


def test_parse_candidate_path_rejects_bad_names(tmp_path):
    root = tmp_path
    good = root / "level1" / "01_ReLU" / "cuda__runtime_error_big.py"
    name = parse_candidate_path(good, root)
    assert (name.task_id, name.language, name.expect, name.variant) == ("level1/01_ReLU", "cuda", "runtime_error", "big")
    for bad in ("rust__ok.py", "cuda_ok.py", "cuda__fine.py"):
        with pytest.raises(ValueError, match=bad.removesuffix(".py")):
            parse_candidate_path(root / "level1" / "01_ReLU" / bad, root)
    assert set(LANGUAGES) >= {"cuda", "triton", "cpp", "torch"}


TORCH_RUNNABLE = [s for s in SAMPLES if s.language == "torch" and s.meta["expect"] != "timeout"]


@pytest.mark.parametrize("sample", TORCH_RUNNABLE, ids=[s.sample_id for s in TORCH_RUNNABLE])
def test_torch_candidates_behave_as_named(sample):
    result = check_candidate(TASKS.by_id()[sample.task_id], sample, "small", trials=3)
    assert result.status == sample.meta["expect"], result


def test_triton_candidates_in_interpreter():
    pytest.importorskip("triton")
    # TRITON_INTERPRET must be set before triton is imported, so a fresh process
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "kernelmill.tasks.builtin.selfcheck", "--language", "triton", "--json"],
        capture_output=True, text=True, env=env, timeout=600)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    expected = [s.sample_id for s in SAMPLES if s.language == "triton"]
    assert sorted(r["sample_id"] for r in results) == sorted(expected), proc.stderr[-2000:]
    bad = [r for r in results if not r["as_expected"]]
    assert not bad, bad
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_cuda_candidates_declare_their_functions():
    from kernelmill.tasks.builtin.nvcc_check import collect, combine

    sources = collect(builtin_samples(["cuda"]))
    assert len(sources) >= 13
    unit = combine([s for s in sources if s.expect != "compile_error"])
    opened = re.findall(r"^namespace kernelmill_candidate_\d+ \{$", unit, flags=re.M)
    assert len(opened) == sum(s.expect != "compile_error" for s in sources)
    assert unit.count('#line 1 "') == len(opened)
    # includes are hoisted out of the namespaces
    assert all(line.startswith("#include") for line in unit.split("\n\n")[0].splitlines())


@pytest.mark.skipif(os.environ.get("KERNELMILL_NVCC_CHECK") != "1",
                    reason="nvcc needs ~2 min for torch headers; set KERNELMILL_NVCC_CHECK=1 to run")
def test_cuda_candidates_compile_with_nvcc():
    from kernelmill.tasks.builtin.nvcc_check import collect, judge, run_checks

    sources = collect(builtin_samples(["cuda"]))
    results = run_checks(sources)
    bad = [v for v in judge(sources, results) if not v[1]]
    assert not bad, (bad, [r.log[-3000:] for r in results if not r.ok])


def test_selfcheck_builds_both_under_the_seed_in_training_mode_and_copies_nothing():
    from kernelmill.records import Sample

    task = TASKS.by_id()["level2/01_Gemm_Bias_ReLU"]

    def candidate(init: str, forward: str) -> Sample:
        code = ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                "    def __init__(self, in_features, out_features):\n        super().__init__()\n"
                f"        {init}\n\n    def forward(self, x):\n        return {forward}\n")
        return Sample("probe", task.task_id, "torch", code, meta={"expect": "ok"})

    same = "self.gemm = nn.Linear(in_features, out_features)"
    assert check_candidate(task, candidate(same, "torch.relu(self.gemm(x))")).status == "ok"
    # a candidate that is only right in eval mode is wrong: nothing calls .eval()
    only_eval = "torch.relu(self.gemm(x)) if not self.training else x[:, :1] * 0 + self.gemm.bias"
    assert check_candidate(task, candidate(same, only_eval)).status == "incorrect"
    # the same parameter names, but drawn after an extra draw: the reference's are not copied in
    shifted = "torch.rand(1); self.gemm = nn.Linear(in_features, out_features)"
    assert check_candidate(task, candidate(shifted, "torch.relu(self.gemm(x))")).status == "incorrect"


def test_reference_times_uses_the_timing_api():
    from kernelmill.tasks.builtin.reference_times import time_references, timing_config

    config = timing_config(100.0)
    assert (config.min_rounds, config.max_rounds, config.round_ms, config.min_calls, config.max_calls,
            config.cpu_threads) == (5, 5, 20.0, 1, 40, 1)
    threads = torch.get_num_threads()
    try:
        rows = time_references("cpu", "small", budget_ms=2.0)
    finally:
        torch.set_num_threads(threads)
    assert [r["task_id"] for r in rows] == TASK_IDS
    for r in rows:
        assert r["rounds"] == 5 and 5 <= r["reps"] <= 200 and r["reps"] == 5 * r["calls_per_round"], r
        assert 0 < r["p20_ms"] <= r["median_ms"] <= r["p80_ms"], r


def test_selfcheck_isolated_run_reports_through_a_child_process():
    # the per-candidate subprocess path used on CUDA, exercised on the CPU
    from kernelmill.tasks.builtin.selfcheck import _check_in_subprocess

    by_id = {s.sample_id: s for s in SAMPLES}
    good = _check_in_subprocess(by_id["builtin/level1/01_ReLU/torch__ok"], "small", "cpu")
    assert (good.status, good.as_expected) == ("ok", True)
    bad = _check_in_subprocess(by_id["builtin/level1/01_ReLU/torch__runtime_error"], "small", "cpu")
    assert bad.status == "runtime_error" and "invalid for input of size" in bad.message
