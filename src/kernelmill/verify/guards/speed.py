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

# peak DRAM/HBM bandwidth in bytes/s by device-name fragment (vendor datasheets)
PEAK_BANDWIDTH = [
    ("H200", 4.8e12), ("H100 NVL", 3.9e12), ("H100 PCIe", 2.0e12), ("H100", 3.35e12), ("H800", 3.35e12),
    ("B200", 8.0e12), ("GH200", 4.0e12), ("A100-SXM4-80GB", 2.039e12), ("A100 80GB PCIe", 1.935e12),
    ("A100", 1.555e12), ("A10G", 0.6e12), ("A10", 0.6e12), ("L40S", 0.864e12), ("L40", 0.864e12),
    ("L4", 0.3e12), ("RTX 4090", 1.008e12), ("RTX 3090", 0.936e12), ("V100", 0.9e12), ("T4", 0.32e12),
]
CPU_MARGIN = 4.0  # a CPU kernel may beat a plain copy_ through SIMD or fewer passes, not 4x


def gpu_peak_bandwidth(device: torch.device) -> float | None:
    props = torch.cuda.get_device_properties(device)
    for fragment, bw in PEAK_BANDWIDTH:
        if fragment in props.name:
            return bw
    clock_khz = getattr(props, "memory_clock_rate", 0)
    bus_bits = getattr(props, "memory_bus_width", 0)
    if clock_khz and bus_bits:
        return 2.0 * clock_khz * 1e3 * bus_bits / 8  # double data rate
    return None


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
