"""Session 29's fourth probe: in a real kernelmill run every candidate's process answered 801
(CUDA_ERROR_NOT_SUPPORTED) to its supervisor's cuCheckpointProcessGetState, while plain,
forked, scrubbed-env and warmed-up children answer 0 (ckpt_probe2/3). Who is it: the asker or
the process? While a candidate of tests/verify/test_gpu_lend_gpu.py's builds its model, this
process (plain, CUDA on) asks every kernelmill process; then a caller forked the way a zygote's
worker is (torch imported, CUDA first opened after the fork) asks a plain child. Marks the
candidate's process by /proc/PID/comm ("km candidate"). Prints JSON lines."""
import json
import os
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, os.environ["KM_SRC"])
sys.path.insert(0, os.path.join(os.environ["KM_SRC"], "..", "tests", "verify"))
from kernelmill.verify.measure.gpu_lend import DriverFreeze  # noqa: E402


def comm(pid):
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return "?"


def main():
    torch.zeros(1, device="cuda")
    f = DriverFreeze()
    import test_gpu_lend_gpu as t
    from kernelmill.records import Sample, Task
    from kernelmill.verify import VerifyConfig, verify_samples

    task = Task(task_id="t/slow", code=t.SLOW_TASK, name="slow", level=1)
    cfg = VerifyConfig(device="cuda", trials=2, gpu_lend=False, cache_dir="/tmp/probe4_cache")
    th = threading.Thread(target=lambda: verify_samples({task.task_id: task}, [Sample("slow", task.task_id, "torch", t.SLOW_CAND)], cfg))
    th.start()
    t0 = time.monotonic()
    me = os.getpid()
    seen = {}
    while th.is_alive() and time.monotonic() - t0 < 90:  # every kernelmill process with CUDA, every 0.5 s
        for e in os.listdir("/proc"):
            if e.isdigit() and int(e) != me:
                rc, st = f.state(int(e))
                if rc != 3:  # 3: no CUDA in that process
                    key = (int(e), comm(int(e)), rc, st)
                    seen.setdefault(key, round(time.monotonic() - t0, 1))
        time.sleep(0.5)
    print(json.dumps({"case": "asked_by_plain_process", "first_seen_s": [[*k, v] for k, v in seen.items()]}), flush=True)
    th.join(120)
    code = ("import os, sys, json, subprocess, time, torch\n"
            f"sys.path.insert(0, {os.environ['KM_SRC']!r})\n"
            "from kernelmill.verify.measure.gpu_lend import DriverFreeze\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    torch.zeros(1, device='cuda')\n"
            "    c = subprocess.Popen([sys.executable, '-c', \"import torch, time; torch.zeros(1, device='cuda'); print('r', flush=True); time.sleep(20)\"], stdout=subprocess.PIPE, text=True)\n"
            "    c.stdout.readline()\n"
            "    print(json.dumps({'case': 'forked_asker', 'state': DriverFreeze().state(c.pid)}), flush=True)\n"
            "    c.kill(); os._exit(0)\n"
            "os.waitpid(pid, 0)\n")
    print(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip(), flush=True)


main()
