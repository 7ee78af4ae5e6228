"""Time every builtin task's PyTorch reference in one size profile.

The suite promises reference times of roughly 20 us - 5 ms per call on an H100
in the full profile (so speedups are measurable and a run stays short), and
well under 20 ms on a CPU in the small profile. This measures both claims with
the harness's own timing utility (``kernelmill.verify.measure.timing``).

    python -m kernelmill.tasks.builtin.reference_times --device cuda --profile full
    python -m kernelmill.tasks.builtin.reference_times --device cpu --profile small --json
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...verify import TimingConfig


def timing_config(budget_ms: float = 100.0, rounds: int = 5, max_calls: int = 40,
                  cpu_threads: int = 1) -> TimingConfig:
    """The harness's timing convention at a reference-table budget: `rounds`
    rounds of about budget_ms / rounds each, 1 to `max_calls` calls a round
    (so 5 - 200 timed calls per task with the defaults)."""
    from ...verify import TimingConfig

    return TimingConfig(warmup_ms=10.0, round_ms=budget_ms / rounds, min_rounds=rounds, max_rounds=rounds,
                        budget_ms=budget_ms, min_calls=1, max_calls=max_calls, cpu_threads=cpu_threads)


def time_references(device: str, profile: str, budget_ms: float = 100.0, cpu_threads: int = 1) -> list[dict]:
    import torch

    from ...verify import set_cpu_threads, time_interleaved
    from .. import load_tasks
    from .selfcheck import build_reference

    config = timing_config(budget_ms, cpu_threads=cpu_threads)
    if not device.startswith("cuda"):
        set_cpu_threads(config.cpu_threads)  # the CPU convention: a fixed intra-op thread count
    rows = []
    for task in load_tasks("builtin"):
        module, model, _ = build_reference(task, profile, seed=0)
        torch.manual_seed(1)
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
        model = model.to(device)  # training mode, as constructed: what the harness times
        with torch.no_grad():
            t = time_interleaved({"reference": lambda: model(*inputs)}, device, config)["reference"]
        rows.append({"task_id": task.task_id, "level": task.level, "op_type": task.op_type,
                     "median_ms": t.median_ms, "p20_ms": t.p20_ms, "p80_ms": t.p80_ms, "reps": t.reps,
                     "rounds": t.rounds, "calls_per_round": t.calls_per_round,
                     "input_mb": sum(x.numel() * x.element_size() for x in inputs
                                     if isinstance(x, torch.Tensor)) / 2**20})
        del model, inputs
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    return rows


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--profile", default=None, choices=["small", "full"],
                        help="default: full on CUDA, small on CPU")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--low-ms", type=float, default=None, help="flag references faster than this")
    parser.add_argument("--high-ms", type=float, default=None, help="flag references slower than this")
    parser.add_argument("--budget-ms", type=float, default=100.0, help="timed time per task")
    parser.add_argument("--cpu-threads", type=int, default=1, help="intra-op threads when timing on a CPU")
    args = parser.parse_args(argv)
    profile = args.profile or ("full" if args.device.startswith("cuda") else "small")
    cuda = args.device.startswith("cuda")
    low = args.low_ms if args.low_ms is not None else (0.02 if cuda else 0.0)
    high = args.high_ms if args.high_ms is not None else (5.0 if cuda else 20.0)
    device_name = torch.cuda.get_device_name(args.device) if cuda else "cpu"
    rows = time_references(args.device, profile, args.budget_ms, args.cpu_threads)
    outside = 0
    for r in rows:
        r["in_range"] = low <= r["median_ms"] <= high
        outside += not r["in_range"]
        if args.json:
            print(json.dumps({**r, "device": device_name, "profile": profile}))
        else:
            print(f"{'   ' if r['in_range'] else '!! '}{r['task_id']:40s} {r['median_ms']:9.4f} ms "
                  f"(p20 {r['p20_ms']:.4f}, p80 {r['p80_ms']:.4f}, {r['reps']} reps, inputs {r['input_mb']:.1f} MiB)")
    ms = sorted(r["median_ms"] for r in rows)
    print(f"{len(rows)} references on {device_name}, profile {profile}: median {ms[len(ms) // 2]:.4f} ms, "
          f"range {ms[0]:.4f} - {ms[-1]:.4f} ms; {outside} outside [{low}, {high}] ms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
