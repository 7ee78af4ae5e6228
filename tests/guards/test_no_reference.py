"""The candidate's process never holds the reference (docs/guards.md, "What
the candidate's process holds"): hostile candidates that hunt for it through
sys.modules, gc, frames, files, /proc and memory find nothing in a guarded run,
in Python, in C++ and (on the GPU machine) in a CUDA extension. The control:
with the guards off the same hunter finds it, so the hunt itself works."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from reference_hunters import CPP_HUNTER, CUDA_HUNTER, TASK, TORCH_HUNTER  # noqa: E402

from kernelmill.records import Sample  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402


def _verify(tmp_path, name, language, code, guards, device="cpu", cache=None):
    cfg = VerifyConfig(device=device, trials=2, time=False, guards=guards, workers=1,
                       cache_dir=cache or str(tmp_path / "cache"))
    (v,) = verify_samples([TASK], [Sample(name, TASK.task_id, language, code)], cfg)
    return v


def _found_nothing(v) -> bool:
    """The hunter's answer is wrong, or its search itself was refused (it opened the other
    processes' files in the harness's work folder: shared_answers; it read the threads'
    frames: harness_introspection; issue 42). A refused read does not end the hunt: the
    hunter goes on to the next way, and a leak would still make its answer right."""
    return v.status == "incorrect" or (v.status == "rejected" and set(v.flags) <= {
        "shared_answers", "constant_output", "harness_introspection"})


def test_torch_hunter_finds_nothing_when_guarded(tmp_path):
    v = _verify(tmp_path, "hunt_torch", "torch", TORCH_HUNTER, "standard")
    assert _found_nothing(v), (v.status, v.flags, v.message[:500])


def test_torch_hunter_finds_the_reference_without_guards(tmp_path):
    v = _verify(tmp_path, "hunt_torch_off", "torch", TORCH_HUNTER, "off")
    assert v.status == "ok", (v.status, v.message[:500])


@pytest.mark.slow
def test_cpp_hunter_finds_nothing_when_guarded(tmp_path, shared_build_cache, torch_headers):
    v = _verify(tmp_path, "hunt_cpp", "cpp", CPP_HUNTER, "standard", cache=shared_build_cache)
    assert _found_nothing(v), (v.status, v.flags, v.message[:500])


@pytest.mark.gpu
def test_cuda_hunter_finds_nothing_when_guarded(tmp_path, shared_build_cache):
    v = _verify(tmp_path, "hunt_cuda", "cuda", CUDA_HUNTER, "standard", device="cuda", cache=shared_build_cache)
    print("hunt_cuda:", v.status, v.flags, v.message[:200])
    assert v.status == "incorrect", (v.status, v.flags, v.message[:500])
