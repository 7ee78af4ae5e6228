"""The GPU's SM clock and throttle reasons before and after a measurement (NVML).

Read through `nvidia-ml-py` (pynvml, the `gpu` extra) in about a millisecond; without it
the verdict records no clocks (nvidia-smi costs 0.05-0.3 s a call: environment.py reads it
once, after the timing). Nothing here changes a clock or a setting of the GPU.

A verdict whose clock moved by more than `MOVED` between the two readings, or whose GPU
entered a power, thermal or hardware slowdown during the measurement, gets the flag
`clocks_moved`: its times were taken at two speeds.
"""

from __future__ import annotations

import functools
import os

MOVED = 0.10  # relative SM clock change that makes a measurement suspect
# throttle reasons that slow the SM on their own (idle and application-clock settings do not
# say the measurement changed speed); NVML's clocksEventReasons bit values
_SLOWDOWNS = {0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x20: "sw_thermal", 0x40: "hw_thermal",
              0x80: "hw_power_brake"}


@functools.lru_cache(maxsize=None)
def _handle(index: int):
    import pynvml

    pynvml.nvmlInit()  # once per GPU and process: the handle is kept
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    physical = visible[index].strip() if index < len(visible) and visible[index].strip() else str(index)
    if physical.isdigit():
        return pynvml.nvmlDeviceGetHandleByIndex(int(physical))
    return pynvml.nvmlDeviceGetHandleByUUID(physical)


def read(index: int) -> dict | None:
    """{sm_clock_mhz, slowdowns: [...]} of visible GPU `index`; None without NVML."""
    try:
        import pynvml

        h = _handle(index)
        clock = pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
        try:
            bits = pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)
        except (AttributeError, pynvml.NVMLError):
            bits = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        return {"sm_clock_mhz": int(clock), "slowdowns": [n for b, n in _SLOWDOWNS.items() if bits & b]}
    except Exception:  # noqa: BLE001 - no pynvml, no driver, a device NVML does not know: no reading
        return None


def read_device(device) -> dict | None:
    """`read` for a torch device (None on a CPU)."""
    if device.type != "cuda":
        return None
    from .environment import gpu_index

    return read(gpu_index(device))


def judge(before: dict | None, after: dict | None) -> str:
    """A sentence when the clocks moved between the two readings, else ''."""
    if not before or not after:
        return ""
    a, b = before["sm_clock_mhz"], after["sm_clock_mhz"]
    new = sorted(set(after["slowdowns"]) - set(before["slowdowns"]))
    if a and abs(b - a) / a > MOVED:
        return f"the SM clock moved from {a} to {b} MHz during the measurement"
    if new:
        return f"the GPU entered {', '.join(new)} during the measurement"
    return ""
