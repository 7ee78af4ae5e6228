"""Session 29's fifth probe: the driver refuses to lock a process once kineto has started
(ckpt_probe3: 801 after `kineto_profile(cuda=False)`, the candidates' warm-up). What of that
start-up costs what, and what leaves a process lockable? Each variant in a fresh child that
prints its step times; the parent (through kernelmill's helper) locks and unlocks it."""
import glob
import json
import os
import site
import subprocess
import sys

sys.path.insert(0, os.environ["KM_SRC"])
from kernelmill.verify.measure.gpu_lend import DriverFreeze  # noqa: E402

PRE = f"""
import json, os, sys, time, ctypes, glob, site
sys.path.insert(0, {os.environ['KM_SRC']!r})
t = {{}}
s = time.perf_counter(); import torch; t['import_torch'] = time.perf_counter() - s
s = time.perf_counter(); torch.zeros(1, device='cuda'); torch.cuda.synchronize(); t['ctx'] = time.perf_counter() - s
from kernelmill.verify.guards.trace import kineto_profile
def cupti():
    for d in site.getsitepackages() + [os.path.dirname(torch.__file__)]:
        hits = sorted(glob.glob(os.path.join(d, '**', 'libcupti.so*'), recursive=True))
        if hits:
            return hits[0]
"""
VARIANTS = {
    "kineto_host_first": "s = time.perf_counter()\nwith kineto_profile(cuda=False): torch.ones(8) * 2\nt['kineto_host'] = time.perf_counter() - s",
    "dlopen_cupti": "s = time.perf_counter(); p = cupti(); ctypes.CDLL(p); t['dlopen_cupti'] = time.perf_counter() - s; t['path'] = p",
    "dlopen_then_kineto_host": "p = cupti(); s = time.perf_counter(); ctypes.CDLL(p); t['dlopen_cupti'] = time.perf_counter() - s\n"
                               "s = time.perf_counter()\nwith kineto_profile(cuda=False): torch.ones(8) * 2\nt['kineto_host'] = time.perf_counter() - s",
    "cuda_profile_first": "s = time.perf_counter()\nwith kineto_profile(cuda=True): torch.ones(8, device='cuda') * 2\n"
                          "torch.cuda.synchronize(); t['kineto_cuda_first'] = time.perf_counter() - s",
    "host_then_cuda_profile": "s = time.perf_counter()\nwith kineto_profile(cuda=False): torch.ones(8) * 2\nt['kineto_host'] = time.perf_counter() - s\n"
                              "s = time.perf_counter()\nwith kineto_profile(cuda=True): torch.ones(8, device='cuda') * 2\n"
                              "torch.cuda.synchronize(); t['kineto_cuda_after_host'] = time.perf_counter() - s",
    "import_profiler_modules": "s = time.perf_counter(); import torch.autograd.profiler, torch._C._profiler; t['imports'] = time.perf_counter() - s",
}


def main():
    f = DriverFreeze()
    out = {}
    for name, body in VARIANTS.items():
        code = PRE + body + "\nprint(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in t.items()}), flush=True)\ntime.sleep(30)"
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline().strip()
        if line:
            lk = f._ask("lock", p.pid)
            ul = f._ask("unlock", p.pid) if lk[0] == 0 else None
            out[name] = {"times": json.loads(line), "lock": lk, "unlock": ul}
        else:
            out[name] = {"failed": p.stderr.read()[-400:]}
        p.kill()
        p.wait()
        print(json.dumps({name: out[name]}), flush=True)


main()
