"""The builtin candidates under the harness's (KernelBench's) semantics.

Both models are built under the same seed (``torch.manual_seed(seed)`` then
``Model(*init_inputs)``; the same seed again then ``ModelNew(*init_inputs)``),
in the state a fresh module is in (training mode), and the candidate's own
parameters are used: nothing is copied from the reference. So

* every candidate's parameters (and buffers) that share a name and shape
  with the reference's must come out *equal* to them, and for every task with
  parameters each of the reference's must have such a counterpart (no builtin
  candidate folds its weights; one that did would have to say so here);
* an ``ok`` candidate's outputs match the reference's on two input sets
  (allclose, atol = rtol = 1e-4; 1e-2 for fp16/bf16);
* an ``incorrect`` candidate is wrong for the reason its header gives: its
  output equals the documented wrong answer, computed here from the inputs.

The reference is loaded here as the harness's worker loads it (size-profile
globals set on the module before ``get_init_inputs``/``get_inputs``), not
through ``selfcheck``, so the two cannot share a mistake.

CUDA and C++ candidates build their extension at import; here ``load_inline``
is replaced by a stand-in that fails on use, so their ``__init__`` is checked
(constructed, parameters compared) without a compiler and their forward is not
run. Torch candidates run in this process; Triton candidates are constructed and run in
one child process under ``TRITON_INTERPRET=1`` (it must be set before triton
is imported, so triton is never imported here): this file run as a script
with ``--triton``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Callable

import pytest
import torch

from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples

SEEDS = (0, 1234)  # weight seeds: parameters must match under each
INPUT_SEEDS = (1001, 1002)  # two input sets for the forward check
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1e-2}
RUNS_HERE = {"torch"}  # forward checked in this process
RUNS_IN_CHILD = {"triton"}  # forward checked in the TRITON_INTERPRET child


def _rms_from_x_alone(inputs, ref_out, ref):
    x, r = inputs
    h = x + r
    return h * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + ref.eps) * ref.weight


def _unshifted_denominator(inputs, ref_out, ref):
    (x,) = inputs
    return torch.exp(x - x.amax(dim=-1, keepdim=True)) / torch.exp(x).sum(dim=-1, keepdim=True)


# what each runnable `incorrect` candidate's header says it computes instead
INTENDED_WRONG: dict[str, Callable] = {
    "builtin/level1/06_Sum/torch__incorrect": lambda inputs, ref_out, ref: ref_out.squeeze(-1),
    "builtin/level1/30_Cumsum/torch__incorrect": lambda inputs, ref_out, ref: ref_out - inputs[0],
    "builtin/level3/01_MLP/torch__incorrect": lambda inputs, ref_out, ref: torch.relu(ref_out),
    "builtin/level2/08_Add_RMSNorm/triton__incorrect": _rms_from_x_alone,
    "builtin/level1/24_Softmax/triton__incorrect": _unshifted_denominator,
}


def _module(code: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    exec(compile(code, module.__file__, "exec"), module.__dict__)
    return module


class _NotBuilt:
    """What `load_inline` returns here: the extension was never compiled."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr):
        raise RuntimeError(f"extension {self._name!r} is not built in this test (attribute {attr!r})")


@contextlib.contextmanager
def _no_extension_builds():
    import torch.utils.cpp_extension as cpp_extension

    calls = []

    def load_inline(name, *args, **kwargs):
        calls.append(name)
        return _NotBuilt(name)

    saved = cpp_extension.load_inline
    cpp_extension.load_inline = load_inline
    try:
        yield calls
    finally:
        cpp_extension.load_inline = saved


def load_reference(task, seed: int):
    """As the worker does it: sizes applied as globals, then both seeds."""
    module = _module(task.code, "reference")
    for key, value in task.sizes["small"].items():
        assert key in module.__dict__, (task.task_id, key)
        setattr(module, key, value)
    torch.manual_seed(seed)
    init_inputs = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
    torch.manual_seed(seed)
    return module, init_inputs, module.Model(*init_inputs)


def load_candidate(sample, init_inputs, seed: int):
    if sample.language in ("cuda", "cpp"):
        with _no_extension_builds() as calls:
            module = _module(sample.code, "candidate")
        assert calls, f"{sample.sample_id}: a {sample.language} candidate that builds no extension"
    else:
        module = _module(sample.code, "candidate")
    torch.manual_seed(seed)
    return module.ModelNew(*init_inputs)


def check_parameters(sample, task, seed: int) -> tuple[torch.nn.Module, torch.nn.Module, list]:
    module, init_inputs, ref = load_reference(task, seed)
    cand = load_candidate(sample, init_inputs, seed)
    assert ref.training and cand.training, "fresh modules are in training mode"
    theirs = {**dict(ref.named_parameters()), **dict(ref.named_buffers())}
    mine = {**dict(cand.named_parameters()), **dict(cand.named_buffers())}
    matched = [k for k, v in mine.items() if k in theirs and theirs[k].shape == v.shape]
    differ = [k for k in matched if not torch.equal(mine[k], theirs[k])]
    assert not differ, f"{sample.sample_id} (seed {seed}): differs from the reference's: {differ}"
    missing = sorted(set(theirs) - set(matched))
    assert not missing, f"{sample.sample_id}: no same-named, same-shaped counterpart for {missing}"
    return module, ref, cand


def check_forward(sample, task) -> list[float]:
    """Runs both models on two input sets; returns the max abs errors."""
    module, ref, cand = check_parameters(sample, task, SEEDS[0])
    expect = sample.meta["expect"]
    errors = []
    with torch.no_grad():
        for seed in INPUT_SEEDS:
            torch.manual_seed(seed)
            inputs = module.get_inputs()
            ref_out = ref(*[x.clone() for x in inputs])
            out = cand(*[x.clone() for x in inputs])
            tol = TOLERANCE[ref_out.dtype]
            same_shape = out.shape == ref_out.shape and out.dtype == ref_out.dtype
            close = same_shape and torch.allclose(out, ref_out, atol=tol, rtol=tol)
            errors.append(float((out - ref_out).abs().max()) if same_shape else float("inf"))
            if expect == "ok":
                assert close, f"{sample.sample_id} (inputs {seed}): max abs error {errors[-1]:.3g}"
            elif expect == "incorrect":
                assert not close, f"{sample.sample_id} (inputs {seed}): matches the reference"
                wrong = INTENDED_WRONG[sample.sample_id](inputs, ref_out, ref)
                assert out.shape == wrong.shape and torch.allclose(out, wrong, atol=tol, rtol=tol), (
                    f"{sample.sample_id} (inputs {seed}): wrong, but not in the way its header says")
    return errors


TASKS = load_tasks("builtin").by_id()
SAMPLES = builtin_samples()
# constructed in this process: everything but Triton (and a torch file that would not import)
CONSTRUCTIBLE = [s for s in SAMPLES if s.language not in RUNS_IN_CHILD
                 and (s.meta["expect"] != "compile_error" or s.language in ("cuda", "cpp"))]


def _child(languages: set[str]) -> dict[str, dict]:
    """Script mode: parameters under every seed, then the forward check."""
    out = {}
    for sample in SAMPLES:
        if sample.language not in languages or sample.meta["expect"] == "compile_error":
            continue
        task = TASKS[sample.task_id]
        try:
            for seed in SEEDS:
                check_parameters(sample, task, seed)
            runs = sample.meta["expect"] in ("ok", "incorrect")
            out[sample.sample_id] = {"errors": check_forward(sample, task) if runs else None, "failure": None}
        except Exception as exc:  # reported to the parent, which fails the test
            out[sample.sample_id] = {"errors": None, "failure": f"{type(exc).__name__}: {exc}"}
    return out


# -- tests -------------------------------------------------------------------


@pytest.mark.parametrize("sample", CONSTRUCTIBLE, ids=[s.sample_id for s in CONSTRUCTIBLE])
def test_parameters_equal_the_references_under_the_same_seed(sample):
    from kernelmill.languages import get_language

    needs = get_language(sample.language).requires_module
    if needs:  # TileLang seeds import tilelang at module level: checked where it is installed
        from optional_modules import import_or_skip  # here: this file also runs as a script (--triton)

        import_or_skip(needs)
    for seed in SEEDS:
        check_parameters(sample, TASKS[sample.task_id], seed)


TORCH_FORWARD = [s for s in SAMPLES if s.language in RUNS_HERE and s.meta["expect"] in ("ok", "incorrect")]


@pytest.mark.parametrize("sample", TORCH_FORWARD, ids=[s.sample_id for s in TORCH_FORWARD])
def test_torch_candidates_forward_in_training_mode(sample):
    errors = check_forward(sample, TASKS[sample.task_id])
    assert len(errors) == len(INPUT_SEEDS)


@pytest.fixture(scope="module")
def triton_results():
    pytest.importorskip("triton")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--triton"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 1, proc.stdout[-3000:]
    return json.loads(lines[0])


TRITON_FORWARD = [s for s in SAMPLES if s.language in RUNS_IN_CHILD and s.meta["expect"] in ("ok", "incorrect")]


@pytest.mark.parametrize("sample", TRITON_FORWARD, ids=[s.sample_id for s in TRITON_FORWARD])
def test_triton_candidates_in_interpreter(sample, triton_results):
    result = triton_results[sample.sample_id]
    assert result["failure"] is None, result["failure"]
    assert len(result["errors"]) == len(INPUT_SEEDS)


def test_triton_child_saw_every_triton_candidate(triton_results):
    assert sorted(triton_results) == sorted(s.sample_id for s in SAMPLES if s.language in RUNS_IN_CHILD
                                            and s.meta["expect"] != "compile_error")


def test_every_intended_wrong_answer_names_a_runnable_incorrect_candidate():
    runnable = {s.sample_id for s in TORCH_FORWARD + TRITON_FORWARD if s.meta["expect"] == "incorrect"}
    assert set(INTENDED_WRONG) == runnable


def test_a_candidate_that_skips_the_custom_init_is_caught():
    # the LayerNorm task re-draws its affine with uniform_; a candidate that
    # leaves nn.LayerNorm's ones/zeros has the right shapes but not the values
    sample = next(s for s in SAMPLES if s.sample_id == "builtin/level1/20_LayerNorm/torch__ok")
    lines = [ln for ln in sample.code.splitlines(keepends=True) if ".uniform_(" not in ln and "no_grad" not in ln]
    broken = dataclasses.replace(sample, code="".join(lines))
    assert broken.code != sample.code
    with pytest.raises(AssertionError, match="differs from the reference's"):
        check_parameters(broken, TASKS[sample.task_id], SEEDS[0])
    # and selfcheck, which no longer copies the reference's weights in, calls it incorrect
    from kernelmill.tasks.builtin.selfcheck import check_candidate

    assert check_candidate(TASKS[sample.task_id], sample).status == "ok"
    result = check_candidate(TASKS[sample.task_id], broken)
    assert result.status == "incorrect" and "max abs error" in result.message, result


if __name__ == "__main__" and sys.argv[1:] == ["--triton"]:
    assert os.environ.get("TRITON_INTERPRET") == "1", "run with TRITON_INTERPRET=1"
    print(json.dumps(_child(RUNS_IN_CHILD)), flush=True)
