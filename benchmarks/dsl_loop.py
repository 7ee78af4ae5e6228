"""Helpers of benchmarks/tilelang_loop_device.sh (the whole DSL loop with a scripted
model): the scripted answers, the tiny language model, the training recipes, the
reward check through the verifier, and the final checks. One subcommand per step:

    python benchmarks/dsl_loop.py preflight --dsl tilelang
    python benchmarks/dsl_loop.py answers   --dsl tilelang --work DIR   # DIR/answers.jsonl, traces.jsonl, plan.json
    python benchmarks/dsl_loop.py tiny-lm   --work DIR                   # DIR/tiny-lm (tokenizer trained on the run's text)
    python benchmarks/dsl_loop.py recipes   --work DIR --device cuda     # DIR/kto.yaml, DIR/grpo.yaml
    python benchmarks/dsl_loop.py reward    --work DIR --device cuda     # DIR/reward.json
    python benchmarks/dsl_loop.py check     --work DIR --out OUT         # OUT/summary.json; exit 1 on a failed check

The scripted model answers every task with kernels made from the DSL's seed kernels
(src/kernelmill/tasks/builtin/candidates/<task>/<dsl>__ok*.py):
  right        the seed kernel with a header comment (a new kernel for the corpus, same code);
  wrong        the seed with the DSL's first error injection that changes it (memory access:
               a shifted load), which must compute a wrong result or crash;
  broken       the seed with the colon of `def forward` removed: a syntax error, it cannot compile;
  broken_dsl   (TileLang) `T.Kernel(` misspelt: the kernel cannot be built when first called.
Each task's list is served in turn (the fake server cycles per task), so what round r of
the loop receives is fixed by the plan below.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# per DSL: the loop's tasks with their scripted answers (served in turn), and the held-out tasks
PLANS = {
    "tilelang": {
        "tasks": {
            "level1/01_ReLU": ["right"],
            "level1/02_GELU": ["broken", "right"],
            "level1/03_Sigmoid": ["wrong", "wrong"],
            "level1/04_SiLU": ["right"],
            "level1/06_Sum": ["broken_dsl", "right"],
            "level1/09_Mean": ["wrong", "right"],
        },
        "heldout": {
            "level1/05_LeakyReLU": ["right", "wrong", "broken", "right", "broken_dsl"],
            "level1/07_Max": ["wrong", "broken", "right", "wrong", "wrong"],
        },
    },
    "torch": {
        "tasks": {
            "level1/01_ReLU": ["right"],
            "level1/24_Softmax": ["broken", "right"],
            "level1/30_Cumsum": ["wrong", "wrong"],
            "level1/26_MSELoss": ["wrong", "right"],
        },
        "heldout": {
            "level1/20_LayerNorm": ["right", "wrong", "broken", "right", "wrong"],
            "level2/01_Gemm_Bias_ReLU": ["wrong", "broken", "right", "wrong", "wrong"],
        },
    },
}
# what the verifier may answer for each label; anything else is a failed check
EXPECTED = {"right": {"ok"}, "wrong": {"incorrect", "runtime_error"}, "broken": {"compile_error"},
            "broken_dsl": {"compile_error", "runtime_error"}}
TRACE_STEPS = [
    "Step 1. The PyTorch program applies {what}; every output element is computed independently "
    "of the others except where the operation reduces.",
    "Step 2. Memory access: each block reads a contiguous tile of the input from global memory once, "
    "so the loads are coalesced; intermediate values stay in registers (fragments).",
    "Step 3. Parallelisation: the grid covers the flat index space, one block per tile, and the "
    "threads of a block split the tile's elements.",
    "Step 4. Execution model: the kernel is compiled once per shape and cached; the result is written "
    "back to global memory before the kernel returns.",
]


def seed_code(dsl: str, task_id: str) -> str:
    from kernelmill.dsl import get_dsl
    from kernelmill.tasks import BUILTIN_DIR

    files = sorted((Path(BUILTIN_DIR) / "candidates" / task_id).glob(get_dsl(dsl).seed_glob))
    if not files:
        raise SystemExit(f"error: no {dsl} seed kernel for {task_id} under {BUILTIN_DIR}/candidates")
    return files[0].read_text(encoding="utf-8")


def variant(dsl: str, task_id: str, label: str) -> str:
    from kernelmill.dsl import get_dsl

    code = seed_code(dsl, task_id)
    if label == "right":
        return f"# scripted right answer for {task_id}\n{code}"
    if label == "wrong":
        for inj in get_dsl(dsl).injections:
            new = inj.apply(code)
            if new and new.strip() != code.strip():
                return f"# scripted wrong answer ({inj.name}) for {task_id}\n{new}"
        raise SystemExit(f"error: no {dsl} injection changes the seed of {task_id}")
    if label == "broken":
        new, n = re.subn(r"(def forward\([^)]*\)[^:\n]*):", r"\1", code, count=1)
        if not n:
            raise SystemExit(f"error: no `def forward(...):` in the seed of {task_id}")
        return f"# scripted broken answer for {task_id}\n{new}"
    if label == "broken_dsl":
        if "T.Kernel(" not in code:
            raise SystemExit(f"error: no T.Kernel( in the seed of {task_id}")
        return f"# scripted broken_dsl answer for {task_id}\n" + code.replace("T.Kernel(", "T.Kernal(", 1)
    raise SystemExit(f"error: unknown label {label}")


def cmd_preflight(args) -> None:
    missing = []
    mods = ["torch", "transformers", "sentence_transformers", "trl", "datasets", "matplotlib", "pyarrow", "typer"]
    if args.dsl == "tilelang":
        mods.append("tilelang")
    for m in mods:
        try:
            __import__(m)
        except Exception as exc:  # noqa: BLE001 - any failure to import is a missing module here
            missing.append(f"{m} ({type(exc).__name__}: {exc})")
    if missing:
        raise SystemExit("error: missing Python modules: " + "; ".join(missing))
    import torch

    print(json.dumps({"dsl": args.dsl, "torch": torch.__version__, "cuda": torch.cuda.is_available(),
                      "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}))


def cmd_answers(args) -> None:
    plan = PLANS[args.dsl]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    answers, labels = [], {}
    for tid, seq in [*plan["tasks"].items(), *plan["heldout"].items()]:
        for label in seq:
            code = variant(args.dsl, tid, label)
            answers.append({"task_id": tid, "completion": f"<think>\nscripted {label}\n</think>\n\n```python\n{code}```\n"})
            labels[code.strip()] = label
    (work / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    traces = []
    from kernelmill.tasks import load_tasks

    by_id = load_tasks("builtin").by_id()
    for tid in [*plan["tasks"], *plan["heldout"]]:  # two pool styles, served in turn: long and short
        what = by_id[tid].name or tid
        steps = [s.format(what=what) for s in TRACE_STEPS]
        traces.append({"task_id": tid, "completion": "\n\n".join(steps)})
        traces.append({"task_id": tid, "completion": "\n\n".join([steps[0], steps[2]])})
    (work / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))
    (work / "labels.json").write_text(json.dumps(labels, indent=1))
    (work / "plan.json").write_text(json.dumps({"dsl": args.dsl, **plan}, indent=1))
    print(json.dumps({"tasks": ",".join(plan["tasks"]), "heldout": ",".join(plan["heldout"]),
                      "answers": len(answers)}))


def cmd_tiny_lm(args) -> None:
    from kernelmill.records import Task, read_jsonl
    from kernelmill.train import build_tiny_model

    work = Path(args.work)
    texts = [json.loads(line)["completion"] for f in ("answers.jsonl", "traces.jsonl")
             for line in (work / f).read_text().splitlines()]
    texts += [t.code for t in read_jsonl(work / "run" / "tasks.jsonl", Task)]
    build_tiny_model(work / "tiny-lm", texts * 2, hidden=64, layers=2, max_positions=8192)
    print(work / "tiny-lm")


def cmd_recipes(args) -> None:
    work = Path(args.work).resolve()
    cpu = args.device == "cpu"
    common = "  use_cpu: true\n" if cpu else ""
    (work / "kto.yaml").write_text(f"""# tiny KTO run on the loop's export (benchmarks/tilelang_loop_device.sh)
recipe: kto
model:
  name_or_path: {work / 'tiny-lm'}
  dtype: float32
data:
  train: {work / 'align' / 'kto' / 'train.jsonl'}
training:
  output_dir: {work / 'kto-run'}
  max_steps: 3
  per_device_train_batch_size: 2
  learning_rate: 1.0e-4
  beta: 0.1
  desirable_weight: 3.0
  undesirable_weight: 2.0
  max_length: 2048
  disable_tqdm: true
  save_steps: 3
{common}""")
    (work / "grpo.yaml").write_text(f"""# tiny multi-turn GRPO on the loop's training tasks, reward through the verifier
recipe: grpo
model:
  name_or_path: {work / 'kto-run'}
  dtype: float32
data:
  train: {work / 'align' / 'grpo' / 'train.jsonl'}
reward:
  verifier: local
  tasks: builtin
  store: {work / 'grpo-verdicts.sqlite'}
  verify:
    device: {args.device}
    time: false
episode:
  max_turns: 2
  episode_reward: max
  turn_max_tokens: 24
training:
  output_dir: {work / 'grpo-run'}
  max_steps: 2
  per_device_train_batch_size: 2
  num_generations: 2
  max_completion_length: 96
  temperature: 0.7
  learning_rate: 1.0e-4
  disable_tqdm: true
  save_steps: 2
{common}""")
    print(work / "kto.yaml", work / "grpo.yaml")


def cmd_reward(args) -> None:
    """The paper's reward through the verifier for the scripted completions of one
    held-out task (the same KernelReward and verifier settings `kernelmill train grpo` uses)."""
    from kernelmill.tasks import load_tasks
    from kernelmill.train.config import RewardSettings
    from kernelmill.train.rewards import KernelReward, kernel_reward, make_verifier

    work = Path(args.work)
    plan = json.loads((work / "plan.json").read_text())
    tid, seq = next(iter(plan["heldout"].items()))
    labels = list(dict.fromkeys(seq))
    texts = [f"```python\n{variant(plan['dsl'], tid, lab)}```" for lab in labels]
    task = load_tasks("builtin").by_id()[tid]
    settings = RewardSettings(verifier="local", store=str(work / "reward.sqlite"),
                              verify={"device": args.device, "time": args.device != "cpu"})
    reward = KernelReward(make_verifier(settings), tasks={tid: task})
    verdicts = reward.verify(texts, [tid] * len(texts), [plan["dsl"]] * len(texts), [task.code] * len(texts))
    # (the task's code matches the builtin task, so its size profiles apply, as in `train grpo` with reward.tasks)
    rows = [{"label": lab, "status": v.status, "compiled": v.compiled, "speedup": v.speedup,
             "reward": kernel_reward(v), "message": (v.message or "")[:200]} for lab, v in zip(labels, verdicts)]
    (work / "reward.json").write_text(json.dumps({"task_id": tid, "rows": rows}, indent=1))
    for r in rows:
        print(f"reward {r['label']:>10}: {r['status']:<14} R = {r['reward']:+.3f}")


def cmd_check(args) -> None:
    from kernelmill.records import Sample, Verdict, read_jsonl

    work, out = Path(args.work), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run = work / "run"
    state = json.loads((run / "state.json").read_text())
    labels = json.loads((work / "labels.json").read_text())
    problems: list[str] = []

    # 1. the corpus grew by exactly the verified samples, round by round and in all
    corpus = [json.loads(line) for line in (run / "corpus.jsonl").read_text().splitlines()]
    verified = sum(r["verified"] for r in state["rounds"])
    grown = len(corpus) - state["seed_size"]
    for r in state["rounds"]:
        if r["added"] != r["verified"]:
            problems.append(f"round {r['round']}: {r['verified']} verified but {r['added']} added to the corpus")
    if grown != verified:
        problems.append(f"corpus grew by {grown}, but {verified} samples were verified")
    print(f"corpus: {state['seed_size']} seeds -> {len(corpus)} kernels; grew by {grown}; verified samples {verified}: "
          + ("OK" if grown == verified else "MISMATCH"))
    held = set(state["heldout"])
    if any(e["task_id"] in held for e in corpus):
        problems.append("a held-out task's kernel is in the corpus")

    # 2. every verdict against its scripted label
    table: dict[str, dict[str, int]] = {}
    dirs = [run / f"round_{r['round']:03d}" for r in state["rounds"]]
    dirs += [run / f"round_{e['round']:03d}" / "eval" for e in state.get("evals", [])]
    for d in dirs:
        samples = {s.sample_id: s for s in read_jsonl(d / "samples.jsonl", Sample)}
        for v in read_jsonl(d / "verdicts.jsonl", Verdict):
            label = labels.get(samples[v.sample_id].code.strip(), "unscripted")
            table.setdefault(label, {}).setdefault(v.status, 0)
            table[label][v.status] += 1
            if v.status not in EXPECTED.get(label, set()):
                problems.append(f"{d.name}/{v.task_id}: a {label} answer got {v.status}: {v.message[:160]}")
    for label, counts in sorted(table.items()):
        print(f"  {label:>10}: {counts}")

    # 3. every stage's output
    need = ["run/state.json", "run/tasks.jsonl", "run/corpus.jsonl", "run/growth.json", "run/growth.png",
            "run/eval.json", "run/eval.md", "run/eval.png", "align/kernels.jsonl", "align/traces_scored.jsonl",
            "align/negatives.jsonl", "align/kto/train.jsonl", "align/grpo/train.jsonl", "align/align.json",
            "kto-run/run_complete.json", "grpo-run/run_complete.json", "grpo-run/episodes.jsonl", "reward.json"]
    missing = [p for p in need if not (work / p).exists()]
    problems += [f"missing stage output {p}" for p in missing]
    evals = json.loads((run / "eval.json").read_text())["rows"] if (run / "eval.json").exists() else []
    if [e["round"] for e in evals] != [0, *[r["round"] for r in state["rounds"]]]:
        problems.append(f"eval rows for rounds {[e['round'] for e in evals]}, rounds run {len(state['rounds'])}")
    align = json.loads((work / "align" / "align.json").read_text()) if (work / "align" / "align.json").exists() else {}
    reward = json.loads((work / "reward.json").read_text()) if (work / "reward.json").exists() else {}
    for r in reward.get("rows", []):
        want = {"right": r["reward"] >= 0.3, "wrong": r["reward"] in (-0.5, -1.0),
                "broken": r["reward"] == -1.0}.get(r["label"], True)
        if not want:
            problems.append(f"reward of the {r['label']} completion: {r['reward']} ({r['status']})")
    summary = {
        "dsl": state["dsl"], "rounds": state["rounds"], "seed_size": state["seed_size"], "corpus": len(corpus),
        "verified": verified, "grown": grown, "growth_ok": grown == verified, "labels_vs_status": table,
        "eval": [{k: e[k] for k in e if k != "per_task"} for e in evals], "align": align,
        "reward": reward, "missing": missing, "problems": problems,
    }
    for name in ("kto-run", "grpo-run"):
        p = work / name / "run_complete.json"
        if p.exists():
            summary[name] = json.loads(p.read_text()).get("result")
    episodes = work / "grpo-run" / "episodes.jsonl"
    if episodes.exists():
        eps = [json.loads(line) for line in episodes.read_text().splitlines()]
        summary["grpo_episodes"] = {"episodes": len(eps), "turn_statuses": _count(
            t["status"] for e in eps for t in e["turns"]), "rewards": _count(e["reward"] for e in eps)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    if evals:
        print((run / "eval.md").read_text())
    if problems:
        print("FAILED CHECKS:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print("all checks passed")


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[str(i)] = out.get(str(i), 0) + 1
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("preflight", "answers", "tiny-lm", "recipes", "reward", "check"):
        p = sub.add_parser(name)
        if name in ("preflight", "answers"):
            p.add_argument("--dsl", choices=sorted(PLANS), default="tilelang")
        if name != "preflight":
            p.add_argument("--work", required=True)
        if name in ("recipes", "reward"):
            p.add_argument("--device", default="cuda")
        if name == "check":
            p.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    {"preflight": cmd_preflight, "answers": cmd_answers, "tiny-lm": cmd_tiny_lm, "recipes": cmd_recipes,
     "reward": cmd_reward, "check": cmd_check}[args.cmd](args)


if __name__ == "__main__":
    main()
