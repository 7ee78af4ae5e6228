"""Session 14's end-to-end check of the supervisor's memory held apart (0.5.6), on a CPU: the
builtin cpp ReLU candidate on a 67 MB ReLU (batch 1024 x 16384) under strict at full size.
    python harness_memory_e2e.py SRC MEMORY_GB HARNESS_GB
SRC: the kernelmill src folder to run (the watchdog runs in this process, so an older tree's
`sandbox.watch` is what decides); HARNESS_GB is passed only where the tree knows the setting.
Seen: 0.5.5 (615401f), 4 -> runtime_error (killed at 4 GiB); 0.5.6, 4 6 -> ok."""
import sys
import time
from dataclasses import fields

sys.path.insert(0, sys.argv[1])
from kernelmill.records import Sample, Task  # noqa: E402
from kernelmill.tasks.builtin import builtin_samples  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402

root = sys.argv[1].rstrip("/")
code = open(f"{root}/kernelmill/tasks/builtin/tasks/level1/01_ReLU.py").read()
task = Task(task_id="relu1024", code=code.replace("batch_size = 4096", "batch_size = 1024"), name="relu", level=1)
cand = next(s for s in builtin_samples() if s.sample_id == "builtin/level1/01_ReLU/cpp__ok")
extra = ({"harness_memory_gb": float(sys.argv[3])}
         if len(sys.argv) > 3 and "harness_memory_gb" in {f.name for f in fields(VerifyConfig)} else {})
cfg = VerifyConfig(device="cpu", trials=3, guards="strict", profile="full", memory_limit_gb=float(sys.argv[2]),
                   cache_dir="/tmp/km_e2e_cache", **extra)
t = time.time()
v, = verify_samples({task.task_id: task}, [Sample("cpp_relu", "relu1024", "cpp", cand.code)], cfg)
print(v.status, v.flags, v.message[:200].replace("\n", " "), round(time.time() - t, 1), "s")
