"""The timing comparison's arithmetic and its rounds, with fake sides whose
times are known (no clocks involved in what is asserted)."""

from __future__ import annotations

import math
import random

import torch

from kernelmill.verify.measure.timing import Bench, Round, TimingConfig, compare, ratio_stats, summarize


class FakeSide:
    """A side whose every call 'takes' `ms` times a noise factor; records what it was asked."""

    def __init__(self, ms: float, noise: float = 0.0, seed: int = 0):
        self.ms, self.noise, self.rng = ms, noise, random.Random(seed)
        self.rounds: list[tuple[int, tuple | None]] = []

    def warm(self, warmup_ms: float) -> float:
        return self.ms

    def round(self, n: int, check=None) -> Round:
        self.rounds.append((n, check))
        return Round([self.ms * (1 + self.rng.gauss(0, self.noise)) for _ in range(n)], self.ms * n)


def test_ratio_stats_interval_holds_the_point_and_narrows():
    point, ci, rse = ratio_stats([2.0, 2.02, 1.98, 2.01, 1.99])
    assert point == 2.0 and ci[0] < 2.0 < ci[1] and rse < 0.01
    wide = ratio_stats([1.5, 2.5, 2.0, 1.8, 2.2])[1]
    assert wide[1] - wide[0] > ci[1] - ci[0]
    assert ratio_stats([])[0] is None and ratio_stats([3.0])[1] is None


def test_compare_converges_on_a_known_speedup_and_checks_where_told():
    cfg = TimingConfig(min_rounds=5, max_rounds=30, round_ms=1.0, budget_ms=1e9)
    ref, cand = FakeSide(2.0, 0.001, 1), FakeSide(1.0, 0.001, 2)
    comp = compare(ref, cand, cfg, check_rounds={2: 0}, final_check=1, rng=random.Random(0))
    assert abs(comp.speedup - 2.0) < 0.01 and comp.speedup_ci[0] <= 2.0 <= comp.speedup_ci[1]
    assert comp.stopped == "converged" and comp.rounds == 6  # 5 rounds, then the checked last pair
    checks = [(i, c) for i, (_, c) in enumerate(cand.rounds) if c is not None]
    assert [i for i, _ in checks] == [2, 5] and [c[1] for _, c in checks] == [0, 1]
    assert all(0 <= c[0] < n for n, c in cand.rounds if c is not None)
    assert all(c is None for _, c in ref.rounds)


def test_noisy_sides_stop_at_the_round_limit_with_a_wide_interval():
    cfg = TimingConfig(min_rounds=5, max_rounds=8, round_ms=1.0, budget_ms=1e9, min_calls=3, max_calls=3)
    comp = compare(FakeSide(1.0, 0.5, 3), FakeSide(1.0, 0.5, 4), cfg, rng=random.Random(1))
    assert comp.stopped == "max_rounds" and comp.rounds == 8
    assert comp.speedup_ci[0] < 1.0 < comp.speedup_ci[1]


def test_summarize_uses_the_walls_it_is_given():
    rounds = [Round([1.0, 1.0], 2.0), Round([1.0, 3.0], 4.0)]
    t = summarize(rounds, walls=[10.0, 10.0])
    assert t.reps == 4 and t.median_ms == 1.0 and t.wall_median_ms == 5.0 and t.rounds == 2


def test_cpu_bench_checked_call_and_post_loop_revalidation():
    x = torch.arange(4.0)
    state = {"scale": 1.0}
    held = []

    def fn():  # returns a fresh tensor, and (deferred work) rewrites the first one later
        y = x * state["scale"]
        held.append(y)
        if len(held) > 3:
            held[0].add_(100.0)
        return y

    b = Bench(fn, "cpu", TimingConfig(), prepare=lambda i: state.update(scale=1.0),
              on_check=lambda j: state.update(scale=2.0))
    b.round(2, check=(0, 0))
    b.round(3)
    assert torch.equal(b.kept[0], x * 2.0)  # the checked call's answer as it returned
    assert b.changed_after_return() == [0]  # ... and the object changed afterwards
    assert math.isfinite(b.round(3).median_ms)


def test_cpu_short_calls_are_timed_in_blocks_with_the_checked_call_alone():
    """A call far under `cpu_block_us` is timed in blocks (inputs refilled before
    each block, not each call); the checked call is a block of one with its own
    check data, placed where it was asked for."""
    x = torch.ones(8)
    log: list[tuple[str, int]] = []  # ("prep", i) / ("check", j) / ("call", n)
    calls = {"n": 0}

    def fn():
        calls["n"] += 1
        log.append(("call", calls["n"]))
        return x * 2.0

    b = Bench(fn, "cpu", TimingConfig(cpu_block_us=10_000.0), prepare=lambda i: log.append(("prep", i)),
              on_check=lambda j: log.append(("check", j)))
    b.warm(1.0)
    assert b.block > 1  # a multiply of 8 floats is far below 10 ms
    log.clear()
    before = b.calls
    r = b.round(40, check=(17, 3))
    assert len(r.times_ms) == 40 and b.calls - before == 40
    kinds = [k for k, _ in log]
    assert kinds.count("call") == 40 and kinds.count("check") == 1
    assert kinds.count("prep") < 40  # refilled per block, not per call
    pos = kinds.index("check")
    calls_before_check = kinds[:pos].count("call")
    assert calls_before_check == 17 and kinds[pos + 1] == "call" and log[pos][1] == 3
    assert kinds[pos + 2] in ("prep",)  # the checked call was a block of its own
    assert torch.equal(b.kept[3], x * 2.0)


def test_cpu_calls_longer_than_the_block_are_timed_one_by_one():
    import time as _time

    b = Bench(lambda: _time.sleep(0.002), "cpu", TimingConfig(cpu_block_us=200.0))
    b.warm(5.0)
    assert b.block == 1
    r = b.round(3)
    assert len(r.times_ms) == 3 and min(r.times_ms) >= 2.0


class _Reports:
    """The candidate's report pipe, as RemoteSide reads it: the queued messages, then
    a round of 1 ms calls of the size the last command asked for."""

    def __init__(self, msgs, launched):
        self.msgs, self.launched = list(msgs), launched

    def expect(self, key, whole=False):
        n = self.launched.sent[-1].get("n")
        msg = self.msgs.pop(0) if self.msgs else Round([1.0] * n, float(n)).to_msg()
        assert key in msg
        return msg if whole else msg[key]


class _Launched:
    def __init__(self):
        self.sent = []

    def send(self, msg):
        self.sent.append(msg)


class FakeKB(FakeSide):
    """A local side that also takes KernelBench's convention (a Bench's attributes)."""

    cuda = True

    def kernelbench_round(self, trials):
        self.kb_host_ms = [0.05] * trials
        self.kb_state = {"grad": False, "threads": 2}
        return [self.ms] * trials


def test_kernelbench_convention_records_the_host_path_of_both_sides():
    # the candidate's KernelBench trials come down the pipe with their host times and
    # its process state; both land in the timing beside kb_mean_ms (issue 39: the
    # reference's KernelBench figure read above a plain process's, cause to be seen)
    from kernelmill.verify.process.channel import RemoteSide

    cfg = TimingConfig(min_rounds=5, max_rounds=5, round_ms=1.0, budget_ms=1e9, kb_trials=3)
    remote_msgs = [{"est_ms": 1.0}, {"kb_ms": [1.0, 1.2, 1.1], "kb_host_ms": [0.02, 0.03, 0.04],
                                     "kb_state": {"grad": False, "function_modes": ["Spy"],
                                                  "forged": "x" * 10_000, "threads": "many"}}]
    launched = _Launched()
    cand = RemoteSide(launched, _Reports(remote_msgs, launched), random.Random(0))
    comp = compare(FakeKB(2.0), cand, cfg, rng=random.Random(0))
    assert comp.reference.kb_mean_ms == 2.0 and math.isclose(comp.candidate.kb_mean_ms, 1.1)
    assert comp.reference.kb_host_ms == 0.05 and comp.candidate.kb_host_ms == 0.03
    # only the keys and kinds of value the harness writes survive the candidate's report
    assert comp.candidate.kb_state == {"grad": False, "function_modes": ["Spy"]}
    assert comp.reference.kb_state["threads"] == 2
    assert math.isclose(comp.speedup_kernelbench, 2.0 / 1.1)
    assert "kb_host_ms" in comp.reference.to_dict()


def test_a_kernelbench_trial_whose_thread_was_descheduled_is_redone(monkeypatch):
    # issue 39: the KernelBench convention counts the host's launch path, so a trial in
    # which the timing thread lost its core measured the scheduler; it is redone, counted
    # in kb_state, and a trial past the redo budget is kept and counted as such
    from kernelmill.verify.measure import timing

    clock = {"t": 0.0, "switches": 0}
    preempt_at = {3, 4, 6}  # the trials (counting the discarded first as 1) that lose their core
    trial = {"n": 0}

    class FakeEvent:
        def __init__(self, enable_timing=False):
            self.at = None

        def record(self):
            self.at = clock["t"]

        def elapsed_time(self, other):
            return other.at - self.at

    def call():
        trial["n"] += 1
        clock["t"] += 10.0 if trial["n"] in preempt_at else 1.0
        if trial["n"] in preempt_at:
            clock["switches"] += 1
        return torch.zeros(1)

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(timing, "involuntary_switches", lambda: clock["switches"])
    bench = Bench(call, "cpu", TimingConfig())
    bench.kb_fill = torch.zeros(4)
    out = bench.kernelbench_round(5)
    assert out == [1.0] * 5
    assert bench.kb_state["redone_preempted"] == 3 and bench.kb_state["kept_preempted"] == 0
    assert trial["n"] == 1 + 5 + 3 and len(bench.kb_host_ms) == 5
    # out of redos (budget = trials): the preempted trials are kept and said
    trial["n"], clock["switches"] = 0, 0
    preempt_at.clear()
    preempt_at.update(range(2, 20))
    bench.kb_host_ms = []
    out = bench.kernelbench_round(2)
    assert bench.kb_state["redone_preempted"] == 2 and bench.kb_state["kept_preempted"] == 2
    assert out == [10.0, 10.0] and bench.kb_state["trial_max_ms"] == 10.0


def test_involuntary_switches_is_a_count_of_this_thread():
    from kernelmill.verify.measure.timing import involuntary_switches

    a = involuntary_switches()
    assert isinstance(a, int) and involuntary_switches() >= a


def test_a_kernelbench_figure_mostly_outside_gpu_time_is_flagged_host_bound():
    # issue 39: a launch-bound side's KernelBench-convention figure is its process's host
    # path (fresh plain processes of one reference read 11-53 us): the verdict says so
    from kernelmill.verify.measure.timing import kernelbench_host_bound
    from kernelmill.verify.process.supervisor import attach_timing

    def side(kb_ms, gpu_ms, method="kernel_time"):
        t = summarize([Round([gpu_ms] * 3, 1.0, method=method)])
        t.kb_mean_ms = kb_ms
        return t

    assert kernelbench_host_bound(side(0.105, 0.100), side(0.104, 0.098)) == ""
    why = kernelbench_host_bound(side(0.107, 0.0048), side(0.0100, 0.0090))
    assert "reference" in why and "candidate" not in why and "96% host" in why
    assert kernelbench_host_bound(side(0.107, 0.0048, method="events"), side(0.01, 0.009)) == ""  # no GPU time known
    # through compare: a FakeKB side whose KernelBench trials read 10x its rounds
    cfg = TimingConfig(min_rounds=5, max_rounds=5, round_ms=1.0, budget_ms=1e9, kb_trials=3)

    class HostBound(FakeKB):
        def round(self, n, check=None):
            r = super().round(n, check)
            r.method = "kernel_time"
            return r

        def kernelbench_round(self, trials):
            super().kernelbench_round(trials)
            return [10 * self.ms] * trials

    comp = compare(HostBound(2.0), HostBound(1.0), cfg, rng=random.Random(0))
    assert comp.kernelbench_host_bound.startswith("speedup_kernelbench measured the host's launch path")
    verdict = {"status": "ok"}
    attach_timing(verdict, comp)
    assert "kernelbench_host_bound" in verdict["flags"] and "launch path" in verdict["message"]


def test_the_kernelbench_trials_come_before_any_timed_round():
    # a CUDA profiler session (every kernel-time round opens one) leaves CUPTI's callbacks
    # in the process, ~2 us more a launch: the KernelBench-convention trials, which count the
    # launch path, are taken first, on both sides
    calls = []

    class Recording(FakeKB):
        def __init__(self, name, ms):
            super().__init__(ms)
            self.name = name

        def round(self, n, check=None):
            calls.append((self.name, "round"))
            return super().round(n, check)

        def kernelbench_round(self, trials):
            calls.append((self.name, "kb"))
            return super().kernelbench_round(trials)

    cfg = TimingConfig(min_rounds=5, max_rounds=5, round_ms=1.0, budget_ms=1e9, kb_trials=3)
    compare(Recording("ref", 2.0), Recording("cand", 1.0), cfg, rng=random.Random(0))
    assert calls[:2] == [("ref", "kb"), ("cand", "kb")] and ("ref", "kb") not in calls[2:]


def test_kernelbench_trials_shrink_for_slow_calls_only():
    from kernelmill.verify.measure.settings import TimingConfig
    from kernelmill.verify.measure.timing import kb_trial_count

    cfg = TimingConfig()
    assert kb_trial_count(0.05, cfg) == 100  # a fast call: KernelBench's 100
    assert kb_trial_count(19.9, cfg) == 100  # 100 trials still fit the 2 s
    assert kb_trial_count(40.0, cfg) == 50
    assert kb_trial_count(110.0, cfg) == 20  # the floor: the cold audit's 110 ms model
    assert kb_trial_count(5000.0, cfg) == 20
    assert kb_trial_count(110.0, TimingConfig(kb_budget_ms=0)) == 100  # no cap
    assert kb_trial_count(110.0, TimingConfig(kb_trials=10)) == 10  # never more than asked


def test_every_check_set_is_placed_once_in_a_run_round():
    # six checked calls where the inputs are small, two where they are large; every set placed
    # exactly once (a set with no checked call would read as a missing output), the last set
    # in the last round, the others in distinct early rounds (all of which always run)
    from kernelmill.verify.process.supervisor import SMALL_CHECK_BYTES, check_count, check_placement

    assert check_count(1 << 20, 5) == 6 and check_count(SMALL_CHECK_BYTES + 1, 5) == 2
    assert check_count(1 << 20, 2) == 3 and check_count(1 << 20, 0) == 1
    cfg = TimingConfig(min_rounds=5, max_rounds=30, round_ms=1.0, budget_ms=1e9)
    for seed in range(20):
        rng = random.Random(seed)
        early, final = check_placement(check_count(1 << 20, cfg.min_rounds), cfg.min_rounds, rng)
        assert sorted(early.values()) == [0, 1, 2, 3, 4] and final == 5
        assert all(0 <= r < cfg.min_rounds for r in early)
        cand = FakeSide(1.0, 0.001, 2)
        compare(FakeSide(2.0, 0.001, 1), cand, cfg, check_rounds=early, final_check=final, rng=rng)
        placed = [c[1] for _, c in cand.rounds if c is not None]
        assert sorted(placed) == list(range(6)) and cand.rounds[-1][1][1] == 5


def test_a_comparison_says_where_its_wall_went():
    """`stages`: warm-up, the KernelBench-convention trials, the rounds and each side's share of
    them, and the milliseconds the rounds timed (issue 40: 25.6 s timed of 107 s in `time_s`)."""
    import time

    class Slow(FakeSide):  # each stage takes real wall time, so the split can be checked
        def warm(self, warmup_ms):
            time.sleep(0.03)
            return self.ms

        def kernelbench_round(self, trials):
            time.sleep(0.05)
            return [self.ms] * trials

        def round(self, n, check=None):
            if self.ms > 1.5:  # only the reference's rounds sleep: their share is the reference's
                time.sleep(0.01)
            return super().round(n, check)

    cfg = TimingConfig(min_rounds=5, max_rounds=5, round_ms=1.0, budget_ms=1e9, kb_trials=3)
    ref, cand = Slow(2.0, 0.0, 1), Slow(1.0, 0.0, 2)
    comp = compare(ref, cand, cfg, rng=random.Random(0))
    st = comp.stages
    assert st["warm_s"] >= 0.06 and st["kernelbench_s"] >= 0.1
    assert st["rounds_reference_s"] >= 0.05 and st["rounds_candidate_s"] >= 0.0  # five 10 ms rounds: the reference's
    assert st["rounds_s"] >= st["rounds_reference_s"] + st["rounds_candidate_s"]
    n_r, n_c = ref.rounds[0][0], cand.rounds[0][0]
    assert st["timed_ms"] == {"reference": 2.0 * n_r * 5, "candidate": 1.0 * n_c * 5}
    assert comp.to_dict()["stages"] == st


def test_the_command_line_sets_a_rounds_size_and_refuses_one_that_cannot_work(capsys):
    import pytest
    import typer

    from kernelmill.cli.runs import config_from_options, config_from_values

    cfg = config_from_values({"device": "cpu", "run_timeout": 60.0, "timing.round_ms": 5.0})
    assert cfg.timing.round_ms == 5.0 and cfg.timing.budget_ms == TimingConfig().budget_ms
    # the demo's and the tests' form names the field alone
    assert config_from_options("cpu", 3, 60.0, 60.0, 1, round_ms=2.5).timing.round_ms == 2.5
    with pytest.raises(typer.Exit):
        config_from_values({"device": "cpu", "run_timeout": 60.0, "timing.round_ms": 0.0})
    assert "round_ms" in capsys.readouterr().err
    # fewer calls per round where the setting asks for fewer
    calls = {ms: FakeSide(0.1).rounds for ms in (20.0, 5.0)}
    for ms in calls:
        ref, cand = FakeSide(0.1), FakeSide(0.05)
        compare(ref, cand, TimingConfig(round_ms=ms, min_rounds=5, max_rounds=5, budget_ms=1e9))
        calls[ms] = cand.rounds[0][0]
    assert calls[20.0] == 400 and calls[5.0] == 100


def test_the_command_line_turns_deferred_records_off_and_caps_the_kernelbench_trials(capsys):
    import pytest
    import typer

    from kernelmill.cli.runs import config_from_options, config_from_values

    cfg = config_from_options("cpu", 3, 60.0, 60.0, 1, deferred_records=False, kb_budget_ms=500.0)
    assert cfg.timing.deferred_records is False and cfg.timing.kb_budget_ms == 500.0
    assert config_from_options("cpu", 3, 60.0, 60.0, 1).timing.deferred_records is True
    with pytest.raises(typer.Exit):
        config_from_values({"device": "cpu", "run_timeout": 60.0, "timing.kb_budget_ms": -1.0})
    assert "kb_budget_ms" in capsys.readouterr().err


class DeferredSide(FakeSide):
    """A GPU side whose rounds are deferred: each round answers its 'events' (twice the
    kernel time) until `finish_rounds` fills in the kernel time; every step notes whether
    the timing lock (`lock["held"]`) was held at the time."""

    cuda = True

    def __init__(self, ms: float, lock: dict, noise: float = 0.0, seed: int = 0):
        super().__init__(ms, noise, seed)
        self.lock, self.pending, self.log = lock, [], []

    def round(self, n: int, check=None, defer: bool = False) -> Round:
        self.log.append(("round" if defer else "plain", self.lock["held"]))
        r = super().round(n, check)
        if not defer:
            return r
        self.pending.append((r, list(r.times_ms)))
        r.times_ms = [2 * t for t in r.times_ms]  # the events, until the records are read
        return r

    def close_rounds(self) -> None:
        self.log.append(("close", self.lock["held"]))

    def finish_rounds(self) -> list[Round]:
        self.log.append(("read", self.lock["held"]))
        for r, kernel in self.pending:
            r.times_ms, r.method = kernel, "kernel_time"
        done, self.pending = [r for r, _ in self.pending], []
        return done


def _lock_counter():
    from contextlib import contextmanager

    lock = {"held": False, "holds": 0}

    @contextmanager
    def hold():
        assert not lock["held"]
        lock["held"], lock["holds"] = True, lock["holds"] + 1
        try:
            yield
        finally:
            lock["held"] = False

    return lock, hold


def test_deferred_rounds_run_under_the_lock_and_their_records_are_read_after_it():
    lock, hold = _lock_counter()
    cfg = TimingConfig(min_rounds=5, max_rounds=30, round_ms=1.0, budget_ms=1e9, kb_trials=0)
    ref, cand = DeferredSide(2.0, lock, 0.001, 1), DeferredSide(1.0, lock, 0.001, 2)
    comp = compare(ref, cand, cfg, check_rounds={2: 0}, final_check=1, rng=random.Random(0), hold=hold)
    # one hold, the same rounds as without deferral: five pairs and the checked last one
    assert lock["holds"] == 1 and comp.stages["holds"] == 1
    assert comp.stopped == "converged" and comp.rounds == 6
    assert [i for i, (_, c) in enumerate(cand.rounds) if c is not None] == [2, 5]
    for side in (ref, cand):
        assert side.log == [("round", True)] * 6 + [("close", True), ("read", False)]
    # the speedup and the medians are the kernel times read afterwards, not the events
    assert abs(comp.speedup - 2.0) < 0.01 and abs(comp.reference.median_ms - 2.0) < 0.01
    assert comp.reference.method == "kernel_time" and comp.stages["timed_ms"]["candidate"] < 6 * 3 * 1.1


def test_deferred_rounds_that_do_not_converge_take_the_lock_again_per_batch():
    lock, hold = _lock_counter()
    cfg = TimingConfig(min_rounds=5, max_rounds=8, round_ms=1.0, budget_ms=1e9, min_calls=3, max_calls=3, kb_trials=0)
    ref, cand = DeferredSide(1.0, lock, 0.5, 3), DeferredSide(1.0, lock, 0.5, 4)
    comp = compare(ref, cand, cfg, final_check=0, rng=random.Random(1), hold=hold)
    # 5 pairs and the checked one, read, not converged: 3 more pairs (the limit) and a checked one
    assert comp.stopped == "max_rounds" and lock["holds"] == 2 and comp.rounds == 10
    assert [i for i, (_, c) in enumerate(cand.rounds) if c is not None] == [5, 9]
    for side in (ref, cand):
        assert side.log == ([("round", True)] * 6 + [("close", True), ("read", False)]
                            + [("round", True)] * 4 + [("close", True), ("read", False)])
    assert comp.speedup_ci[0] < 1.0 < comp.speedup_ci[1]


def test_sides_without_deferral_run_every_round_inside_the_one_hold():
    lock, hold = _lock_counter()
    cfg = TimingConfig(min_rounds=5, round_ms=1.0, budget_ms=1e9, kb_trials=0)
    comp = compare(FakeSide(2.0, 0.001, 1), FakeSide(1.0, 0.001, 2), cfg, final_check=0, hold=hold)
    assert lock["holds"] == 1 and comp.rounds == 6 and comp.stages["records_read_s"] == 0.0
    off = TimingConfig(min_rounds=5, round_ms=1.0, budget_ms=1e9, kb_trials=0, deferred_records=False)
    ref, cand = DeferredSide(2.0, lock, 0.001, 1), DeferredSide(1.0, lock, 0.001, 2)
    comp = compare(ref, cand, off, final_check=0, hold=hold)
    assert comp.stopped == "converged" and lock["holds"] == 2 and comp.rounds == 6
    assert ref.log == cand.log == [("plain", True)] * 6  # each round read at once, under the lock


def test_two_sides_in_one_process_read_each_round_at_once(monkeypatch):
    """A process has one profiler session at a time: two GPU Benches of one process (guards
    off, the PTX evaluator) must not each keep one open across rounds."""
    asked = []

    def fake_round(self, n, check=None, defer=False):
        asked.append(defer)
        return Round([1.0] * n, float(n))

    monkeypatch.setattr(Bench, "round", fake_round)
    monkeypatch.setattr(Bench, "warm", lambda self, ms: 1.0)
    a, b = Bench(lambda: None, "cpu", TimingConfig()), Bench(lambda: None, "cpu", TimingConfig())
    a.cuda = b.cuda = True  # as on a GPU; nothing here touches one
    comp = compare(a, b, TimingConfig(min_rounds=5, round_ms=1.0, kb_trials=0), final_check=0)
    assert comp.rounds == 6 and asked == [False] * 12


def test_a_batch_of_deferred_rounds_is_split_by_its_markers():
    from kernelmill.verify.measure.kernel_time import KernelRecord

    recs, corr = [], 0

    def add(name, dur):
        nonlocal corr
        corr += 1
        recs.append(KernelRecord(name, corr * 1_000_000, corr * 1_000_000 + dur, 7, corr))

    for n, dur in ((2, 5_000), (3, 9_000)):  # two rounds in one session: 2 calls of 5 us, 3 of 9 us
        add("between_rounds_sync(void)", 100)
        for _ in range(n):
            add("at::native::FillFunctor", 30_000)  # the L2 flush, outside every call
            add("spin_kernel(long)", 100_000)
            add("my_kernel(float*)", dur)
            add("spin_kernel(long)", 1_000)
    b = Bench(lambda: None, "cpu", TimingConfig())
    first, second = Round([1.0, 1.0], 2.0, events_ms=[1.0, 1.0]), Round([2.0] * 3, 6.0, events_ms=[2.0] * 3)
    b._fill([(first, 2), (second, 3)], recs, "")
    assert first.times_ms == [0.005, 0.005] and second.times_ms == [0.009] * 3
    assert first.method == second.method == "kernel_time" and first.events_ms == [1.0, 1.0]
    lost = [Round([1.0], 1.0), Round([1.0], 1.0)]
    b._fill([(r, 1) for r in lost], recs, "")  # 10 markers for 2 calls: nothing is guessed
    assert all(r.method == "events" and "spin markers" in r.trace_note for r in lost)
    b._fill([(lost[0], 1)], None, "the profiler did not start")
    assert lost[0].trace_note == "the profiler did not start"


def test_the_candidate_s_deferred_rounds_come_back_held_to_their_calls():
    import pytest

    from kernelmill.verify.process.channel import ChannelError, RemoteSide

    class Pipe:
        def __init__(self, answers):
            self.sent, self.answers = [], list(answers)

        def send(self, msg):
            self.sent.append(msg)

        def expect(self, key, whole=False):
            msg = self.answers.pop(0)
            assert key in msg
            return msg if whole else msg[key]

    events = {"times_ms": [2.0, 2.0], "wall_ms": 5.0, "events_ms": [2.0, 2.0]}
    read = {"times_ms": [1.0, 1.5], "wall_ms": 5.0, "events_ms": [2.0, 2.0], "method": "kernel_time"}
    pipe = Pipe([events, events, {"closed": True}, {"rounds": [read, read]}])
    side = RemoteSide(pipe, pipe)
    rounds = [side.round(2, defer=True), side.round(2, defer=True)]
    side.close_rounds()
    assert side.finish_rounds() == rounds and rounds[1].times_ms == [1.0, 1.5] and rounds[1].method == "kernel_time"
    assert [m.get("defer") for m in pipe.sent] == [True, True, None] and pipe.sent[2] == {"cmd": "close"}
    for answer in ({"rounds": [read]}, {"rounds": [read, {**read, "times_ms": [1.0]}]}, {"rounds": "no"},
                   {"rounds": [read, {"times_ms": "x", "wall_ms": 1}]}):
        pipe = Pipe([events, events, answer])
        side = RemoteSide(pipe, pipe)
        side.round(2, defer=True), side.round(2, defer=True)
        with pytest.raises(ChannelError):
            side.finish_rounds()
