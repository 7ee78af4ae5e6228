"""SFT tokens/s with one process and with two (`accelerate launch`), same tiny recipe (issue 20).

Builds a small random Qwen2 model and synthetic SFT data (benchmarks/train_gpu.py's, no downloads),
writes one SFT recipe and runs it through `kernelmill train sft` twice, from scratch each time:

* 1 process: `python -m kernelmill.cli train sft --config R --fresh` on the CPU (the CPU launch file's
  torchrun launcher needs 2 or more); on GPUs `accelerate launch --config_file LAUNCH --num_processes 1`,
  so ZeRO-3 runs in both
* N processes: `accelerate launch --config_file LAUNCH --num_processes N -m kernelmill.cli train sft ...`

Both runs use the same per-process batch, so N processes train N times the tokens a step (data
parallel). tokens/s is the run's own figure: TRL's `num_tokens` (gathered over all processes) over
the Trainer's `train_runtime` (the training loop, not start-up); the command's wall time is printed
beside it. The result also records the losses and the processes the run reports it trained on.

On this project's CPU machine (the default, `--device cpu`: configs/accelerate_cpu2.yaml, DDP over
gloo, float32) two processes share the machine's cores, so the figure checks the multi-process path
and its overhead, not GPU scaling. On GPUs (`--device cuda`: bf16, the launch file of your choice):

    python benchmarks/train_two_process.py --out two_process.json                       # CPU stand-in
    python benchmarks/train_two_process.py --device cuda --launch-config configs/accelerate_zero3.yaml \\
        --hidden 512 --layers 4 --seq 512 --batch 4 --steps 20 --out $OUT/two_process.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_gpu import write_data  # noqa: E402


def recipe_text(model: Path, data: Path, out: Path, a: argparse.Namespace) -> str:
    cpu = a.device == "cpu"
    lora = "lora:\n  r: 8\n  alpha: 16\n  dropout: 0.0\n" if a.lora else ""
    return (f"recipe: sft\nmodel:\n  name_or_path: {model}\n  dtype: {'float32' if cpu else 'bfloat16'}\n{lora}"
            f"data:\n  train: {data}\ntraining:\n  output_dir: {out}\n  use_cpu: {str(cpu).lower()}\n"
            f"  bf16: {str(not cpu).lower()}\n  optim: adamw_torch\n  learning_rate: {a.lr}\n"
            f"  lr_scheduler_type: constant\n  max_steps: {a.steps}\n  per_device_train_batch_size: {a.batch}\n"
            f"  max_length: {a.seq}\n  save_strategy: 'no'\n  logging_steps: 1\n  disable_tqdm: true\n  seed: 0\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(processes: int, cfg: Path, out: Path, a: argparse.Namespace) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
               TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    if a.threads:
        env["OMP_NUM_THREADS"] = str(a.threads)  # else each launcher's default (see --threads)
    train = ["-m", "kernelmill.cli", "train", "sft", "--config", str(cfg), "--fresh"]
    if processes == 1 and a.device == "cpu":
        cmd = [sys.executable, *train]
    else:
        cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", a.launch_config,
               "--num_processes", str(processes), "--main_process_port", str(free_port()), *train]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}")
    hist = [json.loads(x) for x in (out / "log_history.jsonl").read_text().splitlines()]
    record = json.loads((out / "run_complete.json").read_text())["result"]
    losses = [h["loss"] for h in hist if "loss" in h]
    return {"processes": processes, "joined": record.get("processes", 1), "distributed": record.get("distributed"),
            "steps": record["steps"], "tokens": record["tokens"], "train_runtime_s": record["train_runtime_s"],
            "tokens_per_s": record["tokens_per_s"], "wall_s": wall, "loss": [losses[0], losses[-1]],
            "command": " ".join(cmd)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--launch-config", default=None,
                   help="accelerate config of the multi-process run (default: configs/accelerate_cpu2.yaml on "
                        "the CPU, configs/accelerate_zero3.yaml on GPUs)")
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--vocab", type=int, default=1000)
    p.add_argument("--seq", type=int, default=256, help="SFT max_length")
    p.add_argument("--batch", type=int, default=4, help="per-process batch")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--lora", action="store_true", help="LoRA r=8 instead of full fine-tuning")
    p.add_argument("--threads", type=int, default=0,
                   help="OMP_NUM_THREADS of every process (0: unset; then one process uses torch's default, "
                        "the physical cores, and accelerate gives each of N processes cores / N)")
    p.add_argument("--repeats", type=int, default=1, help="runs of each, alternating 1 and N processes")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    a = p.parse_args()
    a.launch_config = a.launch_config or str(REPO / "configs" / ("accelerate_cpu2.yaml" if a.device == "cpu"
                                                                  else "accelerate_zero3.yaml"))

    import torch

    from kernelmill.train import build_tiny_model

    root = Path(tempfile.mkdtemp(prefix="kernelmill-two-process-"))
    data, _, texts = write_data(root, random.Random(0), n_sft=max(64, a.steps * a.batch * a.processes),
                                answer_words=a.seq // 2)
    model = build_tiny_model(root / "model", texts, hidden=a.hidden, layers=a.layers, vocab_size=a.vocab,
                             max_positions=max(4096, a.seq + 512))
    results = {"device": a.device, "cpu_count": os.cpu_count(), "torch": torch.__version__,
               "torch_threads_parent": torch.get_num_threads(), "args": vars(a), "runs": []}
    for rep in range(a.repeats):
        for n in (1, a.processes):
            out = root / f"out-{n}"
            cfg = root / f"sft-{n}.yaml"
            cfg.write_text(recipe_text(model, data, out, a))
            r = run(n, cfg, out, a)
            r["repeat"] = rep
            results["runs"].append(r)
            print(json.dumps(r), flush=True)
            if a.out:  # after every run, so a time limit keeps what was measured
                Path(a.out).write_text(json.dumps(results, indent=2))
    for n in (1, a.processes):
        figs = [r["tokens_per_s"] for r in results["runs"] if r["processes"] == n]
        results[f"tokens_per_s_{n}"] = sorted(figs)[len(figs) // 2]
    results["ratio"] = results[f"tokens_per_s_{a.processes}"] / results["tokens_per_s_1"]
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=2))
    print(f"SFT tokens/s (median of {a.repeats}): 1 process {results['tokens_per_s_1']:.0f}, "
          f"{a.processes} processes {results[f'tokens_per_s_{a.processes}']:.0f} (x{results['ratio']:.2f})")


if __name__ == "__main__":
    main()
