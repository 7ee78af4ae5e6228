"""The settings of a measurement, as plain records without torch: how to time
(`TimingConfig`) and how to check (`CheckRule`, `DEFAULT_TOLERANCES`). The job files
(process/job.py) carry them nested, the worker reads its job before it imports torch, and
`VerifyConfig` builds them without importing torch."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TimingConfig:
    warmup_ms: float = 25.0  # per side, before the first round (also sizes the rounds)
    round_ms: float = 20.0  # timed time per side per round
    min_rounds: int = 5
    max_rounds: int = 30
    budget_ms: float = 600.0  # timed time per side, all rounds together
    target_rse: float = 0.01  # stop once the speedup's relative standard error is below this
    min_calls: int = 3  # calls per round
    max_calls: int = 1000
    flush_l2: bool = True
    # GPU time the device spins after the flush, before the start event, so the
    # host's launch of the call is queued before the GPU reaches it even on a
    # loaded host (a 5 us kernel read 25-35 us when the host fell behind)
    launch_cover_us: float = 100.0
    cpu_threads: int = 1  # intra-op threads of each side's process on a CPU (both the same)
    # CPU calls shorter than this are timed in blocks of calls this long (1 call above it)
    cpu_block_us: float = 200.0
    # GPU: the primary figure is each call's GPU time from the device's activity records
    # (verify/measure/kernel_time.py); CUDA events stay as the cross-check. Off: events only
    kernel_time: bool = True
    # read the rounds' device records after the timing lock is let go (timing.compare): one
    # profiler session for a batch of rounds, whose stop (host work) no longer holds the GPU
    deferred_records: bool = True
    # events and kernel time may differ by this factor before a verdict says so
    events_margin: float = 1.15
    # numerics of the timed calls: "pytorch" = PyTorch's defaults (cuDNN may use TF32,
    # matmuls may not), as KernelBench and a plain do_bench time them; "strict" = TF32 off
    # everywhere, as the correctness trials run (docs/SEMANTICS.md, "Numerics")
    numerics: str = "pytorch"
    # trials of the KernelBench-convention figure (`speedup_kernelbench`): a synchronize,
    # a 256 MB L2 fill, events around one call, a synchronize; the mean. 0: not measured
    kb_trials: int = 100
    # ... fewer where a call is slow: at most this much GPU time per side (never under
    # kb_min_trials). A 36 ms-a-call model's 100 trials held the timing lock 25 s of its 47 s
    # in the cold cuda-l1 audit, the convention's trials 67 s of all runs' 195 s; the mean of
    # 20 trials of a call that long moves by well under 1% (docs/SEMANTICS.md). 0: no cap
    kb_budget_ms: float = 2000.0
    kb_min_trials: int = 20
    # relative spread (sd of the log speedup) between fresh processes, added to every
    # interval: the rounds of one process do not see it (benchmarks/timing_fidelity.py
    # --repeat measures it; docs/results/benchmarks_history.md holds the figure)
    process_spread: float = 0.03


DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    # dtype name -> (atol, rtol)
    "float64": (1e-4, 1e-4),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (1e-2, 1e-2),
}


@dataclass
class CheckRule:
    mode: str = "allclose"  # "allclose" | "max_norm_abs"
    tolerances: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    norm_tol: float = 1e-3
    # the float64 error budget beside the rule (measure/oracle.py): k, or 0 for none
    fp64_k: float = 0.0

    def __post_init__(self) -> None:  # (atol, rtol) pairs, also when read back from JSON lists
        self.tolerances = {k: tuple(v) for k, v in self.tolerances.items()}
