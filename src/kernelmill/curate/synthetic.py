"""SYNTHETIC data for tests and benchmarks of curation. Not real generations.

* `synthetic_kernels`: CUDA-like kernel sources (~2 KB) built from random
  statements, with planted near-duplicates (identifier tokens replaced at a
  chosen rate) and planted exact duplicates (same code, other comments and
  layout). Each planted pair's *exact* shingle Jaccard is measured and
  returned, so dedup can be scored against the truth.
* `synthetic_generations`: Samples + Verdicts at ConCuR's scale (tasks x
  generations) with reasoning lengths, correctness that falls with length,
  and log-normal speedups; plus task types.

Everything is drawn from `random.Random(seed)`: the same seed gives the same data.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..records import Sample, Verdict
from .normalize import jaccard, normalize_code, shingle_hashes

_FUNCS = ("expf", "tanhf", "sqrtf", "fmaxf", "fminf", "logf", "rsqrtf", "fabsf", "sinf", "cosf")
_OPS = ("+", "-", "*")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _name(rng: random.Random, prefix: str = "") -> str:
    return prefix + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 7)))


def _kernel(rng: random.Random, target_bytes: int) -> str:
    name = _name(rng, "k_")
    src, dst, n, idx = _name(rng), _name(rng), _name(rng, "n"), _name(rng, "i")
    lines = ["#include <torch/extension.h>", "#include <cuda_runtime.h>", "",
             f"__global__ void {name}(const float* __restrict__ {src}, float* __restrict__ {dst}, int {n}) {{",
             f"    int {idx} = blockIdx.x * blockDim.x + threadIdx.x;",
             f"    if ({idx} >= {n}) return;",
             f"    float v0 = {src}[{idx}];"]
    k = 0
    while sum(len(s) + 1 for s in lines) < target_bytes - 420:
        k += 1
        a, b = f"v{rng.randrange(k)}", f"v{rng.randrange(k)}"
        c = round(rng.uniform(-9, 9), rng.randint(1, 4))
        expr = rng.choice([
            f"{rng.choice(_FUNCS)}({a}) {rng.choice(_OPS)} {c}f",
            f"{a} {rng.choice(_OPS)} {b} {rng.choice(_OPS)} {c}f",
            f"{rng.choice(_FUNCS)}({a} {rng.choice(_OPS)} {b})",
            f"({a} > {c}f) ? {a} : {b} * {c}f",
        ])
        lines.append(f"    float v{k} = {expr};  // step {_name(rng)}")
    lines += [f"    {dst}[{idx}] = v{k};", "}", "",
              f"torch::Tensor {name}_forward(torch::Tensor {src}) {{",
              f"    auto {dst} = torch::empty_like({src});",
              f"    int {n} = {src}.numel();",
              f"    {name}<<<({n} + 255) / 256, 256>>>({src}.data_ptr<float>(), {dst}.data_ptr<float>(), {n});",
              f"    return {dst};", "}"]
    return "\n".join(lines) + "\n"


def _mutate(rng: random.Random, code: str, rate: float) -> str:
    """Replace a share `rate` of identifier tokens by fresh ones."""
    spans = [m.span() for m in _IDENT.finditer(code)]
    chosen = sorted(rng.sample(range(len(spans)), int(round(rate * len(spans)))))
    out, last = [], 0
    for i in chosen:
        s, e = spans[i]
        out.append(code[last:s])
        out.append(_name(rng, "z"))
        last = e
    out.append(code[last:])
    return "".join(out)


def _relayout(rng: random.Random, code: str) -> str:
    """Same code, other comments and whitespace (an exact duplicate after
    code-aware normalisation)."""
    lines = [ln.split("//")[0].rstrip() for ln in code.split("\n")]
    lines = [("\t" + ln.strip()) if ln.startswith("    ") else ln for ln in lines]
    return f"// copy {_name(rng)}\n" + "\n\n".join(lines)


@dataclass
class Planted:
    original: str      # id of the record the copy was made from
    copy: str          # id of the planted copy
    kind: str          # "near" | "exact"
    jaccard: float     # exact Jaccard of the two shingle sets (code-normalised)


def synthetic_kernels(n: int, dup_share: float = 0.2, exact_share: float = 0.25, seed: int = 0,
                      kernel_bytes: int = 2048, shingle: int = 5,
                      rates: tuple[float, ...] = (0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2)
                      ) -> tuple[list[dict], list[Planted]]:
    """`n` records {id, task_id, code}: originals plus planted copies.

    A share `dup_share` of the records are copies of earlier originals; of
    those, `exact_share` are exact (re-laid-out) copies and the rest replace
    a rate of identifiers drawn from `rates` (spanning Jaccard ~1.0 to ~0.5)."""
    rng = random.Random(seed)
    n_copies = int(n * dup_share)
    n_orig = n - n_copies
    records = [{"id": f"k{i:06d}", "task_id": "synthetic", "code": _kernel(rng, kernel_bytes)}
               for i in range(n_orig)]
    planted: list[Planted] = []
    for c in range(n_copies):
        src = records[rng.randrange(n_orig)]
        cid = f"d{c:06d}"
        if rng.random() < exact_share:
            code, kind = _relayout(rng, src["code"]), "exact"
        else:
            code, kind = _mutate(rng, src["code"], rng.choice(rates)), "near"
        records.append({"id": cid, "task_id": "synthetic", "code": code})
        a = shingle_hashes(normalize_code(src["code"]), shingle)
        b = shingle_hashes(normalize_code(code), shingle)
        planted.append(Planted(src["id"], cid, kind, jaccard(a, b)))
    # copies come after their originals, interleaved in a fixed shuffled order
    tail = records[n_orig:]
    rng.shuffle(tail)
    return records[:n_orig] + tail, planted


def synthetic_generations(n_tasks: int = 18162, per_task: int = 5, seed: int = 0,
                          single_share: float = 0.3) -> tuple[list[Sample], list[Verdict], dict[str, str]]:
    """Samples + Verdicts + task types at ConCuR's scale (18,162 x 5 = 90,810)."""
    rng = random.Random(seed)
    samples, verdicts, types = [], [], {}
    for t in range(n_tasks):
        task_id = f"syn/{t:05d}"
        types[task_id] = "single" if rng.random() < single_share else rng.choice(("fusion", "network"))
        hardness = rng.lognormvariate(8.4, 0.45)  # per-task typical length, ~4,400 tokens
        for g in range(per_task):
            sid = f"{task_id}#{g}"
            tokens = max(200, int(rng.lognormvariate(0, 0.35) * hardness))
            p_correct = max(0.02, 0.75 - tokens / 25000)
            correct = rng.random() < p_correct
            speed = round(rng.lognormvariate(-0.1, 0.8), 4) if correct else None
            samples.append(Sample(sid, task_id, "cuda", f"// synthetic kernel {sid}\n",
                                  reasoning=f"synthetic reasoning {sid}", reasoning_tokens=tokens,
                                  model="synthetic"))
            verdicts.append(Verdict(sid, task_id, "ok" if correct else "incorrect", compiled=True,
                                    correct=correct, speedup=speed))
    return samples, verdicts, types
