"""Spare run workers (verify/standby.py): started ahead, one candidate each."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernelmill.verify import verify_samples
from kernelmill.verify.sandbox import Sandbox
from kernelmill.verify.pools.standby import Standby, adopt_env

from verify_support import RELU_TASK, candidate, reporting_candidate, sample
from verify_support import fast_config as _fast_config


_reporting = reporting_candidate


def fast_config(*args, **kw):
    """Spares, not resident supervisors (which take guarded runs by default: test_resident.py)."""
    return _fast_config(*args, **{"resident": "off", **kw})


def _environ(proc) -> dict[bytes, bytes]:
    # /proc/PID/environ can read empty for a moment just after the start: read again
    deadline = time.monotonic() + 10
    while True:
        with open(f"/proc/{proc.pid}/environ", "rb") as fh:
            raw = fh.read()
        if raw or time.monotonic() > deadline:
            return dict(x.split(b"=", 1) for x in raw.split(b"\0") if b"=" in x)
        time.sleep(0.05)


@pytest.mark.parametrize("guards,fork", [("off", False), ("standard", False), ("off", True), ("standard", True)])
def test_every_candidate_gets_fresh_processes_of_its_own(tmp_path, guards, fork):
    # fork: the spares are forked by the zygote (pools/zygote.py), fresh all the same
    log = tmp_path / "pids.jsonl"
    # distinct code per sample, so none is answered from another's verdict
    samples = [sample(f"s{i}", _reporting(log) + f"# {i}\n") for i in range(4)]
    verdicts = verify_samples([RELU_TASK], samples,
                              fast_config(tmp_path, guards=guards, standby=2, fork_workers=fork))
    assert [v.status for v in verdicts] == ["ok"] * 4, [v.message for v in verdicts]
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(seen) == 4
    assert len({s["pid"] for s in seen}) == 4  # no process ran two candidates
    if guards == "standard":  # the candidate's process is the supervisor's child, also fresh
        assert len({s["ppid"] for s in seen}) == 4
    for s in seen:  # the job's own folders, not what the spare was started with
        assert s["tmp"] == s["home"]
        assert s["cwd"].startswith(s["home"])
    assert not list((tmp_path / "cache" / "work").iterdir())  # spares and phase folders removed
    if fork:  # a forked spare starts with torch imported: no start-up to wait for
        assert all(v.phases.get("spare_forked") == 1 for v in verdicts)
        return
    # each run says how long its spare took to warm up and how long the job waited for it
    # (never longer than the spare's own start-up)
    for v in verdicts:
        p = v.phases
        assert p["spare_warm_s"] > 0.3 and 0.0 <= p["spare_wait_s"] <= p["spare_warm_s"] + 0.5, p
    # no spare exists before the first run: whichever candidate reached the run worker
    # first (not necessarily sample 0: builds finish in any order) waited for its spare's
    # whole start-up, and torch's import alone takes longer than 0.3 s
    assert max(v.phases["spare_wait_s"] for v in verdicts) > 0.3, [v.phases for v in verdicts]


def test_unguarded_cpu_runs_take_a_forked_spare_by_default(tmp_path):
    """On a CPU, unguarded runs (guarded ones go to residents) take one spare forked from
    the run zygote, not a fresh process importing torch per candidate (issue 45: 24 builtin
    candidates 34 s -> 10 s); without fork_workers each run starts fresh, as before."""
    log = tmp_path / "pids.jsonl"
    samples = [sample(f"s{i}", _reporting(log) + f"# {i}\n") for i in range(3)]
    forked = verify_samples([RELU_TASK], samples, fast_config(tmp_path / "a", guards="off"))
    assert [v.status for v in forked] == ["ok"] * 3, [v.message for v in forked]
    assert all(v.phases.get("spare_forked") == 1 for v in forked), [v.phases for v in forked]
    fresh = verify_samples([RELU_TASK], samples, fast_config(tmp_path / "b", guards="off", fork_workers=False))
    assert [v.status for v in fresh] == ["ok"] * 3
    assert not any("spare_forked" in v.phases or "spare_warm_s" in v.phases for v in fresh)
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len({s["pid"] for s in seen}) == 6  # still a process per candidate


TRITON_ROW_SUM = """
import torch, torch.nn as nn, triton, triton.language as tl

@triton.jit
def row_sum(x, out, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(out + tl.program_id(0), tl.sum(tl.load(x + tl.program_id(0) * n + offs, mask=offs < n, other=0.0), axis=0))

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        out = torch.empty(x2.shape[0], dtype=x.dtype)
        row_sum[(x2.shape[0],)](x2, out, x2.shape[1], B=triton.next_power_of_2(x2.shape[1]))
        return out.reshape(*x.shape[:-1], 1)
"""


def test_an_unguarded_triton_run_in_a_forked_cpu_spare_is_interpreted(tmp_path):
    """The spare's warm-up imports Triton before its job: on a CPU it starts with
    TRITON_INTERPRET=1 (runner._spare_env), or Triton's own library kernels (tl.sum) are
    made for the compiler and the interpreted kernel calling them fails ("Cannot call
    @triton.jit'd outside of the scope of a kernel"), as the builtin Sum candidate did."""
    pytest.importorskip("triton")
    from kernelmill.records import Task

    task = Task(task_id="rowsum", code=(
        "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
        "    def forward(self, x):\n        return x.sum(dim=-1, keepdim=True)\n\n"
        "def get_inputs():\n    return [torch.randn(8, 100)]\n\ndef get_init_inputs():\n    return []\n"))
    v = verify_samples([task], [sample("tri", TRITON_ROW_SUM, language="triton", task_id="rowsum")],
                       fast_config(tmp_path, guards="off"))[0]
    assert v.status == "ok", v.message[:800]
    assert v.phases.get("spare_forked") == 1, v.phases


def test_deadline_counts_from_the_hand_over(tmp_path):
    """With two spares queued, the third candidate's spare waits through the first
    two runs (~2 x 4 s) longer than the run timeout (8 s); it still gets all of it."""
    cfg = fast_config(tmp_path, run_timeout=8, standby=2, guards="off")
    code = candidate("if not hasattr(self, 'slept'):\n    self.slept = time.sleep(3)\nreturn x.clamp_min(0)",
                     imports="import time")
    samples = [sample(f"slow{i}", code + f"# {i}\n") for i in range(3)]
    verdicts = verify_samples([RELU_TASK], samples, cfg)
    assert [v.status for v in verdicts] == ["ok"] * 3, [v.message for v in verdicts]


def test_adopt_env_makes_the_environment_the_jobs(monkeypatch):
    monkeypatch.setenv("KM_TEST_SPARE_ONLY", "a")
    monkeypatch.setenv("KM_TEST_CHANGED_LATER", "b")
    monkeypatch.setenv("KM_TEST_SHARED", "c")
    monkeypatch.setenv("KM_TEST_JOB_ONLY", "placeholder")  # so monkeypatch restores it
    monkeypatch.delenv("KM_TEST_JOB_ONLY")
    # only our variables: this is the test process's own environment (PATH and all)
    started_with = {k: v for k, v in os.environ.items() if k.startswith("KM_TEST_")}
    monkeypatch.setenv("KM_TEST_CHANGED_LATER", "set by torch at import")
    adopt_env({"KM_TEST_SHARED": "c2", "KM_TEST_JOB_ONLY": "d"}, started_with)
    assert "KM_TEST_SPARE_ONLY" not in os.environ  # the job would not have had it
    assert os.environ["KM_TEST_CHANGED_LATER"] == "set by torch at import"  # not ours to undo
    assert os.environ["KM_TEST_SHARED"] == "c2" and os.environ["KM_TEST_JOB_ONLY"] == "d"
    assert "PATH" in os.environ


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_dead_spare_is_replaced_and_close_leaves_nothing(tmp_path):
    sandbox = Sandbox(memory_limit_gb=4, max_procs=64, output_limit=4096, limit_address_space=False)
    standby = Standby(sandbox, tmp_path, "cpu", lambda gpu: {"CUDA_VISIBLE_DEVICES": ""}, depth=1)
    first = standby.take(None)  # none waiting: a fresh one, and one more starts
    queued = standby._spares[None][0]
    os.kill(queued.proc.pid, 9)
    queued.proc.wait()
    second = standby.take(None)
    assert second.proc.pid not in (first.proc.pid, queued.proc.pid)
    assert second.proc.poll() is None
    assert not queued.dir.exists()  # the dead one's folder went with it
    waiting = standby._spares[None][0]
    pids = [first.proc.pid, second.proc.pid, waiting.proc.pid]
    for s in (first, second):
        sandbox.discard(s.proc)
    standby.close()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)
    assert not waiting.dir.exists()
    assert not sandbox._live


def test_spares_started_during_a_run_wait_for_its_timing(tmp_path, monkeypatch):
    """The spare a job takes at once has no gate, nor have the ones of the first fill
    (staggered instead: the first runs time only once their own processes are warm);
    a replacement started while a job runs on the GPU warms up only after its timing
    (GATE_ENV, gpulock.py)."""
    from kernelmill.verify.measure.gpulock import GATE_ENV, lock_path

    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path / "locks"))
    (tmp_path / "locks").mkdir()
    sandbox = Sandbox(memory_limit_gb=4, max_procs=64, output_limit=4096, limit_address_space=False)
    env = {"CUDA_VISIBLE_DEVICES": "0"}
    (lock_path("cuda:0", env).with_name(lock_path("cuda:0", env).name + ".timed")).write_text("7")
    standby = Standby(sandbox, tmp_path, "cuda:0", lambda gpu: dict(env), depth=2)
    taken = []
    try:
        taken.append(standby.take(0))
        first_fill = list(standby._spares[0])
        assert len(first_fill) == 2
        for s in [taken[0], *first_fill]:
            assert GATE_ENV.encode() not in _environ(s.proc)
        taken.append(standby.take(0))
        replacement, = [s for s in standby._spares[0] if s not in first_fill]
        assert _environ(replacement.proc)[GATE_ENV.encode()] == b"7 15.0"
    finally:
        for s in taken:
            sandbox.discard(s.proc)
        standby.close()


def test_each_job_taken_starts_one_spare_by_default(tmp_path):
    """depth 2, no groups: the first take starts its own spare and two more; every later
    take uses the oldest waiting spare and starts one new one, so two always wait."""
    sandbox = Sandbox(memory_limit_gb=4, max_procs=64, output_limit=4096, limit_address_space=False)
    standby = Standby(sandbox, tmp_path, "cpu", lambda gpu: {"CUDA_VISIBLE_DEVICES": ""}, depth=2)
    taken = []
    try:
        taken.append(standby.take(None))
        waiting = list(standby._spares[None])
        assert len(waiting) == 2
        taken.append(standby.take(None))
        now = list(standby._spares[None])
        assert taken[-1] is waiting[0] and now[0] is waiting[1] and len(now) == 2
        assert now[1] not in waiting and now[1] not in taken
    finally:
        for s in taken:
            sandbox.discard(s.proc)
        standby.close()


def test_a_fill_from_an_empty_queue_is_staggered_a_replacement_is_not(tmp_path):
    """The first take starts its own spare at once and fills the queue with spares that
    wait 0, 1, 2 x STAGGER_S before their start-up (so the first ones get the cores);
    a later take's one replacement starts at once."""
    from kernelmill.verify.pools.standby import DELAY_ENV, STAGGER_S

    sandbox = Sandbox(memory_limit_gb=4, max_procs=64, output_limit=4096, limit_address_space=False)
    standby = Standby(sandbox, tmp_path, "cpu", lambda gpu: {"CUDA_VISIBLE_DEVICES": ""}, depth=3)
    taken = []
    try:
        taken.append(standby.take(None))
        assert DELAY_ENV.encode() not in _environ(taken[0].proc)
        delays = [_environ(s.proc).get(DELAY_ENV.encode()) for s in standby._spares[None]]
        assert delays == [None, f"{STAGGER_S:g}".encode(), f"{2 * STAGGER_S:g}".encode()]
        before = list(standby._spares[None])
        taken.append(standby.take(None))
        new, = [s for s in standby._spares[None] if s not in before]
        assert DELAY_ENV.encode() not in _environ(new.proc)
    finally:
        for s in taken:
            sandbox.discard(s.proc)
        standby.close()


def test_a_staggered_spare_starts_early_when_its_job_comes(monkeypatch):
    from kernelmill.verify.process import worker
    from kernelmill.verify.pools.standby import DELAY_ENV

    r, w = os.pipe()
    try:
        monkeypatch.setenv(DELAY_ENV, "60")
        os.write(w, b"/path/of/job.json\n")  # the job is already there
        assert worker._delay(r) < 30
        monkeypatch.setenv(DELAY_ENV, "0.05")
        os.read(r, 100)
        assert worker._delay(r) >= 0.05  # nothing came: the whole delay
        monkeypatch.delenv(DELAY_ENV)
        assert worker._delay(r) == 0.0
    finally:
        os.close(r)
        os.close(w)


def test_spares_are_started_in_groups_when_none_is_left(tmp_path):
    """depth 2 with groups: the first job's take starts its own spare and two more; the next
    take uses one of them and starts none; the one after empties the queue and starts two."""
    sandbox = Sandbox(memory_limit_gb=4, max_procs=64, output_limit=4096, limit_address_space=False)
    standby = Standby(sandbox, tmp_path, "cpu", lambda gpu: {"CUDA_VISIBLE_DEVICES": ""}, depth=2, groups=True)
    taken = []
    try:
        taken.append(standby.take(None))
        first_group = list(standby._spares[None])
        assert len(first_group) == 2
        taken.append(standby.take(None))
        assert taken[-1] is first_group[0] and list(standby._spares[None]) == first_group[1:]
        taken.append(standby.take(None))
        assert taken[-1] is first_group[1]
        second_group = list(standby._spares[None])
        assert len(second_group) == 2 and not set(map(id, second_group)) & set(map(id, first_group))
    finally:
        for s in taken:
            sandbox.discard(s.proc)
        standby.close()


def test_auto_depth_is_six_per_run_within_a_quarter_of_the_memory():
    from kernelmill.verify.pools.standby import auto_depth

    assert auto_depth(2, 1, mem_available_gb=120) == 12  # an H200 machine: 6 per run
    assert auto_depth(1, 1, mem_available_gb=120) == 6
    assert auto_depth(2, 8, mem_available_gb=120) == 1  # 8 GPUs: 15 spares of 2 GB in all fit
    assert auto_depth(2, 1, mem_available_gb=32) == 4  # a workstation: 8 GB of spares
    assert auto_depth(2, 1, mem_available_gb=2) == 1  # never none


def test_the_candidate_warm_up_imports_what_the_cached_builder_needs():
    """install() (inline_build) imports torch.utils.cpp_extension: 0.1-0.4 s that a CUDA
    candidate's run paid after its start signal (xchg_ready_s 0.37 s median against 0.016 s
    for Triton and torch candidates on an H200). The warm-up imports it, off the clock."""
    import subprocess
    import sys

    code = ("import sys, torch\n"
            "from kernelmill.verify.process import candidate\n"
            "assert 'torch.utils.cpp_extension' not in sys.modules\n"
            "candidate._warm_up(torch.device('cpu'))\n"
            "print('torch.utils.cpp_extension' in sys.modules, 'kernelmill.verify.build.inline_build' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "True True"


def test_spares_fill_only_to_what_the_queued_runs_need(tmp_path, monkeypatch):
    # while the first candidates build, few runs are queued: a few spares, not `depth`;
    # runs joining the queue top them up (Standby.demand, Verifier.queued_runs)
    from kernelmill.verify.sandbox import Sandbox

    started = []
    monkeypatch.setattr(Standby, "_start", lambda self, gpu, gated=False, delay_s=0.0: started.append(gpu) or
                        SimpleNamespace(proc=SimpleNamespace(poll=lambda: None), dir=tmp_path))
    need = [2]
    standby = Standby(Sandbox(1, 16, 1000, False), tmp_path, "cuda:0", lambda gpu: {}, depth=12, demand=lambda: need[0])
    standby.take(0)  # the first run: a fresh process, and spares up to the demand
    assert len(standby._spares[0]) == 2 and len(started) == 3
    need[0] = 7  # five runs joined the queue
    standby.top_up(0)
    assert len(standby._spares[0]) == 7
    need[0] = 40  # never more than depth
    standby.top_up(0)
    assert len(standby._spares[0]) == 12
    without = Standby(Sandbox(1, 16, 1000, False), tmp_path, "cuda:0", lambda gpu: {}, depth=3)
    without.top_up(0)  # no demand: top_up does nothing, take fills to depth as before
    assert 0 not in without._spares or not without._spares[0]
    without.take(0)
    assert len(without._spares[0]) == 3


def _fake_spare_starts(monkeypatch, tmp_path) -> list:
    """Standby._start records the GPU and hands back a stand-in spare (no process)."""
    started = []
    monkeypatch.setattr(Standby, "_start", lambda self, gpu, gated=False, delay_s=0.0: started.append(gpu) or
                        SimpleNamespace(proc=SimpleNamespace(poll=lambda: None, kill=lambda: None, wait=lambda: 0),
                                        dir=tmp_path))
    return started


def test_the_verifier_counts_queued_runs_for_the_spares(tmp_path, monkeypatch):
    from kernelmill.verify.runner import Verifier

    started = _fake_spare_starts(monkeypatch, tmp_path)
    verifier = Verifier(fast_config(tmp_path, standby=5), None)
    assert verifier.standby.demand is not None
    verifier.queued_runs(+2)  # two candidates built, waiting for the one CPU run worker
    assert verifier.runs_waiting == 2 and len(verifier.standby._spares[None]) == 3  # 1 slot + 2 queued
    verifier.queued_runs(-2)
    assert verifier.runs_waiting == 0 and len(verifier.standby._spares[None]) == 3  # started ones stay
    off = Verifier(fast_config(tmp_path / "off", standby=5, standby_on_demand=False), None)
    assert off.standby.demand is None


def test_builds_running_longer_than_the_lead_get_their_spares_ahead(tmp_path, monkeypatch):
    # a build in flight for spare_lead_s counts as a run about to queue (Verifier._spare_demand);
    # refresh_spares (called by the local executor about once a second) starts its spare
    from kernelmill.verify.runner import Verifier

    started = _fake_spare_starts(monkeypatch, tmp_path)
    clock = [1000.0]
    monkeypatch.setattr("kernelmill.verify.runner.time.monotonic", lambda: clock[0])
    verifier = Verifier(fast_config(tmp_path, standby=6, spare_lead_s=15.0), None)
    verifier._building.update({"a": 1000.0, "b": 1000.0, "c": 1010.0})  # three builds in flight
    verifier.refresh_spares()
    assert len(verifier.standby._spares.get(None, [])) == 1  # none ran 15 s yet: the run slot's only
    clock[0] = 1016.0  # a and b have run 16 s, c 6 s
    verifier.refresh_spares()
    assert len(verifier.standby._spares[None]) == 3  # 1 slot + a + b
    off = Verifier(fast_config(tmp_path / "off", standby=6, spare_lead_s=0), None)
    off._building.update({"a": 0.0})
    assert off._spare_demand() == 1  # only queued runs count


def test_no_more_spares_wait_than_candidates_are_left_to_run(tmp_path, monkeypatch):
    # a one-shot run (verify_samples) caps the spares by the candidates not yet done and
    # not in their run: none is started for nothing at the end of a batch
    from kernelmill.verify.runner import Verifier

    started = _fake_spare_starts(monkeypatch, tmp_path)
    verifier = Verifier(fast_config(tmp_path, standby=6), None)
    verifier.expect_jobs(3)
    verifier.queued_runs(+3)  # three candidates built, waiting: 1 slot + 3 queued, but only 3 can run
    assert len(verifier.standby._spares[None]) == 3
    for left in (2, 1, 0):  # each run takes one; the spares waiting never outnumber the runs to come
        verifier.queued_runs(-1)
        verifier._in_run += 1
        verifier.standby.take(None)
        verifier._in_run -= 1
        verifier.job_done()
        assert len(verifier.standby._spares[None]) == left
    assert len(started) == 3
    verifier.refresh_spares()
    assert len(started) == 3  # nothing left to run: nothing starts
    # a long-lived verifier (kernelmill serve) keeps its run slot's spare between requests
    served = Verifier(fast_config(tmp_path / "served", standby=6), None)
    served.refresh_spares()
    assert len(served.standby._spares[None]) == 1
