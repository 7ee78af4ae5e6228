"""The run machinery of `ptx evaluate` on a CPU: batches of jobs in sandboxed
workers, judged when a worker dies (a fake worker speaks the protocol), and
ncu's CSV matched to launches."""

from __future__ import annotations

import textwrap

import pytest

from kernelmill.ptx.evaluate import runner
from kernelmill.ptx.evaluate.ncu import match_launches, ncu_command, parse_csv

FAKE = textwrap.dedent('''
    import json, os, signal, sys, time
    spec = json.load(open(sys.argv[1])); os.unlink(sys.argv[1])
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    fh = open(spec["events"], "a")
    def emit(**kw):
        fh.write(json.dumps(kw) + "\\n"); fh.flush()
    for job in spec["jobs"]:
        what = job["config"]["kernel"]
        emit(id=job["id"], event="start")
        signal.alarm(int(spec["job_timeout"]))
        if what == "refcrash":
            os.kill(os.getpid(), signal.SIGSEGV)
        emit(id=job["id"], event="cand")
        if what == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if what == "hang":
            while True:
                time.sleep(1)
        if what == "lost":
            emit(id=job["id"], event="done", status="runtime_error", message="CUDA error: illegal address")
            sys.exit(3)
        signal.alarm(0)
        emit(id=job["id"], event="done", status="ok", ran=True, io_correct=True, pid=os.getpid())
''')


@pytest.fixture
def fake_worker(tmp_path, monkeypatch):
    (tmp_path / "km_fake_worker.py").write_text(FAKE)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(runner, "WORKER", "km_fake_worker")


def _job(i, what, pair=None):
    return {"id": f"j{i}", "pair_id": pair or f"p{i}", "ref_so": "", "cand_so": "", "config": {"kernel": what}}


def test_deaths_are_judged_and_the_rest_runs_in_a_fresh_worker(fake_worker, tmp_path):
    jobs = [_job(0, "ok"), _job(1, "crash"), _job(2, "ok"), _job(3, "hang"), _job(4, "lost"), _job(5, "ok"),
            _job(6, "refcrash", "px"), _job(7, "ok", "px"), _job(8, "ok")]
    cfg = runner.RunSettings(device="cpu", workers=2, batch=9, job_timeout=2, startup_s=30)
    seen = []
    res = runner.run_jobs(jobs, cfg, tmp_path / "work", on_result=lambda jid, r: seen.append(jid))
    assert sorted(res) == sorted(j["id"] for j in jobs) and sorted(seen) == sorted(res)
    assert res["j0"]["status"] == "ok" and res["j2"]["status"] == "ok" and res["j8"]["status"] == "ok"
    assert res["j1"]["status"] == "runtime_error" and "SIGSEGV" in res["j1"]["message"]
    assert res["j3"]["status"] == "timeout"
    assert res["j4"]["status"] == "runtime_error" and "illegal" in res["j4"]["message"]
    assert res["j6"]["status"] == "reference_failed"
    # the pair's reference failed: its other candidate is not run again
    assert res["j7"]["status"] == "reference_failed"
    # after each death a fresh process took the rest
    assert len({res[j].get("pid") for j in ("j0", "j2", "j5", "j8")}) >= 3


def test_a_worker_that_cannot_start_is_our_error(tmp_path, monkeypatch):
    (tmp_path / "km_broken_worker.py").write_text("raise SystemExit('no torch here')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(runner, "WORKER", "km_broken_worker")
    with pytest.raises(runner.RunnerError, match="no torch here"):
        runner.run_jobs([_job(0, "ok")], runner.RunSettings(device="cpu", workers=1), tmp_path / "work")


NCU_CSV = '''==PROF== Connected to process 123
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"
"","","","","","","","","","","","%"
"0","123","python","h","add_k","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0","100"
"1","123","python","h","add_k","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0","100"
"2","123","python","h","gemm_t8","1","7","(8, 8, 1)","(8, 8, 1)","0","9.0","1,2.5"
"3","123","python","h","gemm_t8","1","7","(8, 8, 1)","(8, 8, 1)","0","9.0","n/a"
'''


def test_ncu_rows_are_matched_to_launches():
    metric = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"
    rows = parse_csv(NCU_CSV, metric)
    assert rows == [("add_k", 100.0), ("add_k", 100.0), ("gemm_t8", 12.5), ("gemm_t8", None)]
    launches = [{"id": "a", "side": "ref", "kernel": "add_k"}, {"id": "a", "side": "cand", "kernel": "add_k"},
                {"id": "g", "side": "ref", "kernel": "gemm_t8"}, {"id": "g", "side": "cand", "kernel": "gemm_t8"}]
    assert match_launches(launches, rows) == {"a": {"ref": 100.0, "cand": 100.0}, "g": {"ref": 12.5, "cand": None}}
    # a launch ncu did not profile is skipped, the rest still line up
    assert match_launches(launches[:2] + [{"id": "x", "side": "ref", "kernel": "other"}] + launches[2:], rows)["g"] \
        == {"ref": 12.5, "cand": None}
    assert parse_csv("no csv here", metric) == []
    cmd = ncu_command("ncu", metric, ["add_k", "gemm_t8", "add_k"], "/tmp/x.csv")
    assert "regex:^(add_k|gemm_t8)$" in cmd and cmd[cmd.index("--metrics") + 1] == metric


PIPE_FAKE = textwrap.dedent('''
    import json, os, signal, sys
    spec = json.load(open(sys.argv[1])); os.unlink(sys.argv[1])
    fh = open(spec["events"], "a")
    def emit(**kw):
        fh.write(json.dumps(kw) + "\\n"); fh.flush()
    for job in spec["jobs"]:
        emit(id=job["id"], event="start")
        emit(id=job["id"], event="cand")
        assert os.path.exists(job["ref_so"]) and os.path.exists(job["cand_so"])
        if job["config"]["kernel"] == "scale_h":
            os.kill(os.getpid(), signal.SIGABRT)
        same = job["ref_so"] == job["cand_so"]
        emit(id=job["id"], event="done", status="ok" if same else "incorrect", compiled=True, ran=True,
             io_correct=same, max_norm_err=0.0 if same else 0.5, ref_ms=2.0, cand_ms=2.5)
''')


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc")
def test_pipeline_merges_run_results(tmp_path, monkeypatch):
    """The evaluation's GPU path with a fake worker: results merged, deviations computed, crashes counted."""
    import json

    from ptx_eval_support import ADD, SCALE, add_pair, scale_pair

    from kernelmill.ptx.evaluate import EvalSettings, RunSettings, evaluate
    from kernelmill.records import write_jsonl

    (tmp_path / "km_pipe_worker.py").write_text(PIPE_FAKE)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(runner, "WORKER", "km_pipe_worker")
    pairs = tmp_path / "pairs.jsonl"
    write_jsonl(pairs, [add_pair("a1"), add_pair("a2"), scale_pair("s1")])
    samples = tmp_path / "samples.jsonl"
    rows = [("a1", ADD), ("a2", ADD.replace("a + b", "a - b")), ("s1", SCALE)]
    samples.write_text("".join(json.dumps({"sample_id": k + "#0", "task_id": k, "language": "cuda", "code": c}) + "\n"
                               for k, c in rows))
    s = evaluate(pairs, samples, tmp_path / "out", EvalSettings(device="cuda", build_jobs=2,
                                                                  run=RunSettings(device="cuda", workers=1)))
    res = {r["task_id"]: r for r in map(json.loads, (tmp_path / "out" / "results.jsonl").read_text().splitlines())}
    assert res["a1"]["status"] == "ok" and res["a1"]["latency_dev"] == pytest.approx(0.25)
    assert res["a2"]["status"] == "incorrect" and res["a2"]["latency_dev"] is None  # timed only when I/O-correct
    assert res["s1"]["status"] == "runtime_error" and "SIGABRT" in res["s1"]["message"]
    assert s["compilation_rate"] == 1.0 and s["runtime_correctness_rate"] == pytest.approx(2 / 3)
    assert s["io_correctness_rate"] == pytest.approx(1 / 3) and s["latency_deviation"]["n"] == 1
