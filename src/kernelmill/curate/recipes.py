"""Selection recipes: ConCuR and the ablations of its paper (SPEC.md section 1).

Every recipe takes the joined generations (`inputs.Generation`) and returns a
`Selection`: the chosen generations, each tagged with the part or recipe that
chose it, plus counts that explain the result. Seeds make every random choice
reproducible; inputs are sorted by `(task_id, sample_id)` first, so the input
file's order does not change the result.

Tie rules (the paper does not state them; these are ours):

* Lengths are `Sample.reasoning_tokens`. A generation without a count has an
  unknown length: it is never "the shortest" or "the longest", and a task with
  any unknown-length generation cannot prove which one is shortest, so it is
  skipped by ConCuR part (a) (counted as `a_skipped_unknown_length`).
* Speedup counts only for correct kernels; a correct kernel without a speedup
  is never "the fastest" and never above a threshold.
* Equal values tie exactly (floats compared with `==`). Part (a) keeps a task
  when the set of shortest generations and the set of fastest correct
  generations intersect. Among tied candidates a recipe takes, in order: the
  better secondary key (faster for length recipes, shorter for the speedup
  recipe), then the smaller `sample_id`.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .inputs import Generation

PAPER_SIZE = 4892                 # ConCuR's size, also the ablations' size
PAPER_SPEEDUP_THRESHOLD = 5.0     # part (b): speedup > 5
PAPER_SINGLE_SHARE = 544 / 4892   # part (c): 544 of the 4,892 samples
PAPER_SUBSET_SIZES = (552, 1105, 2210)
RECIPES = ("concur", "random", "max-len", "min-len", "speedup")


@dataclass
class Selection:
    recipe: str
    chosen: list[tuple[Generation, str]] = field(default_factory=list)  # (generation, part)
    counts: dict[str, int] = field(default_factory=dict)
    params: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def ids(self) -> list[str]:
        return [g.sample_id for g, _ in self.chosen]


def by_task(gens: Iterable[Generation]) -> dict[str, list[Generation]]:
    groups: dict[str, list[Generation]] = defaultdict(list)
    for g in sorted(gens, key=lambda g: (g.task_id, g.sample_id)):
        groups[g.task_id].append(g)
    return dict(groups)


def _neg(x: float | int | None) -> float:
    return -x if x is not None else math.inf


def _pos(x: float | int | None) -> float:
    return x if x is not None else math.inf


# per-task picks: sort keys, best first (ties -> secondary key -> sample_id)
_SHORTEST = lambda g: (_pos(g.length), _neg(g.speedup), g.sample_id)  # noqa: E731
_LONGEST = lambda g: (_neg(g.length), _neg(g.speedup), g.sample_id)  # noqa: E731
_FASTEST = lambda g: (_neg(g.speedup), _pos(g.length), g.sample_id)  # noqa: E731


def concur(gens: list[Generation], op_types: dict[str, str | None], *,
           target_size: int = PAPER_SIZE, speedup_threshold: float = PAPER_SPEEDUP_THRESHOLD,
           single_share: float = PAPER_SINGLE_SHARE, seed: int = 0) -> Selection:
    """ConCuR: three disjoint parts.

    (a) per task: the shortest-reasoning generation, kept only if it is also
        the fastest correct one of its task;
    (b) every correct kernel with speedup > `speedup_threshold`, not in (a);
    (c) correct kernels of single-operator tasks, not in (a) or (b), to balance
        task types: round(single_share * target_size) of them, fewer if (a)+(b)
        leave less room under `target_size` or if fewer exist. They are taken
        round-robin over single-operator tasks (tasks not yet in the set
        first, then in a seeded random order); within a task the shortest
        reasoning first. With the paper's counts ((a) 3,934 + (b) 414) the
        defaults give exactly its 544.
    (a) and (b) are never trimmed: if they exceed `target_size` the set is
    larger than the target and a note says so.
    """
    sel = Selection("concur", params={"target_size": target_size, "speedup_threshold": speedup_threshold,
                                      "single_share": single_share, "seed": seed})
    groups = by_task(gens)
    taken: set[str] = set()
    skipped_unknown = 0
    for task_id, group in groups.items():
        if any(g.length is None for g in group):
            skipped_unknown += 1
            continue
        shortest_len = min(g.length for g in group)
        fast = [g.speedup for g in group if g.speedup is not None]
        if not fast:
            continue
        top = max(fast)
        both = [g for g in group if g.length == shortest_len and g.speedup == top]
        if both:
            g = min(both, key=lambda g: g.sample_id)
            sel.chosen.append((g, "a"))
            taken.add(g.sample_id)
    n_a = len(sel.chosen)
    for g in sorted(gens, key=_FASTEST):
        if g.speedup is not None and g.speedup > speedup_threshold and g.sample_id not in taken:
            sel.chosen.append((g, "b"))
            taken.add(g.sample_id)
    n_b = len(sel.chosen) - n_a

    want_c = max(0, min(round(single_share * target_size), target_size - len(sel.chosen)))
    if want_c and not any(op_types.get(t) for t in groups):
        raise ValueError("ConCuR part (c) needs task types (single/fusion/network): give the tasks "
                         "(--tasks SOURCE) or set the single-operator share to 0")
    represented = {g.task_id for g, _ in sel.chosen}
    pools = {t: sorted((g for g in grp if g.correct and g.sample_id not in taken), key=_SHORTEST)
             for t, grp in groups.items() if op_types.get(t) == "single"}
    pools = {t: p for t, p in pools.items() if p}
    rng = random.Random(seed)
    order = sorted(pools)
    rng.shuffle(order)
    order.sort(key=lambda t: t in represented)  # stable: unrepresented tasks first
    picked_c = 0
    depth = 0
    while picked_c < want_c and any(len(pools[t]) > depth for t in order):
        for t in order:
            if picked_c >= want_c:
                break
            if len(pools[t]) > depth:
                sel.chosen.append((pools[t][depth], "c"))
                picked_c += 1
        depth += 1

    unknown_types = sum(1 for t in groups if not op_types.get(t))
    sel.counts = {"tasks": len(groups), "a": n_a, "b": n_b, "c": picked_c, "c_wanted": want_c,
                  "total": len(sel.chosen), "a_skipped_unknown_length": skipped_unknown,
                  "tasks_unknown_type": unknown_types,
                  "single_op_tasks": sum(1 for t in groups if op_types.get(t) == "single")}
    if picked_c < want_c:
        sel.notes.append(f"part (c): only {picked_c} single-operator samples available of {want_c} wanted")
    if n_a + n_b > target_size:
        sel.notes.append(f"parts (a)+(b) hold {n_a + n_b} samples, above the target {target_size}; not trimmed")
    if skipped_unknown:
        sel.notes.append(f"part (a): {skipped_unknown} tasks skipped, a generation lacks reasoning_tokens")
    return sel


def _per_task_then_top(name: str, gens: list[Generation], size: int, seed: int,
                       eligible: Callable[[Generation], bool],
                       pick: Callable[[list[Generation], random.Random], Generation],
                       overall: Callable[[Generation], tuple] | None) -> Selection:
    """Shared shape of the ablations: one pick per task, then N of those."""
    rng = random.Random(seed)
    picks = []
    groups = by_task(gens)
    for task_id, group in groups.items():
        pool = [g for g in group if eligible(g)]
        if pool:
            picks.append(pick(pool, rng))
    if overall is None:
        rng.shuffle(picks)
    else:
        picks.sort(key=overall)
    chosen = picks[:size]
    sel = Selection(name, chosen=[(g, name) for g in chosen], params={"size": size, "seed": seed})
    sel.counts = {"tasks": len(groups), "tasks_with_pick": len(picks), "total": len(chosen)}
    if len(picks) < size:
        sel.notes.append(f"only {len(picks)} tasks have an eligible generation; wanted {size}")
    return sel


def select(recipe: str, gens: list[Generation], op_types: dict[str, str | None] | None = None, *,
           size: int = PAPER_SIZE, seed: int = 0, speedup_threshold: float = PAPER_SPEEDUP_THRESHOLD,
           single_share: float = PAPER_SINGLE_SHARE) -> Selection:
    """Run a named recipe (one of `RECIPES`)."""
    if recipe == "concur":
        return concur(gens, op_types or {}, target_size=size, speedup_threshold=speedup_threshold,
                      single_share=single_share, seed=seed)
    if recipe == "random":
        # per task one random correct generation, then random tasks
        return _per_task_then_top(recipe, gens, size, seed, lambda g: g.correct,
                                  lambda pool, rng: rng.choice(pool), None)
    if recipe == "max-len":
        return _per_task_then_top(recipe, gens, size, seed, lambda g: g.correct and g.length is not None,
                                  lambda pool, _: min(pool, key=_LONGEST), _LONGEST)
    if recipe == "min-len":
        return _per_task_then_top(recipe, gens, size, seed, lambda g: g.correct and g.length is not None,
                                  lambda pool, _: min(pool, key=_SHORTEST), _SHORTEST)
    if recipe == "speedup":
        return _per_task_then_top(recipe, gens, size, seed, lambda g: g.speedup is not None,
                                  lambda pool, _: min(pool, key=_FASTEST), _FASTEST)
    raise ValueError(f"unknown recipe {recipe!r}; choose one of {', '.join(RECIPES)}")


def subsets(rows: list[dict], sizes: Iterable[int] = PAPER_SUBSET_SIZES, seed: int = 0
            ) -> dict[int, list[dict]]:
    """Random size subsets of a curated set (the paper's size ablation).

    Subsets are nested (each smaller one is inside each larger one): one seeded
    shuffle, then prefixes, so the size ablation changes only the size."""
    sizes = sorted(set(int(s) for s in sizes))
    if sizes and sizes[-1] > len(rows):
        raise ValueError(f"subset size {sizes[-1]} exceeds the {len(rows)} records available")
    if sizes and sizes[0] <= 0:
        raise ValueError("subset sizes must be positive")
    order = sorted(rows, key=lambda r: str(r.get("sample_id", "")))
    random.Random(seed).shuffle(order)
    return {n: order[:n] for n in sizes}
