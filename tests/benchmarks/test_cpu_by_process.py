"""benchmarks/cpu_by_process.py: a command's CPU by kind of process, its samples checked
against the kernel's total for the tree."""

from __future__ import annotations

import json
import subprocess
import sys
from benchmark_support import REPO as ROOT, load_benchmark


def test_kinds_by_name_and_command_line():
    cbp = load_benchmark("cpu_by_process")
    assert cbp.own_kind("cc1plus", "/usr/lib/gcc/cc1plus -quiet x.cpp") == "compiler"
    assert cbp.own_kind("km standby", "python -m kernelmill.verify.pools.zygote run 5") == "km standby"
    assert cbp.own_kind("python3", "python -m kernelmill.verify.process.worker build /j.json") == "km build"
    assert cbp.own_kind("python3", "python -m kernelmill.verify.build.inline_build pch /c k g++ [] 5") == "km header builder"
    assert cbp.own_kind("python3", "python -m kernelmill verify tasks s.jsonl") == "km harness"
    assert cbp.own_kind("nvidia-smi", "nvidia-smi --query-gpu=clocks.sm") is None  # its parent's kind


# a parent that names a child "km build", which spins for a while and starts a child of
# its own named as no kind (it counts as the build's). Each spins for 0.8 s of its own CPU
# time, not of the wall clock: on a loaded machine a wall-clock spin got less CPU (0.8 < 1.0)
TREE = '''
import os, subprocess, sys, time
code = ("import os, subprocess, sys, time\\n"
        "open('/proc/self/comm', 'w').write('km build')\\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time\\\\nt = time.process_time()\\\\nwhile time.process_time() - t < 0.8: pass'])\\n"
        "t = time.process_time()\\n"
        "while time.process_time() - t < 0.8: pass\\n"
        "p.wait()\\n")
subprocess.run([sys.executable, "-c", code], check=True)
'''


def test_a_tree_is_counted_by_kind(tmp_path):
    out = tmp_path / "cpu.json"
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cpu_by_process.py"), "--out", str(out),
                          "--interval", "0.05", "--", sys.executable, "-c", TREE], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    report = json.loads(out.read_text())
    kinds = report["by_kind"]
    assert kinds["km build"]["processes"] == 2  # the named one and its unnamed child
    assert kinds["km build"]["cpu_s"] >= 1.0  # two spins of 0.8 s
    assert 0.8 <= report["sampled_share"] <= 1.3  # the samples agree with the kernel's total
    assert "CPU-s" in res.stderr and "km build" in res.stderr
