"""Each candidate attacks one property of the sandbox; all run in one shared
verification (the cost is one process pair per candidate)."""

from __future__ import annotations

import os

import pytest

from kernelmill.verify import verify_samples

from verify_support import LINEAR_TASK, RELU_TASK, candidate, fast_config, sample

pytestmark = pytest.mark.slow  # the module's fixture verifies dozens of candidates

CANDIDATES = {
    "ok": candidate("return x.clamp_min(0)"),
    "ok_weights": (
        "import torch, torch.nn as nn\n"
        "class ModelNew(nn.Module):\n"
        "    def __init__(self, d_in, d_out):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(d_in, d_out)\n"
        "    def forward(self, x):\n"
        "        return torch.clamp_min(x @ self.fc.weight.t() + self.fc.bias, 0)\n"),
    "incorrect": candidate("return x.clamp_min(0) + 1e-3"),
    "wrong_shape": candidate("return x.clamp_min(0)[:-1]"),
    "wrong_dtype": candidate("return x.clamp_min(0).double()"),
    "raises": candidate("raise ValueError('boom in forward')"),
    "import_error": "import torch\nimport no_such_module_xyz\nclass ModelNew: pass\n",
    "no_modelnew": "import torch\nclass Other: pass\n",
    "syntax": "class ModelNew(:\n",
    "empty": "   \n",
    "infinite_loop": candidate("while True:\n    pass"),
    "os_exit": candidate("os._exit(7)", imports="import os"),
    "segfault": candidate("ctypes.string_at(0)", imports="import ctypes"),
    "abort": candidate("os.abort()", imports="import os"),
    "huge_alloc": candidate("return torch.empty(1 << 40, dtype=torch.uint8)"),
    "memory_growth": candidate(
        "hog = []\nwhile True:\n    hog.append(torch.ones(1 << 29, dtype=torch.uint8))", imports=""),
    # bounded so that a broken sandbox cannot take the CI machine down
    "fork_bomb": candidate(
        "for _ in range(300):\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(12)\n"
        "        os._exit(0)\n"
        "time.sleep(12)", imports="import os, time"),
    "env_leak": candidate(
        "leak = [k for k in os.environ if 'TOKEN' in k or k.startswith('KERNELMILL')]\n"
        "return x.clamp_min(0) + (1.0 if leak else 0.0)", imports="import os"),
    "noisy_crash": candidate("print('x' * 200000)\nraise RuntimeError('after noise')"),
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    os.environ["MY_API_TOKEN"] = "secret"
    os.environ["KERNELMILL_INTERNAL"] = "1"
    try:
        samples = [sample(name, code, task_id=LINEAR_TASK.task_id if name == "ok_weights" else RELU_TASK.task_id)
                   for name, code in CANDIDATES.items()]
        samples.append(sample("unknown_task", CANDIDATES["ok"], task_id="level9/nope"))
        samples.append(sample("unknown_language", CANDIDATES["ok"], language="fortran"))
        # the loop spins a core and the fork bomb sleeps until the limit; the others take ~1 s
        cfg = fast_config(tmp, run_timeout=10, memory_limit_gb=2)
        out = verify_samples([RELU_TASK, LINEAR_TASK], samples, cfg)
    finally:
        del os.environ["MY_API_TOKEN"], os.environ["KERNELMILL_INTERNAL"]
    return {"cache": cfg.cache_dir, **{v.sample_id: v for v in out}}


def test_correct_candidate_is_ok_and_timed(verdicts):
    v = verdicts["ok"]
    assert v.status == "ok" and v.correct and v.compiled
    assert v.speedup is not None and v.speedup > 0
    assert v.runtime_ms > 0 and v.ref_runtime_ms > 0
    assert v.device.startswith("cpu")
    assert {"build_s", "check_s", "time_s"} <= set(v.phases)


def test_reference_weights_are_copied_into_same_named_parameters(verdicts):
    assert verdicts["ok_weights"].status == "ok", verdicts["ok_weights"].message


def test_wrong_values_are_incorrect_with_error_size(verdicts):
    v = verdicts["incorrect"]
    assert v.status == "incorrect" and not v.correct and v.compiled
    assert v.max_abs_err == pytest.approx(1e-3, rel=1e-2)
    assert "outside atol" in v.message


@pytest.mark.parametrize("name,words", [("wrong_shape", "shape"), ("wrong_dtype", "dtype")])
def test_shape_and_dtype_mismatch(verdicts, name, words):
    assert verdicts[name].status == "incorrect"
    assert words in verdicts[name].message


def test_exception_in_forward_is_runtime_error(verdicts):
    v = verdicts["raises"]
    assert v.status == "runtime_error" and "boom in forward" in v.message


@pytest.mark.parametrize("name,words", [
    ("import_error", "no_such_module_xyz"), ("no_modelnew", "ModelNew"),
    ("syntax", "line 1"), ("empty", "empty"), ("unknown_language", "fortran")])
def test_unbuildable_code_is_compile_error(verdicts, name, words):
    v = verdicts[name]
    assert v.status == "compile_error" and not v.compiled
    assert words in v.message


def test_unknown_task_gets_a_verdict(verdicts):
    v = verdicts["unknown_task"]
    assert v.status == "runtime_error" and "unknown task" in v.message


def test_infinite_loop_times_out(verdicts):
    assert verdicts["infinite_loop"].status == "timeout"


@pytest.mark.parametrize("name,words", [("os_exit", "code 7"), ("segfault", "SIGSEGV"), ("abort", "SIGABRT")])
def test_process_death_is_runtime_error(verdicts, name, words):
    v = verdicts[name]
    assert v.status == "runtime_error" and words in v.message


def test_huge_allocation_is_runtime_error(verdicts):
    v = verdicts["huge_alloc"]
    assert v.status == "runtime_error"


def test_memory_growth_is_stopped(verdicts):
    v = verdicts["memory_growth"]
    assert v.status == "runtime_error"
    assert "memory" in v.message.lower()


def test_fork_bomb_is_contained(verdicts):
    v = verdicts["fork_bomb"]
    assert v.status in ("runtime_error", "timeout")
    assert "processes" in v.message or v.status == "timeout"


def test_environment_is_scrubbed(verdicts):
    assert verdicts["env_leak"].status == "ok", verdicts["env_leak"].message


def test_output_is_truncated(verdicts):
    v = verdicts["noisy_crash"]
    assert v.status == "runtime_error" and "after noise" in v.message
    assert len(v.message) < 20000


def test_no_candidate_process_survives(verdicts):
    import subprocess

    # workers' command lines hold their job path, which is under this run's cache
    out = subprocess.run(["pgrep", "-f", verdicts["cache"]], capture_output=True, text=True)
    assert out.stdout.strip() == ""
