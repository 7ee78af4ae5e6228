"""Evaluation on held-out tasks as paper 002 reports it: compile rate,
correctness rate and pass@k, one row per round of the bootstrap loop.

* The held-out split is a parameter of the loop (`Bootstrap(heldout=...)`):
  those tasks are never bootstrapped, their seed kernels never enter the
  corpus, so nothing of theirs is retrieved or exported for training.
* Each round r (and round 0, the seeds alone) prompts the model for `samples`
  kernels per held-out task with the corpus as it stands after round r (the
  same RAG prompt the loop uses) and verifies them with the paper's rtol
  (`with_rtol`: the rtol of every dtype in `VerifyConfig.tolerances`; paper:
  1e-5 against PyTorch, atol as the verifier sets it).
* compile rate = samples that compiled / samples; correctness rate = samples
  verified correct / samples; pass@k = mean over tasks of the unbiased
  estimator 1 - C(n - c, k) / C(n, k) (n samples of a task, c correct; Chen
  et al. 2021), with pass@1 beside it.

Files: `round_NNN/eval/{retrieved,samples,verdicts}.jsonl` per round, and at
the run's root `eval.json` (the rows), `eval.md` (the table) and `eval.png`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..records import Sample, Verdict
from ..report.metrics import pass_at_k as metrics_pass_at_k

PAPER_RTOL = 1e-5
DEFAULT_EVAL_SAMPLES = 5
DEFAULT_EVAL_K = 5
# statuses reached only by a candidate that compiled
_COMPILED = ("ok", "incorrect")


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k from n samples of which c are correct (the report's
    estimator); None when n < k (the estimator needs at least k samples)."""
    if k < 1 or c < 0 or c > n:
        raise ValueError(f"pass@k needs k >= 1 and 0 <= c <= n, got n={n}, c={c}, k={k}")
    return None if n < k else metrics_pass_at_k(n, c, k)


def compiled(v: Verdict | None) -> bool:
    """Whether the candidate got past compilation: correct or wrong values, or
    a crash/timeout the verifier reports as after a successful build."""
    if v is None:
        return False
    return v.status in _COMPILED or (v.status in ("runtime_error", "timeout") and bool(v.compiled))


def with_rtol(config, rtol: float | None):
    """A copy of a `VerifyConfig` whose every dtype's rtol is `rtol` (atol
    kept); None keeps the config as it is."""
    if rtol is None:
        return config
    if rtol < 0:
        raise ValueError(f"rtol must be >= 0, not {rtol}")
    tol = {dtype: (float(atol), float(rtol)) for dtype, (atol, _) in config.tolerances.items()}
    return dataclasses.replace(config, tolerances=tol)


def summarize(task_ids: Sequence[str], samples: Sequence[Sample], verdicts: Iterable[Verdict], k: int,
              expected: int | None = None) -> dict[str, Any]:
    """One row of the table: rates over all samples of the held-out tasks and
    pass@1/pass@k over tasks. A sample without a verdict counts as failed;
    a task with fewer than `expected` samples is reported under `short_tasks`."""
    by_sample = {v.sample_id: v for v in verdicts}
    per_task: dict[str, dict[str, int]] = {t: {"n": 0, "compiled": 0, "correct": 0} for t in task_ids}
    statuses: dict[str, int] = {}
    for s in samples:
        if s.task_id not in per_task:
            continue
        v = by_sample.get(s.sample_id)
        st = v.status if v is not None else "no_verdict"
        statuses[st] = statuses.get(st, 0) + 1
        c = per_task[s.task_id]
        c["n"] += 1
        c["compiled"] += compiled(v)
        c["correct"] += v is not None and v.status == "ok"
    n = sum(c["n"] for c in per_task.values())
    p1 = [pass_at_k(c["n"], c["correct"], 1) for c in per_task.values() if c["n"] >= 1]
    pk = [pass_at_k(c["n"], c["correct"], k) for c in per_task.values() if c["n"] >= k]
    return {
        "tasks": len(per_task), "samples": n, "k": k,
        "compiled": sum(c["compiled"] for c in per_task.values()),
        "correct": sum(c["correct"] for c in per_task.values()),
        "compile_rate": (sum(c["compiled"] for c in per_task.values()) / n) if n else None,
        "correct_rate": (sum(c["correct"] for c in per_task.values()) / n) if n else None,
        "pass@1": (sum(p1) / len(p1)) if p1 else None,
        f"pass@{k}": (sum(pk) / len(pk)) if pk else None,
        "pass_k_tasks": len(pk),
        "short_tasks": sorted(t for t, c in per_task.items() if expected is not None and c["n"] < expected),
        "statuses": dict(sorted(statuses.items())),
        "per_task": per_task,
    }


def _fmt(x: Any) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return f"{x:.3f}"
    return str(x)


def markdown_table(rows: Sequence[dict[str, Any]], rtol: float | None = None) -> str:
    """The per-round table (round 0: the seed corpus alone)."""
    if not rows:
        return "(no evaluation yet)\n"
    k = rows[0]["k"]
    head = (f"Held-out evaluation: {rows[0]['tasks']} tasks, {rows[0]['samples'] // max(1, rows[0]['tasks'])} "
            f"samples per task" + (f", rtol {rtol:g}" if rtol is not None else "") + "\n\n")
    cols = ["round", "corpus", "samples", "compiled", "correct", "compile rate", "correctness rate", "pass@1",
            f"pass@{k}"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---:|" * len(cols)]
    for r in sorted(rows, key=lambda x: x["round"]):
        vals = [r["round"], r["corpus_size"], r["samples"], r["compiled"], r["correct"], r["compile_rate"],
                r["correct_rate"], r["pass@1"], r[f"pass@{k}"]]
        lines.append("| " + " | ".join(_fmt(v) for v in vals) + " |")
    return head + "\n".join(lines) + "\n"


def plot_eval(rows: Sequence[dict[str, Any]], path: Path, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(rows, key=lambda x: x["round"])
    k = rows[0]["k"] if rows else 5
    xs = [r["round"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    for key, label, marker in (("compile_rate", "compile rate", "o"), ("correct_rate", "correctness rate", "s"),
                               ("pass@1", "pass@1", "^"), (f"pass@{k}", f"pass@{k}", "D")):
        pts = [(x, r[key]) for x, r in zip(xs, rows) if r.get(key) is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, label=label)
    ax.set_ylim(-0.02, 1.05)
    ax.set_xticks(xs)
    ax.set_xlabel("round (0: seed corpus only)")
    ax.set_ylabel("fraction of held-out samples / tasks")
    ax.set_title(title or "held-out evaluation per round")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, path)


def write_eval(out: Path, rows: Sequence[dict[str, Any]], dsl: str, rtol: float | None) -> None:
    import json

    rows = sorted(rows, key=lambda x: x["round"])
    data = {"dsl": dsl, "rtol": rtol, "rows": rows}
    tmp = out / ".eval.json.tmp"
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, out / "eval.json")
    (out / "eval.md").write_text(markdown_table(rows, rtol), encoding="utf-8")
    if rows:
        plot_eval(rows, out / "eval.png", f"{dsl}: held-out evaluation per round")


__all__ = ["DEFAULT_EVAL_K", "DEFAULT_EVAL_SAMPLES", "PAPER_RTOL", "compiled", "markdown_table", "pass_at_k",
           "plot_eval", "summarize", "with_rtol", "write_eval"]
