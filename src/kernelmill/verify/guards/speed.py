"""Item 15: a speed the memory system cannot deliver.

A candidate must at least read its inputs and parameters once and write its
outputs once. Dividing those bytes by the device's peak memory bandwidth gives
a time no correct kernel can beat (on a GPU, where the timer flushes L2
between calls). On a CPU, caches make the DRAM figure meaningless for small
tasks, so the bound is the fastest measured ``copy_`` of the same number of bytes (same
cache level), timed in the same interleaved loop as the candidate (so under the
same load), divided by a safety margin.
"""

from __future__ import annotations

import torch

from ..measure.sol import gpu_peak_bandwidth

CPU_MARGIN = 4.0  # a CPU kernel may beat a plain copy_ through SIMD or fewer passes, not 4x


def fastest_possible_ms(nbytes: int, device: torch.device, copy: dict | None = None) -> tuple[float | None, str]:
    """(a runtime no correct candidate can beat, how it was derived). On a CPU,
    `copy` is the timing (``Timing.to_dict()``) of a copy_ of `nbytes` bytes."""
    if nbytes <= 0:
        return None, "no bytes"
    if device.type == "cuda":
        bw = gpu_peak_bandwidth(device)
        if bw is None:
            return None, "unknown GPU bandwidth"
        return nbytes / bw * 1e3, f"{nbytes} bytes / {bw / 1e9:.0f} GB/s peak"
    if copy is None:
        return None, "on a CPU the bound is a copy_ timed beside the candidate (guards.candidate)"
    # the fastest copy_, not the median: a loaded machine slows the copy's thread
    # pool far more than a single-threaded candidate (CI saw a 0.5 MB copy_ at a
    # 4.2 ms median), and the least disturbed call is the truest floor
    copy_ms = copy["min_ms"]
    return copy_ms / CPU_MARGIN, f"the fastest copy_ of {nbytes} bytes ({copy_ms:.4f} ms, same loop) / {CPU_MARGIN:g}"


REACH_SAMPLES = 32  # input elements probed per floating-point input tensor


def _wilson_low(k: int, m: int, z: float = 1.96) -> float:
    """Lower end of the 95% Wilson interval for k successes in m trials."""
    if m == 0:
        return 1.0
    p = k / m
    centre = p + z * z / (2 * m)
    spread = z * ((p * (1 - p) / m + z * z / (4 * m * m)) ** 0.5)
    return max(0.0, (centre - spread) / (1 + z * z / m))


def input_reach(ref, args: list, samples: int = REACH_SAMPLES, seed: int = 0) -> list[float]:
    """For each tensor of `args` (``inputs.tensors_in`` order), the share of its
    bytes a correct kernel must read: the bound above counts every input byte,
    but some tasks ignore part of their input (a causal mask overwrites the
    upper triangle, so a kernel may skip reading it; an H100 run of such a
    TileLang kernel was flagged at 100.2% of peak bandwidth). Probe: put a NaN
    in one random element, run the reference, see whether the output changed;
    `samples` elements per floating-point tensor. Where every probed element
    mattered the share is 1; otherwise the lower end of its 95% interval, so
    the bound only ever gets looser on evidence. Integer tensors count whole.
    The reference must not write into its inputs (the caller checks)."""
    from ..measure.inputs import tensors_in  # noqa: PLC0415

    tensors = tensors_in(args)
    base = ref(*args)
    base_t = [t for t in tensors_in(base) if isinstance(t, torch.Tensor)]
    if any(t.is_floating_point() and bool(torch.isnan(t).any()) for t in base_t):
        return [1.0] * len(tensors)  # NaN already in the answer: nothing to learn from a NaN probe
    gen = torch.Generator().manual_seed(seed)
    out = []
    for t in tensors:
        if not t.is_floating_point() or t.numel() == 0:
            out.append(1.0)
            continue
        flat = t.view(-1) if t.is_contiguous() else None
        if flat is None:
            out.append(1.0)
            continue
        picks = torch.randint(0, t.numel(), (min(samples, t.numel()),), generator=gen).tolist()
        hit = 0
        for i in picks:
            old = flat[i].clone()
            flat[i] = float("nan")
            try:
                got = [x for x in tensors_in(ref(*args)) if isinstance(x, torch.Tensor)]
            finally:
                flat[i] = old
            hit += any(not torch.equal(a, b) for a, b in zip(got, base_t)) or len(got) != len(base_t)
        out.append(1.0 if hit == len(picks) else _wilson_low(hit, len(picks)))
    return out


def needed_bytes(inputs: list, reach: list[float] | None) -> int:
    """Input bytes a correct kernel must read, given `input_reach` shares."""
    from ..measure.inputs import tensors_in  # noqa: PLC0415

    tensors = tensors_in(inputs)
    if not reach or len(reach) != len(tensors):
        return sum(t.numel() * t.element_size() for t in tensors)
    return int(sum(t.numel() * t.element_size() * r for t, r in zip(tensors, reach)))
