# which import makes a forked child unable to use CUDA; each line in a fresh interpreter
import os, subprocess, sys
steps = ["torch", "torch.utils.cpp_extension", "torch.profiler", "triton", "kernelmill.verify.inline_build",
         "kernelmill.verify.correctness", "kernelmill.verify.timing", "kernelmill.verify.guards.trace",
         "kernelmill.verify.process.candidate", "kernelmill.verify.process.worker"]
code = """
import importlib, os, sys
importlib.import_module(sys.argv[1])
pid = os.fork()
if pid == 0:
    try:
        import torch
        torch.zeros(1, device="cuda"); os._exit(0)
    except Exception as exc:
        print("   ", str(exc)[:90]); os._exit(1)
_, st = os.waitpid(pid, 0)
print(f"import {sys.argv[1]} alone, then fork: child CUDA {'ok' if os.waitstatus_to_exitcode(st) == 0 else 'FAILS'}", flush=True)
"""
for m in steps:
    subprocess.run([sys.executable, "-c", code, m])
