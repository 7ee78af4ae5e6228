"""benchmarks/diag/gpu_lock_share.py: the GPU lock's holders sampled from /proc/locks,
checked against a process that holds the lock for known stretches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from benchmark_support import REPO as ROOT

HOLDER = """
import time
from kernelmill.verify.measure.gpulock import gpu_lock
with gpu_lock('cuda:0', exclusive=True): time.sleep(0.8)
with gpu_lock('cuda:0', exclusive=False): time.sleep(0.8)
time.sleep(0.8)
with gpu_lock('cuda:0', exclusive=False): time.sleep(0.8)
"""


def test_shares_follow_what_was_held(tmp_path):
    env = {**os.environ, "KERNELMILL_GPU_LOCK_DIR": str(tmp_path)}
    out = tmp_path / "share.json"
    sampler = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "diag" / "gpu_lock_share.py"),
                                "--every-ms", "10", "--out", str(out)], env=env, stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        subprocess.run([sys.executable, "-c", HOLDER], env=env, check=True, timeout=60)
        time.sleep(0.3)
    finally:
        sampler.send_signal(2)
        sampler.wait(timeout=30)
    steady = json.loads(out.read_text())["steady"]
    # 3.2 s from the first hold to the last: 0.8 s timed, 1.6 s shared, 0.8 s idle
    assert 2.9 < steady["seconds"] < 4.0
    assert 0.18 < steady["timing_share"] < 0.32
    assert 0.62 < steady["any_share"] < 0.85
    assert steady["shared_only_share"] > 0.4
