"""Selection recipes: ConCuR's three parts, the ablations, tie rules, seeds."""

from __future__ import annotations

import random

import pytest

from kernelmill.curate import Generation, concur, select, subsets
from kernelmill.curate.recipes import PAPER_SINGLE_SHARE
from kernelmill.records import Sample, Verdict


def gen(task, i, tokens, correct=True, speedup=1.0):
    sid = f"{task}#{i}"
    return Generation(Sample(sid, task, "cuda", f"code {sid}", reasoning="r", reasoning_tokens=tokens),
                      Verdict(sid, task, "ok" if correct else "incorrect", compiled=True, correct=correct,
                              speedup=speedup if correct else None))


def parts(sel):
    return {g.sample_id: p for g, p in sel.chosen}


def test_part_a_keeps_shortest_only_when_fastest():
    gens = [gen("t1", 0, 100, speedup=2.0), gen("t1", 1, 200, speedup=1.5),   # shortest is fastest
            gen("t2", 0, 100, speedup=1.0), gen("t2", 1, 200, speedup=3.0),   # shortest is slower
            gen("t3", 0, 100, correct=False), gen("t3", 1, 200, speedup=1.2)]  # shortest is wrong
    sel = concur(gens, {}, single_share=0, target_size=10)
    assert parts(sel) == {"t1#0": "a"}
    assert sel.counts["a"] == 1 and sel.counts["b"] == 0 and sel.counts["c"] == 0


def test_part_a_tie_rules():
    # two shortest at 100 tokens; the fastest (3.0) is one of them -> kept
    gens = [gen("t", 0, 100, speedup=1.0), gen("t", 1, 100, speedup=3.0), gen("t", 2, 300, speedup=3.0)]
    assert parts(concur(gens, {}, single_share=0)) == {"t#1": "a"}
    # equal speed and equal length: the smaller sample_id
    gens = [gen("u", 1, 100, speedup=2.0), gen("u", 0, 100, speedup=2.0)]
    assert parts(concur(gens, {}, single_share=0)) == {"u#0": "a"}
    # a generation without a token count: the task cannot prove its shortest
    gens = [gen("v", 0, 100, speedup=2.0), gen("v", 1, None, speedup=1.0)]
    sel = concur(gens, {}, single_share=0)
    assert sel.chosen == [] and sel.counts["a_skipped_unknown_length"] == 1


def test_part_b_threshold_is_strict_and_disjoint_from_a():
    gens = [gen("t1", 0, 100, speedup=9.0), gen("t1", 1, 200, speedup=6.0),
            gen("t2", 0, 50, speedup=1.0), gen("t2", 1, 90, speedup=5.0),      # exactly 5: not > 5
            gen("t3", 0, 10, correct=False), gen("t3", 1, 20, speedup=5.5)]
    p = parts(concur(gens, {}, single_share=0))
    assert p == {"t1#0": "a", "t1#1": "b", "t3#1": "b"}
    p = parts(concur(gens, {}, single_share=0, speedup_threshold=4.0))
    assert p["t2#1"] == "b"


def test_part_c_balances_single_operator_tasks():
    gens, types = [], {}
    for t in range(10):
        tid = f"s{t}"
        types[tid] = "single"
        gens += [gen(tid, 0, 100, speedup=1.0), gen(tid, 1, 50, speedup=1.2)]  # (a) takes #1
    for t in range(5):
        tid = f"f{t}"
        types[tid] = "fusion"
        gens += [gen(tid, 0, 100, speedup=1.0), gen(tid, 1, 200, speedup=0.9)]
    sel = concur(gens, types, target_size=20, single_share=0.25, seed=3)
    p = parts(sel)
    c = [sid for sid, part in p.items() if part == "c"]
    assert len(c) == 5  # round(0.25 * 20), room 20 - 15 = 5
    assert all(sid.startswith("s") and sid.endswith("#0") for sid in c)
    assert len(set(p)) == len(p)  # disjoint
    # room under the target limits (c)
    sel = concur(gens, types, target_size=17, single_share=0.25)
    assert sel.counts["c"] == 2 and sel.counts["c_wanted"] == 2


def test_part_c_prefers_unrepresented_tasks_and_is_seeded():
    gens, types = [], {}
    for t in range(6):
        tid = f"s{t}"
        types[tid] = "single"
        # s0..s2 are represented through (a); s3..s5 have the shortest wrong -> not in (a)
        if t < 3:
            gens += [gen(tid, 0, 10, speedup=2.0), gen(tid, 1, 20, speedup=1.0)]
        else:
            gens += [gen(tid, 0, 10, correct=False), gen(tid, 1, 20, speedup=1.0)]
    sel = concur(gens, types, target_size=6, single_share=0.5, seed=1)
    c = sorted(g.task_id for g, p in sel.chosen if p == "c")
    assert c == ["s3", "s4", "s5"]
    a = concur(gens, types, target_size=5, single_share=0.4, seed=1).ids()
    b = concur(list(reversed(gens)), types, target_size=5, single_share=0.4, seed=1).ids()
    assert a == b  # input order does not matter


def test_part_c_without_types_is_a_clear_error():
    with pytest.raises(ValueError, match="task types"):
        concur([gen("t", 0, 10)], {}, target_size=10)


def test_paper_counts_give_paper_part_c():
    # with (a)+(b) = 4,348 the defaults ask for exactly the paper's 544
    assert round(PAPER_SINGLE_SHARE * 4892) == 544 == 4892 - 3934 - 414


@pytest.fixture(scope="module")
def pool():
    rng = random.Random(0)
    gens = []
    for t in range(40):
        for i in range(5):
            ok = rng.random() < 0.6
            gens.append(gen(f"t{t:02d}", i, rng.randint(100, 9000), correct=ok, speedup=round(rng.uniform(0.2, 4), 2)))
    return gens


@pytest.mark.parametrize("recipe", ["random", "max-len", "min-len", "speedup"])
def test_ablations_pick_one_correct_per_task(pool, recipe):
    sel = select(recipe, pool, size=15, seed=7)
    assert len(sel.chosen) == 15
    assert len({g.task_id for g, _ in sel.chosen}) == 15
    assert all(g.correct for g, _ in sel.chosen)
    assert select(recipe, pool, size=15, seed=7).ids() == sel.ids()


def test_ablation_orders(pool):
    correct = [g for g in pool if g.correct]
    best_len = {}
    for g in correct:
        best_len[g.task_id] = max(best_len.get(g.task_id, 0), g.length)
    chosen = select("max-len", pool, size=10).chosen
    assert [g.length for g, _ in chosen] == sorted(best_len.values(), reverse=True)[:10]
    mins = {}
    for g in correct:
        mins[g.task_id] = min(mins.get(g.task_id, 10**9), g.length)
    assert [g.length for g, _ in select("min-len", pool, size=10).chosen] == sorted(mins.values())[:10]
    fast = {}
    for g in correct:
        fast[g.task_id] = max(fast.get(g.task_id, 0), g.speedup)
    assert [g.speedup for g, _ in select("speedup", pool, size=10).chosen] == sorted(fast.values(), reverse=True)[:10]


def test_random_depends_on_seed(pool):
    assert select("random", pool, size=10, seed=1).ids() != select("random", pool, size=10, seed=2).ids()


def test_ablation_shortfall_is_noted(pool):
    sel = select("speedup", pool, size=1000)
    assert sel.notes and len(sel.chosen) == sel.counts["tasks_with_pick"] < 1000


def test_subsets_are_nested_and_seeded():
    rows = [{"sample_id": f"s{i}"} for i in range(100)]
    out = subsets(rows, (10, 30, 50), seed=4)
    assert [len(v) for v in out.values()] == [10, 30, 50]
    assert {r["sample_id"] for r in out[10]} <= {r["sample_id"] for r in out[30]}
    assert subsets(list(reversed(rows)), (10,), seed=4)[10] == out[10]
    with pytest.raises(ValueError, match="exceeds"):
        subsets(rows, (200,))
