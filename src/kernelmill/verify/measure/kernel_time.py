"""GPU time of a call from the device's own records (CUPTI activity, through kineto).

The primary timing measure (docs/SEMANTICS.md, "Timing"): a timed call's GPU time is the
time the device spent running work the call launched, on every stream it used: the union
of the intervals of the kernels, copies and memsets whose launch came from inside the call.
Idle gaps while the host is still launching (a launch-bound forward) are not GPU time; CUDA
events around the call count them, which is why events read a launch-bound reference at
1.4-1.7x an independent figure (benchmarks/diag/speedup_errors.py, issue 39) and why they
stay only as a cross-check.

Attribution is by launch order, not by subtracting anything: CUPTI gives each record the
correlation id of the host call that launched it (a graph's kernels share their graph
launch's id), and ids grow in launch order across the process's threads. The harness
launches a one-thread spin kernel right before each call (the launch cover, or a 1-cycle
spin) and another right after it: what lies between two markers in id order is the call's;
what lies outside (the L2 flush, the input refill) is the harness's. A round whose marker
count is not two per call (a candidate that launches the same spin kernel) is left
unattributed and timed by its events, and says so.

Nothing here runs the GPU: `KernelRecord` lists come from `records_from_kineto` (the
profiler's results) or from a test, so the attribution is checked on recorded traces on a
CPU. Kineto (torch.profiler's backend) is used rather than the `cupti-python` package:
it ships inside torch, needs no second CUPTI subscriber (drivers before r610 allow one), and
the guards already start it in every GPU process (guards/trace.py).
`benchmarks/timing_fidelity.py`'s independent side reads the device records through
`torch.profiler.profile` with one session around each call, and none of this code.
Cost (benchmarks/timing_cost.py, an H200): a session's stop takes 45-60 us per device
record, most of a short call's round (session_2026-11-30i).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ... import languages

MARKER = "spin_kernel"  # torch.cuda._sleep's kernel: the harness's call boundaries


@dataclass(frozen=True)
class KernelRecord:
    name: str
    start_ns: int
    end_ns: int
    stream: int
    correlation: int

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)


@dataclass
class CallTrace:
    """The device work one timed call launched."""

    records: list[KernelRecord] = field(default_factory=list)

    @property
    def busy_ns(self) -> int:
        return busy_ns(self.records)

    @property
    def span_ns(self) -> int:
        work = [r for r in self.records if r.duration_ns > 0]
        return max(r.end_ns for r in work) - min(r.start_ns for r in work) if work else 0


@dataclass
class RoundTrace:
    """A round's attribution: one `CallTrace` per call (None when ambiguous) and what
    ran outside every call (the harness's flush and refill, anything launched between calls)."""

    calls: list[CallTrace] | None
    outside: list[KernelRecord]
    why_not: str = ""  # why `calls` is None


def busy_ns(records: list[KernelRecord]) -> int:
    """Length of the union of the records' intervals: overlapping work on two streams
    counts once, a gap between kernels not at all."""
    spans = sorted((r.start_ns, r.end_ns) for r in records if r.end_ns > r.start_ns)
    total, cur_s, cur_e = 0, None, None
    for s, e in spans:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def kineto_profile(cuda: bool):
    """A kineto profiler session recording only the device's activity (`cuda`) or
    only the host's: `torch.profiler.profile(activities=[...])` without its
    wrapper. That wrapper's start asks `hasattr(torch, "_inductor")`, which makes
    torch import inductor, dynamo and sympy: 5.8-6.0 CPU-s on an H200 host, in
    every process that profiles, against 0.04 s for kineto's own start
    (benchmarks/diag/profiler_start.py, issue 14). Enter and exit it as a context
    manager; after the exit, `kineto_results` holds what ran (`function_events`
    is built only when read)."""
    from torch.autograd.profiler import profile

    return profile(use_cpu=not cuda, use_device="cuda" if cuda else None, use_kineto=True)


class DeviceTrace:
    """One round's device records: `start()`, the calls, `stop()` -> records, or None
    with `error` set when the profiler could not run (another session open in the
    process, a candidate that stopped it)."""

    def __init__(self):
        self.prof = None
        self.error = ""

    def start(self) -> None:
        try:
            self.prof = kineto_profile(cuda=True)
            self.prof.__enter__()
        except (RuntimeError, AssertionError) as exc:
            self.prof, self.error = None, f"the profiler did not start: {str(exc)[:160]}"

    def stop(self) -> list[KernelRecord] | None:
        if self.prof is None:
            return None
        try:
            self.prof.__exit__(None, None, None)
            return records_from_kineto(self.prof.kineto_results)
        except (RuntimeError, AssertionError, AttributeError) as exc:
            self.error = f"the profiler's records were lost: {str(exc)[:160]}"
            return None
        finally:
            self.prof = None


def records_from_kineto(results) -> list[KernelRecord]:
    """The device-side records of a kineto session's results (kernels, copies, memsets)."""
    out = []
    for e in results.events():
        if "CUDA" not in str(e.device_type()):
            continue
        out.append(KernelRecord(e.name(), int(e.start_ns()), int(e.end_ns()), int(e.device_resource_id()),
                                int(e.correlation_id())))
    return out


def attribute(records: list[KernelRecord], calls: int) -> RoundTrace:
    """Split a round's records into its `calls` calls by the harness's markers."""
    ordered = sorted(records, key=lambda r: (r.correlation, r.start_ns))
    marks = [i for i, r in enumerate(ordered) if MARKER in r.name]
    if len(marks) != 2 * calls:
        return RoundTrace(None, [r for r in ordered if MARKER not in r.name],
                          f"{len(marks)} spin markers for {calls} calls (the candidate launches spin kernels too)")
    traces: list[CallTrace] = []
    outside: list[KernelRecord] = []
    prev_end = -1
    for k in range(calls):
        a, b = marks[2 * k], marks[2 * k + 1]
        outside.extend(ordered[prev_end + 1:a])
        traces.append(CallTrace(ordered[a + 1:b]))
        prev_end = b
    outside.extend(ordered[prev_end + 1:])
    return RoundTrace(traces, outside)


# ------------------------------------------------------------------ provenance

# Whose code a kernel symbol is. Hand-written: no library maps a kernel's mangled
# name to the library that shipped it; these are the symbol families cuBLAS/cuBLASLt,
# cuDNN, CUTLASS, ATen and Triton emit on sm_80-sm_100 (seen in the dev corpus's traces).
_ORIGINS = (
    ("harness", re.compile(MARKER)),
    ("cudnn", re.compile(r"cudnn|implicit_convolve|xmma_fprop|xmma_dgrad|xmma_wgrad|fprop_|dgrad_|wgrad_|"
                         r"winograd|conv2d_grouped_direct|convolve_|fft2d_|fft3d_|precomputed_convolve|"
                         r"nchwToNhwc|nhwcToNchw|cask_cudnn|cutlass__5x_cudnn", re.I)),
    ("cublas", re.compile(r"gemm|gemv|cublas|sgemm|hgemm|dgemm|xmma_gemm|splitKreduce|gemmk1|gemmSN|"
                          r"dot_kernel|scal_kernel|axpy|nrm2|asum|batched_", re.I)),
    ("cutlass", re.compile(r"cutlass", re.I)),
    ("aten", re.compile(r"at::native|at::cuda|elementwise_kernel|reduce_kernel|vectorized_|"
                        r"unrolled_elementwise|index_elementwise|CatArrayBatchedCopy|softmax_warp|"
                        r"cunn_|distribution_elementwise|indexSelect|max_pool|avg_pool|batch_norm|"
                        r"layer_norm|upsample|Memcpy|Memset|fused_dropout|scatter_gather|radixSort|"
                        r"cub::|DeviceRadixSort|DeviceScan|DeviceReduce|sort_", re.I)),
    # the languages' own (languages/: Triton's, which torch.compile's inductor generates too)
    *((origin, re.compile(rx)) for origin, rx in languages.kernel_origins()),
    ("jit", re.compile(r"^fused_\w+$")),  # TorchScript's fuser (torch.jit.script / trace): no signature
)


def origins() -> tuple[str, ...]:
    """Every origin `origin` may answer but "own" and "harness" (what a task may forbid)."""
    return tuple(dict.fromkeys(label for label, _ in _ORIGINS if label != "harness")) + ("other",)


def own_kernel_names(code: str) -> frozenset[str]:
    """The kernels a candidate's source defines, in any language (`languages`)."""
    return languages.own_kernel_names(code)


def base_name(symbol: str) -> str:
    """`void ns::k<4, float>(float*, int)` -> `k`: the kernel's own identifier."""
    s = symbol.strip()
    if s.startswith("void "):
        s = s[5:]
    depth, cut = 0, len(s)
    for i, ch in enumerate(s):  # the first '(' outside template brackets ends the name
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            cut = i
            break
    s = s[:cut]
    s = re.sub(r"<.*>", "", s)
    return s.rsplit("::", 1)[-1].strip()


def origin(name: str, own: frozenset[str] = frozenset()) -> str:
    """`own` (a kernel the candidate's source defines), `harness`, `cudnn`, `cublas`,
    `cutlass`, `aten`, `triton` (compiler-generated, e.g. torch.compile), `jit`
    (TorchScript's fuser), or `other`:
    neither the candidate's by name nor a library family we know."""
    if own and languages.is_own_symbol(base_name(name), own):
        return "own"
    for label, pattern in _ORIGINS:
        if pattern.search(name):
            return label
    return "other"


def provenance(calls: list[CallTrace], outside: list[KernelRecord] | None = None, own: frozenset[str] = frozenset(),
               top: int = 12) -> dict:
    """What ran per call, from attributed calls: each kernel's symbol, launches per call,
    share of the calls' GPU time and origin; launches and streams per call; the time
    share by origin; and what the harness ran outside the calls."""
    n = max(1, len(calls))
    per: dict[str, list[float]] = {}
    launches, streams = [], set()
    total = 0
    for c in calls:
        launches.append(len(c.records))
        for r in c.records:
            p = per.setdefault(r.name, [0, 0])
            p[0] += 1
            p[1] += r.duration_ns
            total += r.duration_ns
            streams.add(r.stream)
    kernels = [{"symbol": name[:200], "per_call": round(c / n, 2), "share": round(t / total, 4) if total else 0.0,
                "origin": origin(name, own)} for name, (c, t) in sorted(per.items(), key=lambda kv: -kv[1][1])]
    by_origin: dict[str, float] = {}
    for k in kernels:
        by_origin[k["origin"]] = round(by_origin.get(k["origin"], 0.0) + k["share"], 4)
    launches.sort()
    out = {"kernels": kernels[:top], "kernels_more": max(0, len(kernels) - top),
           "launches_per_call": launches[len(launches) // 2] if launches else 0,
           "streams": len(streams), "by_origin": by_origin}
    if outside is not None:
        out["harness_kernels"] = sorted({r.name[:80] for r in outside})[:8]
    return out


def profiled_provenance(kernels: dict[str, float], own: frozenset[str] = frozenset()) -> dict:
    """Provenance from one profiled call's {kernel: device time} (guards/trace.py), for a
    candidate that was not timed (a rejection): symbols, time shares and origins only."""
    total = sum(kernels.values()) or 1.0
    rows = [{"symbol": k[:200], "share": round(t / total, 4), "origin": origin(k, own)}
            for k, t in sorted(kernels.items(), key=lambda kv: -kv[1])]
    by_origin: dict[str, float] = {}
    for r in rows:
        by_origin[r["origin"]] = round(by_origin.get(r["origin"], 0.0) + r["share"], 4)
    return {"kernels": rows[:12], "kernels_more": max(0, len(rows) - 12), "by_origin": by_origin,
            "source": "the profiled check call (not timed)"}
