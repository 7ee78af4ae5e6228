"""Where does an illegal launch's error go? (catalogue item 21)

Builds the g21 candidates' extension through kernelmill's fast builder (the
path verify uses), launches with 2048 threads per block and with 200 KB of
dynamic shared memory, and after each launch reads the pending error three
ways: every loaded libcudart (`cudart.last_error`), torch's own launch check
(a one-element kernel), and a profiled call (`trace.profile_call`, where the
guarded run met "invalid argument"). Prints which runtimes are mapped and
which libcudart the extension links. Run on a GPU:
PYTHONPATH=src python benchmarks/diag/launch_error.py"""
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

root = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(root / "tests" / "guards"), str(root / "tests" / "guards" / "gpu_corpus")]

import torch  # noqa: E402
from gpu_hostile import tricks_model  # noqa: E402

from kernelmill.verify.guards import cudart, trace  # noqa: E402
from kernelmill.verify.build.inline_build import install  # noqa: E402


def step(label, fn):
    try:
        out = fn()
        print(f"  {label}: {out!r}", flush=True)
    except BaseException as exc:  # noqa: BLE001 - a diagnostic prints whatever happens
        print(f"  {label}: raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", flush=True)


def probe():
    torch.zeros(1, device="cuda").add_(1)
    return "no error"


def main():
    install(tempfile.mkdtemp(prefix="km-launch-diag-"))
    code = tricks_model("return ext.relu_2048_threads(x)", "diag21")
    ns: dict = {}
    exec(compile(code, "<g21>", "exec"), ns)
    ext = ns["ext"]
    so = getattr(ext, "__file__", None)
    print("extension:", so)
    if so:
        print(subprocess.run(["bash", "-c", f"ldd {so} | grep -i cudart || echo 'no dynamic cudart'"],
                             capture_output=True, text=True).stdout.strip())
        print(subprocess.run(["bash", "-c", f"nm -D {so} | grep -c cudaGetLastError || true"],
                             capture_output=True, text=True).stdout.strip(), "dynamic refs to cudaGetLastError")
    cudart.runtimes(refresh=True)
    with open(f"/proc/{os.getpid()}/maps") as fh:
        print("mapped libcudart:", cudart.cudart_paths(fh.read()))
    x = torch.randn(1 << 22, device="cuda")
    for fname in ("relu_2048_threads", "relu_too_much_smem"):
        f = getattr(ext, fname)
        print(fname)
        cudart.last_error()
        step("call", lambda: tuple(f(x).shape))
        step("synchronize", torch.cuda.synchronize)
        step("cudart.last_error", cudart.last_error)
        step("torch launch check (probe)", probe)
        step("call again", lambda: tuple(f(x).shape))
        step("synchronize", torch.cuda.synchronize)
        step("torch launch check (probe) first", probe)
        step("cudart.last_error after probe", cudart.last_error)
        step("call, then profiled call", lambda: trace.profile_call(lambda: f(x), torch.device("cuda"))["kernels"])
        step("cudart.last_error after profile", cudart.last_error)
        try:
            trace.profile_call(lambda: f(x), torch.device("cuda"))
        except BaseException:  # noqa: BLE001
            traceback.print_exc(limit=6)
        cudart.last_error()


if __name__ == "__main__":
    main()
