"""Speed of light: how close a candidate's GPU time is to the task's lower bound.

The bound is the larger of the task's FLOPs at the GPU's peak arithmetic rate and its
minimum bytes (inputs, parameters and outputs, each moved once: `dsl.features`) at the
GPU's peak memory bandwidth, as SOL-ExecBench scores kernels. `sol_fraction` =
bound / candidate time: 1.0 would be a kernel at the roofline; 0.05 leaves 20x.

The arithmetic peak is the one the task's dtype runs at without changing precision:
float32 on the CUDA cores (SMs x FP32 lanes x 2 x boost clock), float16/bfloat16 on the
tensor cores (a table of dense peaks by GPU). A float32 convolution that cuDNN runs in
TF32 (allowed under PyTorch's numerics) can pass the float32 bound: its fraction can
exceed 1, and that says which kind of work it is rather than that the measure is wrong.
"""

from __future__ import annotations

from typing import Any

# dense tensor-core peaks (FLOP/s) for 16-bit floats, by a fragment of the device name
# (vendor datasheets, SXM parts)
TENSOR_PEAK_16 = (("H200", 989e12), ("H100", 989e12), ("A100", 312e12), ("L40S", 362e12), ("L40", 181e12),
                  ("RTX 3090", 71e12), ("B200", 2250e12))
# peak memory bandwidth (bytes/s) by a fragment of the device name (vendor datasheets);
# first match wins, so the more specific names come first
PEAK_BANDWIDTH = [
    ("H200", 4.8e12), ("H100 NVL", 3.9e12), ("H100 PCIe", 2.0e12), ("H100", 3.35e12), ("H800", 3.35e12),
    ("B200", 8.0e12), ("GH200", 4.0e12), ("A100-SXM4-80GB", 2.039e12), ("A100 80GB PCIe", 1.935e12),
    ("A100", 1.555e12), ("A10G", 0.6e12), ("A10", 0.6e12), ("L40S", 0.864e12), ("L40", 0.864e12),
    ("L4", 0.3e12), ("RTX 4090", 1.008e12), ("RTX 3090", 0.936e12), ("V100", 0.9e12), ("T4", 0.32e12),
]
# FP32 lanes per SM by compute capability (sm_80: 64; later: 128)
_FP32_LANES = {(8, 0): 64}


def peak_rates(device) -> dict[str, float] | None:
    """{bandwidth (bytes/s), float32, float16, bfloat16 (FLOP/s)} of a CUDA device; None elsewhere."""
    import torch

    if torch.device(device).type != "cuda":
        return None
    props = torch.cuda.get_device_properties(device)
    clock_hz = (getattr(props, "clock_rate", 0) or 0) * 1e3 or 1.98e9
    lanes = _FP32_LANES.get((props.major, props.minor), 128)
    out: dict[str, float] = {"float32": props.multi_processor_count * lanes * 2 * clock_hz}
    bw = gpu_peak_bandwidth(device)
    if bw:
        out["bandwidth"] = bw
    for fragment, peak in TENSOR_PEAK_16:
        if fragment in props.name:
            out["float16"] = out["bfloat16"] = peak
            break
    return out


def bound_ms(flops: float, nbytes: float, dtypes: list[str], peaks: dict[str, float]) -> float | None:
    """The task's lower bound in ms, or None when a needed peak is unknown."""
    if not peaks or "bandwidth" not in peaks:
        return None
    compute = [d for d in dtypes if d in ("float32", "float16", "bfloat16")]
    rate = min((peaks[d] for d in compute if d in peaks), default=peaks.get("float32"))
    if not rate:
        return None
    return max(flops / rate, nbytes / peaks["bandwidth"]) * 1e3


FLOOR_SLACK = 4.0  # fast algorithms do fewer FLOPs than the traced ones: Winograd 2.25x, symmetry 2x


def arithmetic_floor_ms(flops: float, peaks: dict[str, float] | None, slack: float = FLOOR_SLACK) -> float | None:
    """The time below which no kernel can do the task's traced `flops` on this GPU: its
    fastest tensor-core rate known here (16-bit dense) doubled for fp8, divided by
    `slack` for algorithms that skip work honestly. Item 22 of issue 42: a call forged to
    ~0 time is flagged as suspicious_speed (item 15 does the same for bytes)."""
    rates = [v for k, v in (peaks or {}).items() if k != "bandwidth" and v]
    if not flops or not rates:
        return None
    return flops / (2 * max(rates)) / slack * 1e3


def sol_fraction(features: Any, peaks: dict[str, float] | None, runtime_ms: float | None) -> float | None:
    """bound / runtime from a task's `dsl.features.Features` (None if either is unknown)."""
    if features is None or getattr(features, "error", None) or not runtime_ms or runtime_ms <= 0:
        return None
    b = bound_ms(features.flops, features.bytes_moved, list(features.dtypes), peaks or {})
    return round(b / runtime_ms, 5) if b else None


def gpu_peak_bandwidth(device) -> float | None:
    """Peak memory bandwidth (bytes/s) of a CUDA device: the table, else from its memory clock and bus."""
    import torch

    props = torch.cuda.get_device_properties(device)
    for fragment, bw in PEAK_BANDWIDTH:
        if fragment in props.name:
            return bw
    clock_khz = getattr(props, "memory_clock_rate", 0)
    bus_bits = getattr(props, "memory_bus_width", 0)
    if clock_khz and bus_bits:
        return 2.0 * clock_khz * 1e3 * bus_bits / 8  # double data rate
    return None
