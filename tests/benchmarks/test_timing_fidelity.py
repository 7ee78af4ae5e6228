"""benchmarks/timing_fidelity.py: the independent measurer on tiny CPU
candidates (loose bounds, no timing assertion beyond "3x the work is slower"),
the table and summary arithmetic on synthetic verdicts, and --resume."""

from __future__ import annotations

import json

import pytest
from benchmark_support import load_benchmark


tf = load_benchmark("timing_fidelity")

TASK = '''
import torch
import torch.nn as nn
N = 1 << 16
SIZE_PROFILES = {"small": {"N": 262144}}
class Model(nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
'''

SAME = '''# task: double  language: torch  device: both
# style: x + x
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return x + x
'''

SLOW = '''# task: double  language: torch  device: both
# style: three passes where one does
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        y = x * 2
        y = y * 1.0
        return y + 0.0
'''


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "honest").mkdir()
    (tmp_path / "tasks" / "double.py").write_text(TASK)
    (tmp_path / "honest" / "double__add.py").write_text(SAME)
    (tmp_path / "honest" / "double__slow.py").write_text(SLOW)
    return tmp_path


def _spec(corpus, name):
    # rounds of 0.1 s: a 20 ms round read one side 5x slower on the 2-core machine with other
    # builds beside it (the claim is the measurer's arithmetic, not the machine's quiet)
    task = corpus / "tasks" / "double.py"
    return {"task": str(task), "candidate": str(corpus / "honest" / f"{name}.py"), "device": "cpu",
            "language": "torch", "sizes": tf.task_sizes(task.read_text(), "small"), "rounds": 5,
            "min_run_time": 0.1}


def test_independent_measurer_on_tiny_cpu_candidates(corpus):
    same = tf.measure(_spec(corpus, "double__add"))
    assert "error" not in same, same
    assert same["max_abs_err"] == 0.0 and same["shapes_ok"]
    assert len(same["ratios"]) == 5
    assert 1 / 3 < same["speedup"] < 3  # the same work: near 1, loosely
    slow = tf.measure(_spec(corpus, "double__slow"))
    assert "error" not in slow, slow
    assert slow["speedup"] < 1.0  # three passes measured slower than one
    assert slow["cand_ms"] > slow["ref_ms"]


def test_measurer_reports_a_broken_candidate(corpus):
    (corpus / "honest" / "double__broken.py").write_text(
        "# task: double  language: torch  device: cpu\nraise RuntimeError('boom')\n")
    res = tf.measure(_spec(corpus, "double__broken"))
    assert "boom" in res["error"]


def test_a_spare_process_measures_as_a_fresh_one_and_the_next_waits(corpus, tmp_path):
    """Spares: each measurement in its own process, the next one started (torch imported)
    while the one before measures; a broken candidate's error and an unused spare's close."""
    spares = tf.Spares(None, 300.0)
    try:
        spec = {**_spec(corpus, "double__add"), "card": None, "ext_dir": str(tmp_path / "ext")}
        first = spares.measure(spec)
        assert "error" not in first, first
        assert first["max_abs_err"] == 0.0 and len(first["ratios"]) == 5
        waiting = spares.next
        assert waiting is not None and waiting.poll() is None  # the next process, started and waiting
        (corpus / "honest" / "double__broken.py").write_text(
            "# task: double  language: torch  device: cpu\nraise RuntimeError('boom')\n")
        broken = spares.measure({**_spec(corpus, "double__broken"), "card": None}, more=False)
        assert "boom" in broken["error"] and spares.next is None
        assert waiting.returncode is not None  # that process was the one used
        assert "error" not in spares.measure({**spec}, more=True)
    finally:
        spares.close()
    assert spares.next is None
    # --no-spares: nothing started ahead, the measurement the same
    lazy = tf.Spares(None, 300.0, ahead=False)
    assert "error" not in lazy.measure(spec) and lazy.next is None


def test_corpus_loading_and_selection(corpus):
    cands = tf.load_corpus(corpus)
    assert [c.name for c in cands] == ["double__add", "double__slow"]
    assert cands[0].style == "x + x" and cands[0].runs_on("cpu") and cands[0].runs_on("cuda")
    assert [c.name for c in tf.select(cands, "cpu", ["double__slow"])] == ["double__slow"]
    with pytest.raises(SystemExit):
        tf.select(cands, "cpu", ["nope"])
    cands[0].fidelity = False
    assert [c.name for c in tf.select(cands, "cuda", None)] == ["double__slow"]
    assert tf.task_sizes(TASK, "small") == {"N": 262144}
    assert tf.task_sizes(TASK, "full") == {}


def test_samples_file(corpus, tmp_path):
    out = tmp_path / "samples.jsonl"
    tf.write_samples(tf.load_corpus(corpus), out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["sample_id"], r["task_id"], r["language"]) for r in rows] == [
        ("double__add", "double", "torch"), ("double__slow", "double", "torch")]
    assert rows[0]["code"] == SAME


def _cand(name):
    return tf.Candidate(name=name, path=f"/x/{name}.py", task="t", language="torch", device="both", style="s")


def test_rows_and_summary_arithmetic():
    verdicts = {
        "a": {"status": "ok", "speedup": 1.1, "runtime_ms": 1.0, "ref_runtime_ms": 1.1, "flags": [],
              "speedup_ci": [1.0, 1.2]},
        "b": {"status": "ok", "speedup": 2.0, "runtime_ms": 0.5, "ref_runtime_ms": 1.0, "flags": []},
        "c": {"status": "rejected", "speedup": None, "flags": ["slow_copy"]},
        "d": {"status": "ok", "speedup": 0.5, "flags": ["suspicious"]},
    }
    ind = {"a": {"speedup": 1.0, "ref_ms": 1.0, "cand_ms": 1.0}, "b": {"speedup": 2.5},
           "c": {"speedup": 1.0}, "d": {"error": "exit 1"}}
    rows = [tf.make_row(_cand(n), verdicts[n], ind[n]) for n in "abcd"]
    assert rows[0]["deviation"] == pytest.approx(0.1)
    assert rows[1]["deviation"] == pytest.approx(-0.2)
    assert rows[2]["deviation"] is None and rows[3]["deviation"] is None
    s = tf.summarize(rows, "cpu")
    assert s["n"] == 2 and s["candidates"] == 4
    assert s["median_abs_deviation"] == pytest.approx(0.15)
    assert s["max_abs_deviation"] == pytest.approx(0.2)
    assert s["within"] == 2  # both within 25%
    assert s["flagged"] == 2 and s["flagged_names"] == ["c", "d"]
    assert s["ci_n"] == 1 and s["ci_contains_independent"] == 1
    assert s["goal_met"]  # on a CPU: every timed row within 25% (flags are reported, not part of the goal)
    g = tf.summarize(rows, "cuda")
    assert g["within"] == 1  # only a's 10% deviation is within the GPU bound
    md = tf.markdown(rows, s)
    assert md.count("\n| ") == 4  # the four rows after the header and its separator
    assert "+10.0" in md and "-20.0" in md and "slow_copy" in md
    missing = tf.make_row(_cand("e"), None, None)
    assert missing["status"] == "missing" and missing["deviation"] is None


def test_goal_met_when_all_agree():
    rows = [tf.make_row(_cand(n), {"status": "ok", "speedup": 1.0 + d, "flags": []}, {"speedup": 1.0})
            for n, d in (("a", 0.01), ("b", -0.02), ("c", 0.05))]
    assert tf.summarize(rows, "cuda")["goal_met"]  # all within 10%, median 2%
    rows.append(tf.make_row(_cand("d"), {"status": "ok", "speedup": 1.2, "flags": []}, {"speedup": 1.0}))
    assert not tf.summarize(rows, "cuda")["goal_met"]


def test_resume_skips_measured_candidates(tmp_path):
    out = tmp_path / "results.json"
    results = tf.load_results(out)
    assert results == {"independent": {}}
    results["independent"]["a"] = {"speedup": 1.0}
    results["independent"]["b"] = {"error": "timed out"}
    tf.save_results(out, results)
    again = tf.load_results(out)
    cands = [_cand(n) for n in "abc"]
    assert [c.name for c in tf.pending(cands, again, resume=True)] == ["b", "c"]
    assert [c.name for c in tf.pending(cands, again, resume=False)] == ["a", "b", "c"]


def test_read_verdicts_keeps_the_last_line_per_sample(tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_text('{"sample_id": "a", "status": "timeout"}\nnot json\n{"sample_id": "a", "status": "ok"}\n'
                    '{"sample_id": "b", "status": "ok"}\n{"sample_id": "c", "sta')
    v = tf.read_verdicts(path)
    assert sorted(v) == ["a", "b"] and v["a"]["status"] == "ok"
    assert tf.read_verdicts(tmp_path / "none.jsonl") == {}
    # an audit's verdicts name external rows by their ids: found under the merged corpus's names
    path.write_text('{"sample_id": "cudal1-a100-L1-9", "status": "ok"}\n')
    v = tf.read_verdicts(path)
    assert v["cudal1_a100_L1_9"] is v["cudal1-a100-L1-9"] and tf.file_name("cudal1-a100-L1-9") == "cudal1_a100_L1_9"


def test_external_table_becomes_a_corpus_and_bad_rows_name_their_line(tmp_path):
    table = tmp_path / "k.jsonl"
    table.write_text(json.dumps({"id": "x-L1-1", "ref_code": TASK, "custom_code": SAME.split("\n", 2)[2],
                                 "claimed_speedup": 1.5, "gpu_tuned_for": "a100"}) + "\n"
                     + json.dumps({"id": "x-L1-2", "ref_code": TASK,
                                   "custom_code": "from torch.utils.cpp_extension import load_inline\n"}) + "\n")
    corpus = tf.materialize(tmp_path / "c", None, table, None, None, tmp_path)
    cands = {c.name: c for c in tf.load_corpus(corpus)}
    assert set(cands) == {"x_L1_1", "x_L1_2"}
    assert cands["x_L1_1"].language == "torch" and cands["x_L1_2"].language == "cuda"
    assert "claimed 1.5x on a100" in cands["x_L1_1"].style
    assert tf.task_path(corpus, "x_L1_1").read_text() == TASK
    table.write_text('{"id": "y"}\n')
    with pytest.raises(SystemExit, match="k.jsonl:1"):
        tf.materialize(tmp_path / "d", None, table, None, None, tmp_path)


def test_kernelbench_and_reproducibility_columns():
    v = {"status": "ok", "speedup": 2.0, "speedup_kernelbench": 1.5, "speedup_ci": [1.8, 2.2], "flags": []}
    again = lambda x: {"status": "ok", "speedup": x}  # noqa: E731 - a second run's verdict
    rows = [tf.make_row(_cand("a"), v, {"speedup": 2.0}, {"speedup": 1.45}, again(2.1)),
            tf.make_row(_cand("b"), v, {"speedup": 2.0}, {"speedup": 1.2}, again(2.5)),
            tf.make_row(_cand("c"), v, {"speedup": 2.0}, {"compiled": True, "correct": False}, again(1.9))]
    assert rows[0]["kb_deviation"] == pytest.approx(1.5 / 1.45 - 1) and rows[2]["kb_deviation"] is None
    assert "correct=False" in rows[2]["kb_error"]
    s = tf.summarize(rows, "cuda")
    assert (s["kb_n"], s["kb_within"]) == (2, 1)
    assert (s["repro_n"], s["repro_inside"]) == (3, 2)
    assert s["ci_median_width"] == pytest.approx(2.2 / 1.8 - 1)
    assert s["process_spread_measured"] is not None
    assert not s["goal_met"]  # KernelBench: 1 of 2 within 10%


def test_kernelbench_s_harness_against_itself():
    # --kernelbench-repeat: its figure again in fresh processes, the largest move per row
    v = {"status": "ok", "speedup": 2.0, "speedup_kernelbench": 1.5, "speedup_ci": [1.8, 2.2], "flags": []}
    rows = [tf.make_row(_cand("a"), v, {"speedup": 2.0}, {"speedup": 1.5, "repeats": [1.52, 1.47]}),
            tf.make_row(_cand("b"), v, {"speedup": 2.0}, {"speedup": 1.0, "repeats": [1.6, None]}),
            tf.make_row(_cand("c"), v, {"speedup": 2.0}, {"speedup": 1.5})]
    assert rows[0]["kb_self_deviation"] == pytest.approx(0.02) and rows[1]["kb_self_deviation"] == pytest.approx(0.6)
    assert rows[1]["kb_repeats"] == [1.6] and rows[2]["kb_self_deviation"] is None
    s = tf.summarize(rows, "cuda")
    assert (s["kb_self_n"], s["kb_self_within"]) == (2, 1) and s["kb_self_median"] == pytest.approx(0.31)
    assert any("against itself" in line and "1 of 2" in line for line in tf.summary_lines(s))


def test_resume_measures_kernelbench_s_repeats_it_lacks():
    results = {"independent": {"a": {"speedup": 1.0}, "b": {"speedup": 1.0}, "c": {"speedup": 1.0}},
               "kernelbench": {"a": {"speedup": 1.1, "repeats": [1.2]}, "b": {"speedup": 1.1},
                               "c": {"error": "no figure"}}}
    cands = [_cand(n) for n in "abc"]
    assert [c.name for c in tf.pending(cands, results, resume=True)] == []
    # two repeats wanted: a has one, b none; c has no first figure to repeat
    assert [c.name for c in tf.pending(cands, results, resume=True, kb_repeat=3)] == ["a", "b"]


def test_a_candidate_rejected_by_policy_alone_is_compared_as_timed_not_awarded():
    timed = {"speedup": 1.3, "speedup_ci": [1.2, 1.4], "speedup_kernelbench": 1.25, "ref_ms": 1.3, "cand_ms": 1.0}
    policy = {"status": "rejected", "speedup": None, "flags": ["precision_downgrade"], "measurement": {"timed": timed}}
    cheat = {"status": "rejected", "speedup": None, "flags": ["torch_fallback", "cached_output"],
             "measurement": {"timed": timed}}
    wrong = {"status": "incorrect", "speedup": None, "flags": [], "measurement": {"timed": timed}}
    rows = [tf.make_row(_cand("p"), policy, {"speedup": 1.3}, {"speedup": 1.2}, policy),
            tf.make_row(_cand("c"), cheat, {"speedup": 1.3}),
            tf.make_row(_cand("w"), wrong, {"speedup": 1.3})]
    assert rows[0]["km_speedup"] == 1.3 and rows[0]["awarded"] is False and rows[0]["deviation"] == pytest.approx(0)
    assert rows[0]["kb_deviation"] == pytest.approx(1.25 / 1.2 - 1) and rows[0]["second_speedup"] == 1.3
    assert rows[1]["km_speedup"] is None and rows[2]["km_speedup"] is None  # a cheat's or a wrong answer's time is not compared
    s = tf.summarize(rows, "cuda")
    assert (s["n"], s["timed"], s["timed_not_awarded"]) == (1, 1, 1)
    assert "1 rejected by a policy" in "\n".join(tf.summary_lines(s))


def test_the_independent_gpu_time_of_overlapping_work_counts_it_once():
    # issue 39: a candidate on 99 streams has kernels that overlap; their sum (19 ms) is not
    # the call's GPU time (7 ms, which CUDA events confirmed): the union of the intervals is
    busy_us = tf.busy_us
    assert busy_us([]) == 0.0
    assert busy_us([(0, 10), (20, 25)]) == 15.0
    assert busy_us([(0, 10), (5, 12), (11, 13), (30, 31)]) == 14.0
    assert busy_us([(5, 6), (0, 10)]) == 10.0  # order of the records does not matter
    assert busy_us(iter([(0, 10), (10, 20), (30, 30)])) == 20.0  # a generator; touching; empty
    import random

    rng = random.Random(7)
    for _ in range(200):  # against counting covered unit steps
        spans = [(a, a + rng.randint(0, 9)) for a in (rng.randint(0, 40) for _ in range(rng.randint(0, 8)))]
        assert busy_us(spans) == len({t for a, b in spans for t in range(a, b)})


def test_resume_measures_again_a_row_of_a_superseded_method():
    old = next(iter(tf.SUPERSEDED_METHODS))
    cands = [tf.Candidate(name=n, path="p", task="t", language="cuda", device="cuda", style="external") for n in ("a", "b")]
    results = {"independent": {"a": {"speedup": 1.0, "method": old}, "b": {"speedup": 1.0, "method": "union"}}}
    assert [c.name for c in tf.pending(cands, results, resume=True)] == ["a"]


def test_a_verdict_rejected_by_policy_alone_is_timed_whatever_notes_it_carries():
    timed = {"speedup": 1.5, "speedup_ci": [1.4, 1.6]}
    v = {"status": "rejected", "flags": ["precision_downgrade", "weak_task"], "measurement": {"timed": timed}}
    assert tf.timed_figures(v)["speedup"] == 1.5 and tf.timed_figures(v)["awarded"] is False
    v["flags"] = ["precision_downgrade", "input_mutation"]  # a guard's finding: not timed
    assert tf.timed_figures(v) == {}
    v["flags"] = ["weak_task"]  # rejected by no policy flag: not timed
    assert tf.timed_figures(v) == {}


def test_a_kernelbench_that_does_not_import_stops_the_run_before_any_measurement(tmp_path, corpus, capsys):
    # session 16: the device lacked python-dotenv, and every external row's KernelBench figure was
    # an import error found one row at a time
    kb = tmp_path / "kb"
    (kb / "harness" / "kernelbench").mkdir(parents=True)
    (kb / "harness" / "kernelbench" / "__init__.py").write_text("")
    (kb / "harness" / "kernelbench" / "eval.py").write_text("import dotenv_that_is_not_installed\n")
    assert "dotenv_that_is_not_installed" in tf.kb_preflight(kb)
    with pytest.raises(SystemExit) as e:
        tf.main(["--device", "cuda", "--corpus", str(corpus), "--kernelbench", str(kb), "--out", str(tmp_path / "o.json")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "does not import" in err and "--kernelbench-rows none" in err
    assert not (tmp_path / "o.json").exists()
    (kb / "harness" / "kernelbench" / "eval.py").write_text(
        "def eval_kernel_against_ref(*a, **k): pass\ndef build_compile_cache(*a, **k): pass\n")
    assert tf.kb_preflight(kb) is None
    assert "no KernelBench harness" in tf.kb_preflight(tmp_path / "nowhere")


def test_a_compile_that_failed_answers_again_without_compiling_and_others_compile(tmp_path, monkeypatch):
    """The independent side's failed-compile replay: the same failing command on the same bytes
    gives the same output and exit code, the real compiler run once; a changed source, and a
    compile that succeeds, go to the compiler every time."""
    import os
    import subprocess

    calls = tmp_path / "calls.txt"
    fake = tmp_path / "bin" / "c++"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho run >> {calls}\nif grep -q bad \"$2\"; then echo 'main.cpp:3:1: error: nope' >&2; "
                    "exit 1; fi\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CXX", str(fake))
    monkeypatch.setenv("PYTORCH_NVCC", str(fake))
    env = tf.failed_compile_env(tmp_path / "compilers")
    assert set(env) == {"CXX", "PYTORCH_NVCC"} and env["CXX"].endswith("/c++") and env["PYTORCH_NVCC"].endswith("/nvcc")
    src = tmp_path / "main.cpp"
    src.write_text("bad\n")

    def compile_():
        return subprocess.run([env["CXX"], "-c", str(src), "-o", str(tmp_path / "main.o")], capture_output=True,
                              text=True, env=os.environ.copy())

    first, second = compile_(), compile_()
    assert first.returncode == second.returncode == 1
    assert "error: nope" in first.stderr and second.stderr == first.stderr
    assert calls.read_text().count("run") == 1  # answered from what it kept
    src.write_text("bad, edited\n")
    assert compile_().returncode == 1 and calls.read_text().count("run") == 2
    src.write_text("fine\n")
    assert compile_().returncode == 0 and compile_().returncode == 0 and calls.read_text().count("run") == 4


def test_a_card_whose_rows_are_done_measures_what_another_card_has_left():
    """kernelmill's cards were not evenly loaded: one card idled while the other had 9 rows
    left when the call ended (session_2026-11-30). A card takes its own rows first, cheapest
    first; then, with steal, the costliest row of the card with the most left."""
    q = tf.CardQueues({"A": ["a1"], "B": ["b1", "b2", "b3", "b4"]})
    assert q.take("A") == ("a1", "A", True)  # its own first; B's rows are left for it to take
    assert q.take("A") == ("b4", "B", True)  # B's costliest
    assert q.take("B") == ("b1", "B", True)
    assert q.take("B") == ("b2", "B", True)
    assert q.take("A") == ("b3", "B", False)
    assert q.take("A") == (None, None, False) and q.take("B") == (None, None, False)
    plain = tf.CardQueues({"A": [], "B": ["b1", "b2"]}, steal=False)
    assert plain.take("A") == (None, None, False) and plain.take("B") == ("b1", "B", True)
