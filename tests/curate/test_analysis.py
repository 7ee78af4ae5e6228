"""Difficulty buckets, the analysis numbers and the figures."""

from __future__ import annotations

import json
import math

import pytest

from kernelmill.curate import Generation, analyze, bucket_of, difficulty_table
from kernelmill.curate.figures import FIGURES, write_analysis
from kernelmill.curate.synthetic import synthetic_generations
from kernelmill.curate.inputs import join
from kernelmill.records import Sample, Verdict


def gen(task, i, tokens, correct, speedup=None):
    sid = f"{task}#{i}"
    return Generation(Sample(sid, task, "cuda", "c", reasoning_tokens=tokens),
                      Verdict(sid, task, "ok", correct=correct, speedup=speedup))


def test_bucket_edges():
    assert [bucket_of(x) for x in (3999.9, 4000, 8500, 8500.1, None)] == ["easy", "medium", "medium", "hard", "unknown"]
    assert bucket_of(5000, easy_below=6000) == "easy"


def test_difficulty_table_numbers():
    gens = [gen("e", 0, 1000, True, 2.0), gen("e", 1, 3000, True, 8.0),          # ARL 2000, easy
            gen("m", 0, 5000, False), gen("m", 1, 7000, False),                 # ARL 6000, medium, no correct
            gen("h", 0, 9000, True, 0.5), gen("h", 1, None, False)]             # ARL 9000 (one counted), hard
    t = difficulty_table(gens)
    b = t["buckets"]
    assert b["easy"]["exec"] == 1.0 and b["easy"]["g_speedup"] == pytest.approx(4.0)
    assert b["easy"]["fast_1"] == 1.0
    assert b["medium"]["exec"] == 0.0 and b["medium"]["g_speedup"] is None
    assert b["hard"]["arl"] == 9000 and b["hard"]["fast_1"] == 0.0
    with pytest.raises(ValueError):
        difficulty_table(gens, easy_below=9000, hard_above=100)


def test_within_task_and_bins():
    gens = []
    for t in range(20):  # shortest correct, longest wrong in 15 tasks; reverse in 5
        flip = t < 5
        gens += [gen(f"t{t}", 0, 1000 + t, not flip), gen(f"t{t}", 1, 5000 + t, flip)]
    s = analyze(gens, bin_width=2000)
    wt = s["within_task"]
    assert (wt["only_shortest_correct"], wt["only_longest_correct"]) == (15, 5)
    assert wt["shortest_accuracy"] == 0.75 and wt["sign_test_p"] < 0.05
    bins = s["accuracy_by_length_bin"]["bins"]
    assert bins[0]["count"] == 20 and bins[0]["accuracy"] == 0.75 and bins[2]["accuracy"] == 0.25
    assert s["length_by_correctness"]["correct"]["n"] == 20


def test_pearson_matches_numpy():
    import numpy as np

    gens = [gen(f"t{i}", 0, 1000 + 37 * i, True, 1.0 + ((i * 7) % 11) / 3) for i in range(50)]
    fit = analyze(gens)["length_vs_speedup"]
    xs = [g.length for g in gens]
    ys = [g.speedup for g in gens]
    assert fit["pearson_r"] == pytest.approx(np.corrcoef(xs, ys)[0, 1])
    assert fit["n"] == 50


def test_write_analysis_files(tmp_path):
    samples, verdicts, _ = synthetic_generations(n_tasks=300, per_task=5, seed=2)
    gens, _ = join(samples, verdicts)
    stats = write_analysis(gens, tmp_path)
    for name in FIGURES:
        assert (tmp_path / name).stat().st_size > 10_000
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((tmp_path / "analysis.json").read_text())
    assert saved["generations"] == 1500 and math.isfinite(saved["length_vs_speedup"]["pearson_r"])
    # the synthetic data makes long reasoning less accurate: the analysis must see it
    assert stats["length_by_correctness"]["incorrect"]["median"] > stats["length_by_correctness"]["correct"]["median"]


def test_log_speedup_correlations_and_the_figures_axes(tmp_path, monkeypatch):
    import matplotlib
    import matplotlib.pyplot as plt
    import numpy as np
    from scipy import stats as st

    matplotlib.use("Agg")
    gens = [gen(f"t{i}", 0, 1000 + 37 * i, True, 0.2 * (1.09 ** ((i * 7) % 40))) for i in range(50)]
    fit = analyze(gens)["length_vs_speedup"]
    xs = [g.length for g in gens]
    logs = [np.log10(g.speedup) for g in gens]
    assert fit["pearson_r_log"] == pytest.approx(np.corrcoef(xs, logs)[0, 1])
    assert fit["spearman_rho"] == pytest.approx(st.spearmanr(xs, [g.speedup for g in gens])[0])
    assert fit["n_log"] == 50

    figs = {}
    real_close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.setdefault(len(figs), fig))
    write_analysis(gens, tmp_path)
    monkeypatch.setattr(plt, "close", real_close)
    by_title = {f.axes[0].get_title(): f for f in figs.values()}
    scatter = next(f for t, f in by_title.items() if t.startswith("Reasoning length vs speedup"))
    ax = scatter.axes[0]
    assert ax.get_yscale() == "log"
    [points] = ax.collections
    assert len(points.get_offsets()) == 50 and points.get_sizes()[0] >= 14
    assert "Spearman" in ax.get_legend().get_texts()[0].get_text()
    acc = by_title["Accuracy per reasoning-length bin"]
    # counts are bars on the twin axis, not a line
    assert all(not a.lines for a in acc.axes)
    assert len(acc.axes[1].patches) == len([b for b in analyze(gens)["accuracy_by_length_bin"]["bins"] if b["count"]])
    for f in figs.values():
        real_close(f)
