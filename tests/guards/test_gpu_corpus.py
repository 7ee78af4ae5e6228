"""GPU hostile corpus (CUDA and Triton) and the builtin CUDA/Triton correct
candidates under strict guards. Run on the GPU machine:
``python -m pytest -m gpu tests/guards -q``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "gpu_corpus"))

import guard_tasks as T  # noqa: E402
from gpu_hostile import GPU_HOSTILE, TASKS  # noqa: E402

from kernelmill.languages import get_language  # noqa: E402
from kernelmill.verify.guards import FLAGS  # noqa: E402
from kernelmill.records import Sample  # noqa: E402
from kernelmill.tasks import load_tasks  # noqa: E402
from kernelmill.tasks.builtin import builtin_samples  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402

@pytest.fixture(scope="module")
def gpu_verdicts(shared_build_cache):
    # KM_GPU_CORPUS=g3_side_stream,builtin/level1/01_ReLU/cuda__ok,... verifies only those
    # (hostile names and builtin sample ids): for re-running a few on a GPU whose time is counted
    # KM_GPU_PART=hostile or builtin runs one half (the whole takes over 10 minutes)
    # KM_GPU_PART=hostile:K/N or builtin:K/N (or :K/N for both halves): the K-th of N shares
    # (under strict a candidate takes 20-80 s on one GPU: a half does not fit one 10-minute
    # device call, its shares run side by side)
    only = [n for n in os.environ.get("KM_GPU_CORPUS", "").split(",") if n]
    part, _, share = os.environ.get("KM_GPU_PART", "").partition(":")
    k, n = (int(x) for x in share.split("/")) if share else (1, 1)
    samples = [Sample(name, TASKS[e[0]].task_id, e[1], e[2]) for name, e in GPU_HOSTILE.items()
               if (not only or name in only) and part != "builtin"][k - 1::n]
    builtin = ([] if part == "hostile" else
               [s for s in builtin_samples() if s.meta.get("expect") == "ok"
                and (not only or s.sample_id in only)])
    # a language whose package this machine lacks (TileLang needs an environment of its
    # own) answers runtime_error/unsupported_device for every candidate: not verified here,
    # and said so by the test below
    missing = {lang for lang in {s.language for s in builtin} if get_language(lang).unsupported("cuda")}
    builtin = [s for s in builtin if s.language not in missing][k - 1::n]
    print(f"builtin candidates of languages this machine cannot run, left out: {sorted(missing)}", flush=True)
    tasks = {t.task_id: t for t in T.ALL}
    tasks.update(load_tasks("builtin").by_id())

    def show(v):  # each verdict as it lands: a run cut off by a time limit still reports
        # and where its time went (the five longest phases: under strict the corpus's cost)
        slow = sorted(((x, k) for k, x in (v.phases or {}).items() if k.endswith("_s") and isinstance(x, (int, float))),
                      reverse=True)[:5]
        print(f"{v.sample_id:50s} {v.status:14s} flags={v.flags} speedup={v.speedup} {v.message[:160]!r} "
              f"phases: {', '.join(f'{k}={x:.1f}' for x, k in slow)}", flush=True)

    # policy "reject": the task policies of items 30 and 35 reject (only their tasks declare one)
    hostile = verify_samples(tasks, samples, VerifyConfig(device="cuda", trials=3, policy="reject",
                                                          cache_dir=shared_build_cache),
                             on_verdict=show) if samples else []
    strict = VerifyConfig(device="cuda", trials=3, guards="strict", cache_dir=shared_build_cache)
    honest = verify_samples(tasks, builtin, strict, on_verdict=show) if builtin else []
    return {v.sample_id: v for v in hostile + honest}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(GPU_HOSTILE))
def test_gpu_hostile_is_caught(gpu_verdicts, name):
    if name not in gpu_verdicts:
        pytest.skip("not in KM_GPU_CORPUS / KM_GPU_PART")
    v = gpu_verdicts[name]
    assert v.status != "ok", (name, v.flags, v.message[:300])
    expected = GPU_HOSTILE[name][3]
    if expected:  # a set of flags, or a tuple of sets: any one of them is the catch
        options = expected if isinstance(expected, tuple) else (expected,)
        assert any(o <= set(v.flags) for o in options), (name, v.status, v.flags, v.message[:300])


@pytest.mark.gpu
def test_gpu_builtin_correct_candidates_have_no_flag(gpu_verdicts):
    honest = {k: v for k, v in gpu_verdicts.items() if k.startswith("builtin/")}
    if not honest and (os.environ.get("KM_GPU_CORPUS") or os.environ.get("KM_GPU_PART", "").startswith("hostile")):
        pytest.skip("KM_GPU_CORPUS / KM_GPU_PART=hostile chose none of the builtin candidates")
    if ":" not in os.environ.get("KM_GPU_PART", "") and not os.environ.get("KM_GPU_CORPUS"):
        # a share or a chosen few may hold one language
        assert {"cuda", "triton"} <= {k.rsplit("/", 1)[1].split("__")[0] for k in honest}, sorted(honest)
    assert honest
    # no guard's flag; the measurement's notes (kernelbench_host_bound on a launch-bound call,
    # events_disagree, clocks_moved) say how it was measured, not what it did
    bad = [(k, v.status, v.flags, v.message[:200]) for k, v in honest.items()
           if v.status != "ok" or any(f in FLAGS for f in v.flags)]
    assert not bad


@pytest.mark.gpu
def test_gpu_own_kernel_share_is_reported(gpu_verdicts):
    shares = [v.phases.get("own_share") for k, v in gpu_verdicts.items()
              if k.startswith("builtin/") and "/cuda__" in k]
    if not shares and (os.environ.get("KM_GPU_CORPUS") or os.environ.get("KM_GPU_PART", "").startswith("hostile")):
        pytest.skip("KM_GPU_CORPUS / KM_GPU_PART chose none of the builtin CUDA candidates")
    assert shares and all(s is not None and s > 0 for s in shares), shares


@pytest.mark.gpu
def test_gpu_strict_sanitizer_checked_each_own_kernel(gpu_verdicts):
    # strict's compute-sanitizer must have watched every honest candidate with kernels of its own,
    # each tool to the end: a tool past its timeout leaves the verdict ok (sanitizer_incomplete),
    # and this corpus passing that way would have checked nothing (three CUDA candidates reached
    # the 120 s limit in session 15, when the watched call compiled their extensions again)
    own = {k: v for k, v in gpu_verdicts.items() if k.startswith("builtin/") and v.status == "ok"
           and k.rsplit("/", 1)[1].split("__")[0] in ("cuda", "triton")}
    if not own and (os.environ.get("KM_GPU_CORPUS") or os.environ.get("KM_GPU_PART", "").startswith("hostile")):
        pytest.skip("KM_GPU_CORPUS / KM_GPU_PART chose none of the builtin CUDA or Triton candidates")
    assert own
    unchecked = {k: (v.measurement or {}).get("sanitizer") for k, v in own.items()
                 if set(((v.measurement or {}).get("sanitizer") or {"none": "not run"}).values()) != {"clean"}}
    assert not unchecked, unchecked
