"""Session 29's second probe: the driver's checkpoint state of a process, by how it was started
and who asks (in a kernelmill run every candidate answered an error; ckpt_probe.py's children
did not). Prints one JSON line per variant: (return code, state)."""
import ctypes
import json
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.environ["KM_SRC"])
from kernelmill.verify.measure.gpu_lend import DriverFreeze  # noqa: E402

CHILD = "import torch, time; torch.zeros(1, device='cuda'); print('ready', flush=True); time.sleep(20)"
# a zygote-like parent: torch imported, no CUDA; its forked child opens CUDA
FORKER = ("import os, sys, time, torch\n"
          "pid = os.fork()\n"
          "if pid == 0:\n"
          "    torch.zeros(1, device='cuda'); print(os.getpid(), flush=True); time.sleep(20); os._exit(0)\n"
          "os.waitpid(pid, 0)\n")


def ask(f, pid):
    return f.state(pid)


def main():
    torch.zeros(1, device="cuda")
    f = DriverFreeze()
    out = {}
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    out["plain_child"] = ask(f, p.pid)
    q = subprocess.Popen([sys.executable, "-c", FORKER], stdout=subprocess.PIPE, text=True)
    gpid = int(q.stdout.readline())
    out["forked_grandchild"] = ask(f, gpid)
    from kernelmill.verify.sandbox import scrubbed_env
    r = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=scrubbed_env({"CUDA_VISIBLE_DEVICES": "0"}))
    r.stdout.readline()
    out["scrubbed_env_child"] = ask(f, r.pid)
    out["scrubbed_env_keys"] = sorted(scrubbed_env({}).keys())
    ctypes.CDLL(None).prctl(4, 0)  # this process not dumpable, as a supervisor (_no_dumping)
    out["plain_child_from_nondumpable"] = ask(f, p.pid)
    out["forked_grandchild_from_nondumpable"] = ask(f, gpid)
    print(json.dumps(out), flush=True)
    for x in (p, q, r):
        x.kill()
    os.system(f"kill -9 {gpid} 2>/dev/null")


main()
