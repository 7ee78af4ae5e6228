"""A short GPU check of the guarded path after changes made without a GPU:
the launch-failure and persisting-L2 candidates, side-stream work, the CUDA
reference hunter, and honest builtin candidates under strict guards (two of
which drew a false unsynced_work before the tail-based check). Prints each
verdict as it lands. Run: PYTHONPATH=src python benchmarks/diag/gpu_smoke.py"""
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(root / "tests" / "guards"), str(root / "tests" / "guards" / "gpu_corpus")]

import guard_tasks as T  # noqa: E402
from gpu_hostile import GPU_HOSTILE  # noqa: E402
from reference_hunters import CUDA_HUNTER, TASK as HUNT_TASK  # noqa: E402

from kernelmill.records import Sample  # noqa: E402
from kernelmill.tasks import load_tasks  # noqa: E402
from kernelmill.tasks.builtin import builtin_samples  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402

TASKS = {"big_relu": T.BIG_RELU, "linear": T.LINEAR, "huge_relu": T.HUGE_RELU}
HOSTILE = ["g21_2048_threads", "g21_too_much_shared_memory", "g16_limit_through_ctypes", "g3_side_stream"]
HONEST = ["26_MSELoss/torch__ok", "08_Add_RMSNorm/triton__ok", "01_ReLU/cuda__ok", "24_Softmax/cuda__ok",
          "20_LayerNorm/torch__ok"]


def show(v):
    print(f"{v.sample_id:45s} {v.status:13s} flags={v.flags} speedup={v.speedup} ci={v.speedup_ci} "
          f"{v.message[:140]!r}", flush=True)


tasks = {t.task_id: t for t in T.ALL}
tasks.update(load_tasks("builtin").by_id())
tasks[HUNT_TASK.task_id] = HUNT_TASK
cache = "/tmp/km-gpu-smoke"
samples = [Sample(n, TASKS[GPU_HOSTILE[n][0]].task_id, GPU_HOSTILE[n][1], GPU_HOSTILE[n][2]) for n in HOSTILE]
samples.append(Sample("hunt_cuda", HUNT_TASK.task_id, "cuda", CUDA_HUNTER))
verify_samples(tasks, samples, VerifyConfig(device="cuda", trials=3, cache_dir=cache), on_verdict=show)
honest = [s for s in builtin_samples() if any(s.sample_id.endswith(h) for h in HONEST)]
verify_samples(tasks, honest, VerifyConfig(device="cuda", trials=3, guards="strict", cache_dir=cache), on_verdict=show)
