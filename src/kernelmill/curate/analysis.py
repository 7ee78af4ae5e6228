"""The numbers behind ConCuR's observations (SPEC.md section 1).

* correct vs incorrect reasoning length (the boxplot), with a Mann-Whitney U
  test of the difference;
* accuracy per reasoning-length bin, with the count per bin;
* reasoning length vs speedup over correct kernels: least-squares line and
  Pearson r with its p-value (the paper: r = -0.047, p < 0.01);
* within task: for each task whose generations have different lengths, is the
  shortest one correct more often than the longest? A sign test over the
  tasks where exactly one of the two is correct.

Generations without a token count are left out of every length statistic and
counted (`excluded_unknown_length`).
"""

from __future__ import annotations

import math

from statistics import fmean, median

from .inputs import Generation
from .recipes import by_task


def _describe(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    s = sorted(values)
    q = lambda p: s[min(len(s) - 1, int(round(p * (len(s) - 1))))]  # noqa: E731
    return {"n": len(s), "mean": fmean(s), "median": median(s), "q1": q(0.25), "q3": q(0.75),
            "min": s[0], "max": s[-1]}


def length_bins(gens: list[Generation], bin_width: float) -> list[dict]:
    known = [g for g in gens if g.length is not None]
    if not known:
        return []
    top = max(g.length for g in known)
    n_bins = int(top // bin_width) + 1
    counts = [0] * n_bins
    correct = [0] * n_bins
    for g in known:
        i = int(g.length // bin_width)
        counts[i] += 1
        correct[i] += g.correct
    return [{"lo": i * bin_width, "hi": (i + 1) * bin_width, "count": c,
             "correct": k, "accuracy": (k / c) if c else None}
            for i, (c, k) in enumerate(zip(counts, correct))]


def length_vs_speedup(gens: list[Generation]) -> dict:
    pts = [(float(g.length), g.speedup) for g in gens if g.length is not None and g.speedup is not None]
    out: dict = {"n": len(pts)}
    if len(pts) < 3:
        out["note"] = "fewer than 3 correct generations with a length and a speedup"
        return out
    from scipy import stats

    xs, ys = zip(*pts)
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        out["note"] = "lengths or speedups are all equal: no correlation defined"
        return out
    r, p = stats.pearsonr(xs, ys)
    fit = stats.linregress(xs, ys)
    out.update({"pearson_r": float(r), "p_value": float(p), "slope": float(fit.slope),
                "intercept": float(fit.intercept)})
    # speedups are ratios: on a log scale a 2x and a 0.5x are equally far from 1, and a
    # few 50x outliers do not decide the correlation. Spearman (ranks) needs no scale at all.
    logs = [(x, math.log10(y)) for x, y in pts if y > 0]
    out["n_log"] = len(logs)
    if len(logs) >= 3 and len({x for x, _ in logs}) > 1 and len({y for _, y in logs}) > 1:
        lx, ly = zip(*logs)
        rl, pl = stats.pearsonr(lx, ly)
        rho, ps = stats.spearmanr(lx, ly)
        lfit = stats.linregress(lx, ly)
        out.update({"pearson_r_log": float(rl), "p_value_log": float(pl), "spearman_rho": float(rho),
                    "spearman_p": float(ps), "slope_log10": float(lfit.slope),
                    "intercept_log10": float(lfit.intercept)})
    return out


def within_task(gens: list[Generation]) -> dict:
    from scipy import stats

    both = neither = only_short = only_long = skipped = 0
    for group in by_task(gens).values():
        known = [g for g in group if g.length is not None]
        if len(known) < 2 or len({g.length for g in known}) < 2:
            skipped += 1
            continue
        # ties on length: the smaller sample_id, as the recipes do
        short = min(known, key=lambda g: (g.length, g.sample_id))
        long_ = min(known, key=lambda g: (-g.length, g.sample_id))
        if short.correct and long_.correct:
            both += 1
        elif short.correct:
            only_short += 1
        elif long_.correct:
            only_long += 1
        else:
            neither += 1
    tasks = both + neither + only_short + only_long
    discordant = only_short + only_long
    p = float(stats.binomtest(only_short, discordant, 0.5).pvalue) if discordant else None
    return {"tasks": tasks, "tasks_skipped": skipped, "both_correct": both, "neither_correct": neither,
            "only_shortest_correct": only_short, "only_longest_correct": only_long,
            "shortest_accuracy": ((both + only_short) / tasks) if tasks else None,
            "longest_accuracy": ((both + only_long) / tasks) if tasks else None,
            "sign_test_p": p}


def analyze(gens: list[Generation], bin_width: float = 2000.0) -> dict:
    """Every number of the analysis, JSON-ready."""
    if bin_width <= 0:
        raise ValueError("bin width must be positive")
    known = [g for g in gens if g.length is not None]
    right = [float(g.length) for g in known if g.correct]
    wrong = [float(g.length) for g in known if not g.correct]
    box = {"correct": _describe(right), "incorrect": _describe(wrong)}
    if right and wrong:
        from scipy import stats

        u = stats.mannwhitneyu(right, wrong, alternative="two-sided")
        box["mann_whitney_u"] = float(u.statistic)
        box["mann_whitney_p"] = float(u.pvalue)
    tasks = by_task(gens)
    n_correct = sum(g.correct for g in gens)
    return {
        "generations": len(gens),
        "tasks": len(tasks),
        "tasks_with_correct": sum(any(g.correct for g in grp) for grp in tasks.values()),
        "correct": n_correct,
        "accuracy": n_correct / len(gens) if gens else None,
        "arl": fmean(float(g.length) for g in known) if known else None,
        "excluded_unknown_length": len(gens) - len(known),
        "length_by_correctness": box,
        "accuracy_by_length_bin": {"bin_width": bin_width, "bins": length_bins(gens, bin_width)},
        "length_vs_speedup": length_vs_speedup(gens),
        "within_task": within_task(gens),
    }
