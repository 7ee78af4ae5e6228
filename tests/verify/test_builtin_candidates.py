"""The builtin example candidates get the verdicts their names promise:
CPU here (torch, C++ extensions, Triton interpreter), CUDA and Triton on a GPU."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kernelmill.records import Sample, Verdict, read_jsonl
from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples

pytestmark = pytest.mark.slow  # the module's fixture verifies dozens of candidates


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory, shared_build_cache, torch_headers):
    """`kernelmill demo` on the CPU, once for the session: it verifies every
    builtin candidate this machine can run (torch, C++, Triton interpreter). Its
    builds go to the session's build cache (content-addressed: what they answer is
    the same), where the guard corpus's and other tests' builds of the same
    candidates and the precompiled torch headers are found instead of made again."""
    tmp = tmp_path_factory.mktemp("demo")
    env = {**os.environ, "KERNELMILL_CACHE": shared_build_cache}
    # the suite's hanging candidate spins a core until the run limit: 15 s, not the CPU default
    # of 60 (the others' runs take under 2 s of wall on a quiet machine: 'run_wall_s' in their
    # phases; as in the guards-off run below)
    cmd = [sys.executable, "-m", "kernelmill.cli", "demo", "-o", str(tmp / "out"), "--device", "cpu",
           "--trials", "2", "--run-timeout", "15"]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stderr[-3000:]
    samples = {s.sample_id: s for s in read_jsonl(tmp / "out" / "samples.jsonl", Sample, [])}
    verdicts = read_jsonl(tmp / "out" / "verdicts.jsonl", Verdict, [])
    return {"cmd": cmd, "env": env, "out": tmp / "out", "stdout": res.stdout, "stderr": res.stderr,
            "pairs": [(samples[v.sample_id], v) for v in verdicts]}


def test_demo_prints_metrics_and_paths(demo_run):
    assert "Exec" in demo_run["stdout"] and "fast_1" in demo_run["stdout"]
    assert "verdicts:" in demo_run["stderr"]


def test_every_cpu_language_is_exercised(demo_run):
    langs = {s.language for s, _ in demo_run["pairs"]}
    assert {"torch", "cpp", "triton"} <= langs
    assert len(demo_run["pairs"]) == len([s for s in builtin_samples() if s.language in langs])


def test_cpu_candidates_get_their_expected_status(demo_run):
    wrong = [(s.sample_id, s.meta["expect"], v.status, v.message[:300])
             for s, v in demo_run["pairs"] if v.status != s.meta["expect"]]
    assert not wrong


def test_guards_off_gives_the_same_statuses(demo_run):
    """An architecture rule (issue 41): the guarded path and the plain one are two ways
    to the same verdict on honest and plainly wrong candidates; only tricks differ. The
    demo ran them guarded; here they run unguarded, on the demo's build cache."""
    samples = [s for s, _ in demo_run["pairs"]]
    guarded = {v.sample_id: v.status for _, v in demo_run["pairs"]}
    # the hanging candidate runs until the run limit: a short one (the other candidates need seconds)
    cfg = VerifyConfig(device="cpu", trials=2, time=False, guards="off", run_timeout=15.0,
                       cache_dir=demo_run["env"]["KERNELMILL_CACHE"])
    plain = {v.sample_id: v for v in verify_samples(load_tasks("builtin").by_id(), samples, cfg)}
    assert len(plain) == len(guarded) >= 20
    differ = {k: (guarded[k], v.status, v.message[:200]) for k, v in plain.items() if v.status != guarded[k]}
    assert not differ


def test_cpp_ok_candidates_are_timed(demo_run):
    timed = [v for s, v in demo_run["pairs"] if s.language == "cpp" and v.status == "ok"]
    assert timed and all(v.speedup and v.speedup > 0 for v in timed)


def test_triton_on_cpu_is_correctness_only(demo_run):
    ok = [v for s, v in demo_run["pairs"] if s.language == "triton" and v.status == "ok"]
    assert ok and all(v.speedup is None and "timing_skipped" in v.flags for v in ok)


def test_demo_rerun_is_answered_by_the_store(demo_run):
    (demo_run["out"] / "verdicts.jsonl").unlink()
    second = subprocess.run(demo_run["cmd"], env=demo_run["env"], capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"cached {len(demo_run['pairs'])}" in second.stderr


@pytest.mark.gpu
def test_gpu_candidates_including_illegal_access_then_correct(shared_build_cache):
    """CUDA and Triton candidates on the GPU; the illegal-memory-access kernel is
    verified right before a correct one in the same run, which must still pass."""
    samples = [s for s in builtin_samples() if s.language in ("cuda", "triton")]
    bad = [s for s in samples if s.meta["expect"] == "runtime_error" and s.language == "cuda"]
    assert bad, "the suite needs a CUDA candidate that faults"
    good = [s for s in samples if s.task_id == bad[0].task_id and s.meta["expect"] == "ok"]
    ordered = bad + good + [s for s in samples if s not in bad and s not in good]
    cfg = VerifyConfig(device="cuda", trials=3, workers=4, cache_dir=shared_build_cache)
    # print each verdict as it lands: a run cut off by a time limit still reports
    verdicts = verify_samples(load_tasks("builtin").by_id(), ordered, cfg, on_verdict=lambda v: print(
        f"{v.sample_id:60s} {v.status:14s} speedup={v.speedup} {v.phases} {v.message[:200]!r}", flush=True))
    assert verdicts[0].status == "runtime_error" and "illegal memory access" in verdicts[0].message.lower()
    assert all(v.status == "ok" for v in verdicts[1:1 + len(good)])
    wrong = [(s.sample_id, s.meta["expect"], v.status, v.message[:300]) for s, v in zip(ordered, verdicts)
             if v.status != s.meta["expect"]]
    assert not wrong
    assert all(v.device and not v.device.startswith("cpu") for v in verdicts)
