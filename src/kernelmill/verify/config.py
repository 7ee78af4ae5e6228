"""Settings of a verification run (one dataclass; the CLI fills the same fields)."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..records import HARNESS_VERSION
from .correctness import DEFAULT_TOLERANCES
from .timing import TimingConfig


def default_cache_dir() -> Path:
    base = os.environ.get("KERNELMILL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "kernelmill")
    return Path(base)


@dataclass
class VerifyConfig:
    device: str = "auto"  # auto | cpu | cuda
    trials: int = 5  # correctness trials, each with fresh inputs
    build_timeout: float = 600.0  # seconds for importing/compiling a candidate
    run_timeout: float = 300.0  # seconds for checking and timing it
    workers: int = 0  # build processes; 0 = one per CPU core
    profile: str = "auto"  # size profile: auto (small on CPU, full on GPU) | small | full
    check: str = "allclose"  # allclose | max_norm_abs
    tolerances: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    norm_tol: float = 1e-3
    time: bool = True  # measure speed of correct candidates
    timing: TimingConfig = field(default_factory=TimingConfig)
    weight_seed: int = 42  # both models are built under this seed
    memory_limit_gb: float = 16.0  # host memory of one candidate's process tree
    max_procs: int = 128  # processes of one candidate's tree (fork bombs)
    output_limit: int = 8192  # bytes of stdout/stderr kept per phase
    cache_dir: str = field(default_factory=lambda: str(default_cache_dir()))
    fast_build: bool = True  # route load_inline through the shared cached builder (verify/inline_build.py)
    executor: str = "local"  # local | ray
    address: str | None = None  # Ray cluster address for executor=ray (None: start or join a local one)
    # reward-hacking guards (docs/guards.md): off | standard | strict
    guards: str = "standard"
    # candidates that fall back to PyTorch (item 7/8): reject | flag | allow
    fallback: str = "reject"
    # run workers started ahead per GPU (verify/standby.py): their start-up overlaps
    # the previous candidates' runs; -1 = auto (2 per GPU, none on CPU); 0 = start each
    # run process when its job comes
    standby: int = -1
    # run workers on a CPU device: 1 (default) so that no two timed runs share the
    # cores; more for correctness-heavy runs on many-core machines (timings are then
    # contended: the CLI warns). On CUDA there is one run worker per GPU.
    cpu_runners: int = 1

    def resolved_device(self) -> str:
        if self.device != "auto":
            return self.device
        from .devices import cuda_devices

        return "cuda" if cuda_devices() else "cpu"

    def resolved_profile(self, device: str) -> str:
        if self.profile != "auto":
            return self.profile
        return "full" if device == "cuda" else "small"

    def answer_key(self, device: str) -> str:
        """Hash of the settings that can change a verdict (not timeouts' effect on
        slow machines, not worker counts)."""
        relevant = {
            "trials": self.trials, "profile": self.resolved_profile(device), "check": self.check,
            "tolerances": {k: list(v) for k, v in sorted(self.tolerances.items())},
            "norm_tol": self.norm_tol, "time": self.time, "timing": asdict(self.timing),
            "weight_seed": self.weight_seed, "harness": HARNESS_VERSION,
            "guards": self.guards, "fallback": self.fallback,
        }
        return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()[:16]
