"""The rendered table (intervals, pass@k coverage), the JSON form, and old verdict files."""

from __future__ import annotations

import io
import json
from dataclasses import asdict

import typer
from rich.console import Console
from typer.testing import CliRunner

from kernelmill.records import Verdict, read_jsonl
from kernelmill.report import MetricSet, metrics_by_level
from kernelmill.cli.report import metrics_command
from kernelmill.report.table import metrics_json, metrics_table


def verdict(task, sample, correct, speedup=None, ci=None, level=1):
    return Verdict(sample_id=f"{task}-{sample}", task_id=task, status="ok" if correct else "incorrect",
                   correct=correct, speedup=speedup, speedup_ci=ci, level=level)


def render(levels, width=100) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(metrics_table(levels))
    return console.export_text()


def test_pass_at_k_on_fewer_tasks_says_so():
    # A has one (correct) sample, B three failures: Exec@1 = 50%, Exec@2 only on B = 0%
    verdicts = [verdict("A", 0, True, 1.5)] + [verdict("B", s, False) for s in range(3)]
    levels = metrics_by_level(verdicts, ps=[1], ks=[1, 2])
    m = levels["all"]
    assert m.pass_tasks == {"1": 2, "2": 1} and m.tasks_below_k == {"1": 0, "2": 1}
    assert m.pass_exec["2"] < m.pass_exec["1"]
    text = render(levels)
    exec2 = next(line for line in text.splitlines() if line.startswith("│ Exec@2"))
    assert "0.0% (1/2)" in exec2  # the lower figure carries its coverage
    exec1 = next(line for line in text.splitlines() if line.startswith("│ Exec@1"))
    assert "(" not in exec1
    assert "computed on a of b tasks (@2)" in " ".join(text.split())


def test_full_coverage_has_no_marks():
    verdicts = [verdict(t, s, s == 0, 1.2) for t in "AB" for s in range(2)]
    text = render(metrics_by_level(verdicts, ps=[1], ks=[1, 2]))
    assert "every task has at least k samples" in " ".join(text.split())
    assert "(2/2)" not in text


def test_table_shows_intervals_and_undecided_within_100_columns():
    verdicts = [verdict(f"t{t}", s, True, 1.0 + 0.01 * t, [0.9, 1.2], level=1 + t % 3)
                for t in range(12) for s in range(2)]
    text = render(metrics_by_level(verdicts, ps=[0, 1, 2], ks=[1, 10]))
    assert max(len(line) for line in text.splitlines()) <= 100
    lines = text.splitlines()
    fast1 = next(i for i, line in enumerate(lines) if line.startswith("│ fast_1 "))
    assert lines[fast1 + 1].startswith("│   undecided")
    assert lines[fast1 + 1].rstrip("│ ").endswith("24")  # all 24 samples' intervals hold 1
    assert "95% interval" in text and "–" in lines[fast1]


def test_json_round_trip():
    verdicts = [verdict(f"t{t}", s, s != 1, 0.8 + 0.1 * t + 0.05 * s, [0.7, 1.6], level=1 + t % 2)
                for t in range(8) for s in range(3)]
    levels = metrics_by_level(verdicts, ps=[0, 1], ks=[1, 4])
    text = json.dumps(metrics_json(levels), allow_nan=False)
    back = {name: MetricSet(**d) for name, d in json.loads(text).items()}
    assert back == levels
    a = json.loads(text)["all"]
    assert a["fast_ci"]["1"][0] <= a["fast"]["1"] <= a["fast_ci"]["1"][1]
    assert a["pass_tasks"]["4"] == 0 and a["pass_exec"]["4"] is None


def test_old_verdict_files_without_speedup_ci(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    rows = [asdict(verdict(f"t{t}", s, s == 0, 1.0 + t / 10)) for t in range(6) for s in range(2)]
    for row in rows:
        del row["speedup_ci"]  # written before the field existed
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert all(v.speedup_ci is None for v in read_jsonl(path, Verdict))

    app = typer.Typer()
    app.command()(metrics_command)
    result = CliRunner().invoke(app, [str(path), "--k", "1,2", "--p", "1", "--json"])
    assert result.exit_code == 0, result.output
    m = json.loads(result.output)["all"]
    assert m["samples_with_speedup_ci"] == 0 and m["fast_undecided"] == {"1": 0}
    assert m["fast_bounds"]["1"] == [m["fast"]["1"]] * 2
    assert m["geomean_speedup_ci"][0] <= m["geomean_speedup"] <= m["geomean_speedup_ci"][1]
    assert m["ci_resamples"] == 1000 and m["ci_seed"] == 0

    table = CliRunner().invoke(app, [str(path), "--k", "1", "--resamples", "0"], env={"COLUMNS": "100"})
    assert table.exit_code == 0 and "G_speedup" in table.output and "95% interval" not in table.output
