"""Session 29's third probe: which step of a candidate's warm-up makes the driver answer 801
(CUDA_ERROR_NOT_SUPPORTED) to cuCheckpointProcessGetState, or (second run, through the helper
process) refuse cuCheckpointProcessLock. One child per variant, each stops
after its step; the parent asks. Prints one JSON line."""
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.environ["KM_SRC"])
from kernelmill.verify.measure.gpu_lend import DriverFreeze  # noqa: E402

STEPS = {
    "ctx": "torch.zeros(1, device='cuda'); torch.cuda.synchronize()",
    "kineto_host": "torch.zeros(1, device='cuda'); from kernelmill.verify.guards.trace import kineto_profile\n"
                   "with kineto_profile(cuda=False): torch.ones(8) * 2",
    "first_launch": "torch.zeros(1, device='cuda'); from kernelmill.verify.guards.trace import first_launch\n"
                    "first_launch(torch.device('cuda'))",
    "warm_cuda": "from kernelmill.verify.guards.trace import warm_cuda\nwarm_cuda(torch.device('cuda'), checks=True)",
    "cuda_profile": "torch.zeros(1, device='cuda'); from kernelmill.verify.guards.trace import kineto_profile\n"
                    "with kineto_profile(cuda=True): torch.ones(8, device='cuda') * 2\ntorch.cuda.synchronize()",
    "matmul": "a = torch.randn(64, 64, device='cuda'); (a @ a).sum().item()",
    "conv": "import torch.nn.functional as F; F.conv2d(torch.randn(1, 3, 8, 8, device='cuda'), "
            "torch.randn(4, 3, 3, 3, device='cuda')).sum().item()",
}


def main():
    torch.zeros(1, device="cuda")
    f = DriverFreeze()
    out = {}
    for name, step in STEPS.items():
        code = f"import sys, time, torch\nsys.path.insert(0, {os.environ['KM_SRC']!r})\n{step}\nprint('ready', flush=True)\ntime.sleep(30)"
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline().strip()
        if line == "ready":
            st = f.state(p.pid)
            lk = f._ask("lock", p.pid)
            ul = f._ask("unlock", p.pid) if lk[0] == 0 else None
            out[name] = {"state": st, "lock": lk, "unlock": ul}
        else:
            out[name] = ("failed", p.stderr.read()[-300:] if p.poll() is not None else "")
        p.kill()
        p.wait()
    print(json.dumps(out), flush=True)


main()
