"""Several runs share one GPU (VerifyConfig.runs_per_gpu): the local executor's
run workers, with a stand-in verifier (no GPU needed): how many runs overlap
per GPU, and a wedged GPU taken out with every run worker it had."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from kernelmill.verify import VerifyConfig
from kernelmill.verify.config import ConfigError
from kernelmill.verify.executors import local as local_executor


class FakeVerifier:
    def __init__(self, gpus, runs_per_gpu, fail_on=None):
        self.device, self.gpus, self.runs_per_gpu, self.cpu_runners = "cuda", gpus, runs_per_gpu, 1
        self.build_workers, self.standby, self.defer_builds = 2, None, False
        self.sandbox = SimpleNamespace(stop=lambda: None)
        self.lock = threading.Lock()
        self.now = {g: 0 for g in gpus}
        self.peak = {g: 0 for g in gpus}
        self.ran_on: dict[str, int] = {}
        self.fail_on = fail_on

    def gpu_env(self, gpu):
        return {}

    def build(self, job):
        return None

    def run(self, job, gpu):
        with self.lock:
            self.now[gpu] += 1
            self.peak[gpu] = max(self.peak[gpu], self.now[gpu])
        time.sleep(0.15)
        with self.lock:
            self.now[gpu] -= 1
            self.ran_on[job.key] = gpu
        status = "runtime_error" if gpu == self.fail_on else "ok"
        return SimpleNamespace(status=status, phases={})


class Accounting:
    def note_build(self, *a):
        pass

    def note_run(self, *a):
        pass


def _jobs(n):
    return [SimpleNamespace(key=f"k{i}", sample=SimpleNamespace(sample_id=f"s{i}"), build=None) for i in range(n)]


def test_runs_overlap_up_to_runs_per_gpu_on_each_gpu():
    v = FakeVerifier([0, 1], runs_per_gpu=3)
    done = []
    local_executor.LocalExecutor().execute(v, _jobs(24), lambda job, verdict: done.append(job.key), Accounting())
    assert sorted(done) == sorted(f"k{i}" for i in range(24))
    assert v.peak == {0: 3, 1: 3}


def test_one_run_per_gpu_when_asked():
    v = FakeVerifier([0], runs_per_gpu=1)
    local_executor.LocalExecutor().execute(v, _jobs(4), lambda job, verdict: None, Accounting())
    assert v.peak == {0: 1}


def test_a_wedged_gpu_goes_with_all_its_run_workers(monkeypatch):
    monkeypatch.setattr(local_executor, "gpu_healthy", lambda gpu, env: gpu != 1)
    v = FakeVerifier([0, 1], runs_per_gpu=2, fail_on=1)
    verdicts = {}
    local_executor.LocalExecutor().execute(v, _jobs(12), lambda job, verdict: verdicts.__setitem__(job.key, verdict),
                                           Accounting())
    assert len(verdicts) == 12
    # every run that met the wedged GPU (both of its run workers had one under way)
    # got one more try on the healthy one, and GPU 1 took nothing after that
    assert all(v.status == "ok" for v in verdicts.values())
    assert set(v.ran_on.values()) == {0}


def test_runs_per_gpu_must_not_be_negative():
    with pytest.raises(ConfigError, match="runs_per_gpu"):
        VerifyConfig(runs_per_gpu=-1)
    assert VerifyConfig().resolved_runs_per_gpu() == 2 and VerifyConfig(runs_per_gpu=3).resolved_runs_per_gpu() == 3 and VerifyConfig(runs_per_gpu=1).resolved_runs_per_gpu() == 1


def test_the_executor_reports_runs_joining_and_leaving_the_queue():
    # the verifier's spares follow the run queue (Verifier.queued_runs, Standby.demand)
    v = FakeVerifier([0], runs_per_gpu=2)
    changes = []
    v.queued_runs = lambda change: changes.append(change)
    local_executor.LocalExecutor().execute(v, _jobs(6), lambda job, verdict: None, Accounting())
    assert changes.count(+1) == 6 and changes.count(-1) == 6 and len(changes) == 12


def test_build_accounting_counts_merged_units_and_precompiled_headers():
    from kernelmill.verify.progress import StatusProgress

    p = StatusProgress(total=2, enabled=False)
    p.note_build(1.0, {"cuda_split": True, "merged": True, "pch_used": ["merged"]})
    p.note_build(1.0, {"cuda_split": True, "merged": False, "pch_used": ["host", "binding"]})
    stats = p.stats()
    assert (stats["split_builds"], stats["merged_builds"], stats["pch_builds"]) == (2, 1, 2)


def test_a_candidate_back_from_the_build_its_run_asked_for_runs_next():
    from kernelmill.verify.runner import NeedsBuild

    class Lazy(FakeVerifier):
        order: list[str] = []

        def run(self, job, gpu):
            self.order.append(job.key)
            if job.key == "k0" and self.order.count("k0") == 1:
                return NeedsBuild([{"name": "ext"}])  # a load_inline its build phase did not see
            return super().run(job, gpu)

        def build_requested(self, job, requests):
            pass

    v = Lazy([0], runs_per_gpu=1)
    done = []
    local_executor.LocalExecutor().execute(v, _jobs(6), lambda job, verdict: done.append(job.key), Accounting())
    assert sorted(done) == [f"k{i}" for i in range(6)]
    # k0 again at most one run later (k1, if the worker took it while k0's build ran), before the
    # four still queued: first in, first out put it after them
    second = len(v.order) - 1 - v.order[::-1].index("k0")
    assert second <= 2 and v.order[second + 1:] == [k for k in ("k1", "k2", "k3", "k4", "k5") if k not in v.order[:second]]
    q = local_executor.RunQueue()
    for key, first in (("a", False), (None, False), ("b", False), ("c", True)):
        q.put(key, first)
    assert [q.get() for _ in range(4)] == ["c", "a", "b", None]  # a stop comes after every candidate


def test_candidates_whose_first_call_compiles_start_before_the_others():
    """runner.compiles_on_first_call: torch.compile in the source (a call or a decorator), read
    without running it; such runs go after a rebuilt candidate and before the rest (RunQueue)."""
    from types import SimpleNamespace

    from kernelmill.records import Sample
    from kernelmill.verify.runner import compiles_on_first_call

    def job(key, code):
        return SimpleNamespace(key=key, sample=Sample(key, "t", "torch", code))

    called = "import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
             "        self.f = torch.compile(self.g)\n"
    decorated = "import torch\n@torch.compile(mode='max-autotune')\ndef f(x):\n    return x\n"
    plain = "import torch\n# torch.compile would help here\nx = re.compile('a')\n"
    assert compiles_on_first_call(called) and compiles_on_first_call(decorated)
    assert not compiles_on_first_call(plain)  # a comment, another module's compile
    assert not compiles_on_first_call("torch.compile(")  # does not parse: not guessed
    q = local_executor.RunQueue()
    for j, first in ((job("p1", plain), False), (job("c1", called), False), (None, False), (job("r", plain), True),
                     (job("c2", decorated), False), (job("p2", plain), False)):
        q.put(j, first)
    order = [q.get() for _ in range(6)]
    assert [j.key if j is not None else None for j in order] == ["r", "c1", "c2", "p1", "p2", None]


def test_a_failure_queueing_a_run_reaches_the_caller_instead_of_hanging_the_batch(monkeypatch):
    """A build thread that failed after its build (queueing the run) used to keep the exception in
    its future: the batch waited for that candidate for ever."""
    put = local_executor.RunQueue.put

    def put_failing(self, job, first=False):
        if job is not None and job.key == "k2":
            raise RuntimeError("the queue broke")
        put(self, job, first)

    monkeypatch.setattr(local_executor.RunQueue, "put", put_failing)
    outcomes = {}
    result = []

    def go():
        local_executor.LocalExecutor().execute(FakeVerifier([0], runs_per_gpu=1), _jobs(4),
                                               lambda job, verdict: outcomes.setdefault(job.key, verdict), Accounting())

    t = threading.Thread(target=lambda: result.append(go()), daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "the batch hung"
    assert isinstance(outcomes["k2"], RuntimeError) and "the queue broke" in str(outcomes["k2"])
