"""Throughput of the training recipes on one GPU: SFT tokens/s and GRPO episodes/minute.

A small randomly initialised Qwen2 model (built here, no downloads) runs a
short SFT recipe and a short multi-turn GRPO recipe through the same code as
`kernelmill train`. The GRPO verifier is a constant fake by default (every
attempt "does not compile", so each episode runs all its turns): the figure is
then generation + policy update, the part training owns; `--verifier local`
puts the real verify API in the loop.

    python benchmarks/train_gpu.py --out bench_train.json
    python benchmarks/train_gpu.py --device cpu --hidden 64 --layers 2 --sft-steps 3 --grpo-steps 1   # smoke
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

WORDS = ("tile block thread warp shared memory load store mask reduce sum max fused kernel grid stride "
         "offset pointer float half accumulate barrier sync loop unroll vector").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def write_data(root: Path, rng: random.Random, n_sft: int, answer_words: int) -> tuple[Path, Path, list[str]]:
    sft, grpo, texts = root / "sft.jsonl", root / "grpo.jsonl", []
    with open(sft, "w") as fh:
        for i in range(n_sft):
            user, answer = f"Task {i}: " + sentence(rng, 40), sentence(rng, answer_words)
            texts += [user, answer]
            fh.write(json.dumps({"messages": [{"role": "user", "content": user},
                                              {"role": "assistant", "content": answer}]}) + "\n")
    with open(grpo, "w") as fh:
        for i in range(16):
            user = f"Task {i}: " + sentence(rng, 40)
            texts.append(user)
            fh.write(json.dumps({"prompt": [{"role": "user", "content": user}], "task_id": f"t{i}",
                                 "language": "torch", "task_code": "# reference"}) + "\n")
    return sft, grpo, texts


def recipe_text(kind: str, model: Path, data: Path, out: Path, a: argparse.Namespace) -> str:
    cpu = a.device == "cpu"
    common = (f"model:\n  name_or_path: {model}\n  dtype: {'float32' if cpu else 'bfloat16'}\n"
              f"data:\n  train: {data}\n")
    train = (f"training:\n  output_dir: {out}\n  use_cpu: {str(cpu).lower()}\n  bf16: {str(not cpu).lower()}\n"
             "  save_strategy: 'no'\n  disable_tqdm: true\n  logging_steps: 1\n  learning_rate: 1.0e-4\n")
    if kind == "sft":
        return (f"recipe: sft\n{common}{train}  max_steps: {a.sft_steps}\n  per_device_train_batch_size: "
                f"{a.sft_batch}\n  max_length: {a.seq}\n  packing: {str(a.packing).lower()}\n")
    return (f"recipe: grpo\n{common}episode:\n  max_turns: {a.turns}\n  turn_max_tokens: {a.turn_tokens}\n"
            f"{train}  max_steps: {a.grpo_steps}\n  per_device_train_batch_size: {a.grpo_batch}\n"
            f"  num_generations: {a.generations}\n  max_completion_length: {a.turns * a.turn_tokens + 256}\n"
            "  temperature: 0.7\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--vocab", type=int, default=4000)
    p.add_argument("--seq", type=int, default=2048, help="SFT max_length")
    p.add_argument("--sft-steps", type=int, default=30)
    p.add_argument("--sft-batch", type=int, default=8)
    p.add_argument("--packing", action="store_true")
    p.add_argument("--grpo-steps", type=int, default=6)
    p.add_argument("--grpo-batch", type=int, default=8)
    p.add_argument("--generations", type=int, default=4)
    p.add_argument("--turns", type=int, default=4)
    p.add_argument("--turn-tokens", type=int, default=128)
    p.add_argument("--verifier", default="fake", choices=["fake", "local"])
    p.add_argument("--out", default=None, help="write the results as JSON here")
    a = p.parse_args()

    import torch

    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device: run on the GPU machine, or pass --device cpu for a smoke run")
    from kernelmill.records import Verdict
    from kernelmill.train import build_tiny_model, load_recipe, run_grpo, run_sft

    rng = random.Random(0)
    root = Path(tempfile.mkdtemp(prefix="kernelmill-bench-"))
    sft_data, grpo_data, texts = write_data(root, rng, n_sft=max(64, a.sft_steps * a.sft_batch),
                                            answer_words=a.seq // 2)
    model = build_tiny_model(root / "model", texts, hidden=a.hidden, layers=a.layers, vocab_size=a.vocab,
                             max_positions=max(4096, a.seq + 512))
    n_params = sum(t.numel() for t in __import__("safetensors.torch").torch.load_file(
        str(model / "model.safetensors")).values())
    results = {"device": torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu",
               "torch": torch.__version__, "params": n_params, "args": vars(a)}

    cfg = root / "sft.yaml"
    cfg.write_text(recipe_text("sft", model, sft_data, root / "sft-out", a))
    t0 = time.perf_counter()
    sft = run_sft(load_recipe(cfg, kind="sft"), resume=False)
    wall = time.perf_counter() - t0
    hist = [json.loads(x) for x in (root / "sft-out" / "log_history.jsonl").read_text().splitlines()]
    runtime = next(h["train_runtime"] for h in hist if "train_runtime" in h)
    tokens = max(float(h.get("num_tokens", 0)) for h in hist)
    results["sft"] = {"steps": sft["steps"], "tokens": tokens, "train_runtime_s": runtime, "wall_s": wall,
                      "tokens_per_s": tokens / runtime, "loss": [sft["first_loss"], sft["last_loss"]],
                      "peak_mem_gb": torch.cuda.max_memory_allocated() / 2**30 if a.device == "cuda" else None}
    print(json.dumps(results["sft"]), flush=True)

    def fake(tasks, samples):  # constant, instant: every attempt fails, so every episode runs all turns
        return [Verdict(s.sample_id, s.task_id, "compile_error", message="error: expected ';'") for s in samples]

    import kernelmill.train.rewards as rewards

    if a.verifier == "fake":  # random models write no code block; pretend they did so the verifier is called
        rewards.extract_code = lambda text: ("class ModelNew: pass", None)
    cfg = root / "grpo.yaml"
    cfg.write_text(recipe_text("grpo", model, grpo_data, root / "grpo-out", a))
    if a.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    grpo = run_grpo(load_recipe(cfg, kind="grpo"), resume=False, verifier=fake if a.verifier == "fake" else None)
    wall = time.perf_counter() - t0
    episodes = [json.loads(x) for x in (root / "grpo-out" / "episodes.jsonl").read_text().splitlines()]
    hist = [json.loads(x) for x in (root / "grpo-out" / "log_history.jsonl").read_text().splitlines()]
    runtime = next(h["train_runtime"] for h in hist if "train_runtime" in h)
    gen_tokens = sum(float(h.get("completions/mean_length", 0)) for h in hist if "loss" in h) * a.grpo_batch
    results["grpo"] = {"steps": grpo["steps"], "episodes": len(episodes),
                       "turns_per_episode": sum(len(e["turns"]) for e in episodes) / max(1, len(episodes)),
                       "train_runtime_s": runtime, "wall_s": wall,
                       "episodes_per_min": 60 * len(episodes) / runtime,
                       "model_tokens_per_s": gen_tokens / runtime,
                       "step_time_s": [h.get("step_time") for h in hist if "step_time" in h],
                       "peak_mem_gb": torch.cuda.max_memory_allocated() / 2**30 if a.device == "cuda" else None}
    print(json.dumps(results["grpo"]), flush=True)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(results, indent=2))
    print(f"SFT  {results['sft']['tokens_per_s']:.0f} tokens/s   GRPO {results['grpo']['episodes_per_min']:.1f} "
          f"episodes/min ({results['grpo']['turns_per_episode']:.1f} turns each)")


if __name__ == "__main__":
    main()
