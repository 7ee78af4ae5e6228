"""`kernelmill audit` and `kernelmill regrade` (issue 43): the input formats, each row's
outcome against its claim, the report files, resume, and regrade's decisions."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kernelmill.audit.classify import outcome, summarize
from kernelmill.audit.regrade import compare, plan
from kernelmill.audit.report import write_report
from kernelmill.audit.sources import AuditSourceError, read_source
from kernelmill.records import HARNESS_VERSION, Verdict, read_jsonl, write_jsonl

TASK = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(256, 256)]


def get_init_inputs():
    return []
"""


def cand(body: str) -> str:
    return ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
            f"    def forward(self, x):\n        {body}\n")


ROWS = [
    {"id": "same", "ref_code": TASK, "custom_code": cand("return torch.clamp_min(x, 0.0)"), "claimed_speedup": 1.0,
     "gpu_tuned_for": "a100", "level": 1},
    {"id": "overclaimed", "ref_code": TASK, "custom_code": cand("return torch.relu(x)"), "claimed_speedup": 40.0,
     "level": 1},
    {"id": "wrong", "ref_code": TASK, "custom_code": cand("return x * 2"), "claimed_speedup": 3.0, "level": 2},
    {"id": "inplace", "ref_code": TASK, "custom_code": cand("return x.relu_()"), "claimed_speedup": 2.0, "level": 2},
    {"id": "broken", "ref_code": TASK, "custom_code": cand("return x +"), "claimed_speedup": 5.0, "level": 2},
]


def _table(tmp_path: Path, rows=ROWS) -> Path:
    path = tmp_path / "kernels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_tables_and_run_folders_are_read_and_bad_rows_name_their_line(tmp_path):
    rows = read_source(_table(tmp_path))
    assert [r.row_id for r in rows] == ["same", "overclaimed", "wrong", "inplace", "broken"]
    assert rows[0].claimed_speedup == 1.0 and rows[0].claimed_hardware == "a100" and rows[0].language == "torch"
    assert rows[0].where.endswith("kernels.jsonl:1")
    # CSV with the other spellings of the columns
    c = tmp_path / "k.csv"
    with c.open("w", newline="") as fh:
        w = csv.DictWriter(fh, ["name", "reference", "code", "speedup"])
        w.writeheader()
        w.writerow({"name": "a b", "reference": TASK, "code": cand("return x"), "speedup": ""})
    (row,) = read_source(c)
    assert row.row_id == "a_b" and row.claimed_speedup is None and row.where.endswith("k.csv:2")
    bad = [ROWS[0], {"id": "x", "ref_code": TASK}, ROWS[1]]
    with pytest.raises(AuditSourceError, match=r"kernels.jsonl:2: row lacks the candidate code"):
        read_source(_table(tmp_path, bad))
    with pytest.raises(AuditSourceError, match=r":2: id 'same' already used at .*:1"):
        read_source(_table(tmp_path, [ROWS[0], ROWS[0]]))
    with pytest.raises(AuditSourceError, match="claimed speedup 'fast'"):
        read_source(_table(tmp_path, [{**ROWS[0], "claimed_speedup": "fast"}]))
    # KernelBench's run layout: kernels by level, problem and sample; the problems from its tasks folder
    run, kb = tmp_path / "run", tmp_path / "kb"
    (kb / "level1").mkdir(parents=True)
    (kb / "level1" / "19_ReLU.py").write_text(TASK)
    run.mkdir()
    (run / "level_1_problem_19_sample_0_kernel.py").write_text(cand("return torch.relu(x)"))
    (run / "eval_results.json").write_text(json.dumps({"19": [{"sample_id": 0, "runtime": 0.5, "ref_runtime": 1.0}]}))
    (row,) = read_source(run, kb)
    assert (row.row_id, row.level, row.claimed_speedup, row.task_code) == ("L1_P19_S0", 1, 2.0, TASK)
    with pytest.raises(AuditSourceError, match="--kb-tasks"):
        read_source(run)


def _v(status, speedup=None, ci=None, flags=(), **kw) -> Verdict:
    return Verdict(sample_id=kw.pop("sid", "s"), task_id="t", status=status, speedup=speedup, speedup_ci=ci,
                   flags=list(flags), **kw)


def test_each_outcome_against_its_claim():
    assert outcome(_v("ok", 2.0, [1.8, 2.2]), 2.1) == "holds"
    assert outcome(_v("ok", 2.0, [1.8, 2.2]), 1.5) == "beats_claim"
    assert outcome(_v("ok", 2.0, [1.8, 2.2]), 3.0) == "slower"
    assert outcome(_v("ok", 2.0, [1.8, 2.2], flags=["weak_task"]), None) == "unclaimed"
    assert outcome(_v("incorrect"), 2.0) == "wrong"
    assert outcome(_v("timeout"), 2.0) == "broken"
    assert outcome(_v("rejected", flags=["torch_fallback", "try_fallback"]), 2.0) == "fallback"
    assert outcome(_v("rejected", flags=["precision_downgrade"]), 2.0) == "precision"
    assert outcome(_v("rejected", flags=["torch_fallback", "input_mutation"]), 2.0) == "exploit"
    rows = [{"outcome": o, "claimed_speedup": c, "speedup": s, "level": lv, "exploit_classes": e}
            for o, c, s, lv, e in [("holds", 2.0, 2.0, 1, []), ("slower", 4.0, 1.0, 1, []),
                                   ("exploit", 9.0, None, 2, ["input_mutation"]), ("wrong", None, None, 2, [])]]
    s = summarize(rows)
    assert s["claims"] == 3 and s["claims_hold"] == 1 and s["counts"]["exploit"] == 1
    assert s["median_measured_over_claimed"] == pytest.approx((1.0 + 0.25) / 2)
    assert s["exploits_by_class"] == {"input_mutation": 1} and s["per_level"]["2"]["wrong"] == 1


def test_report_files(tmp_path):
    rows = [{"row_id": "a", "level": 1, "claimed_speedup": 2.0, "speedup": 1.5, "speedup_lo": 1.4, "speedup_hi": 1.6,
             "awarded": True, "status": "ok", "outcome": "slower", "flags": [], "exploit_classes": [],
             "message": "m <b>", "where": "k.jsonl:1"},
            {"row_id": "b", "level": 2, "claimed_speedup": 3.0, "speedup": 3.1, "speedup_lo": 2.9, "speedup_hi": 3.3,
             "awarded": False, "status": "rejected", "outcome": "precision", "flags": ["precision_downgrade"],
             "exploit_classes": [], "message": "", "where": "k.jsonl:2"}]
    meta = {"source": "k.jsonl", "harness_version": HARNESS_VERSION, "guards": "standard", "device": "cpu",
            "claimed_hardware": ["a100"]}
    paths = write_report(tmp_path, rows, summarize(rows), meta)
    page = paths["html"].read_text()
    assert page.count('class="row"') == 2 and "<svg" in page and "m &lt;b&gt;" in page
    assert "claims-by-level" in page and "claims-by-outcome" in page and 'aria-label="flags"' in page
    assert json.loads(paths["json"].read_text())["summary"]["claims_hold"] == 0
    assert len(list(csv.DictReader(paths["csv"].open()))) == 2
    assert "| slower | 1 | 50.0% |" in paths["md"].read_text()


def _km(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelmill", *args], capture_output=True, text=True, timeout=900,
                          cwd=cwd, env={**__import__("os").environ, "KERNELMILL_CACHE": str(cwd / "cache")})


def test_audit_on_a_cpu_then_resume_then_regrade(tmp_path):
    table = _table(tmp_path)
    out = tmp_path / "audit"
    args = ["audit", str(table), "-o", str(out), "--device", "cpu", "--trials", "2", "--store", str(tmp_path / "s.sqlite")]
    first = _km(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    data = json.loads((out / "audit.json").read_text())
    got = {r["row_id"]: r["outcome"] for r in data["rows"]}
    assert got["overclaimed"] == "slower" and got["wrong"] == "wrong" and got["broken"] == "broken"
    assert got["inplace"] == "exploit" and got["same"] in ("holds", "beats_claim", "slower")
    assert data["summary"]["exploits_by_class"].get("input_mutation") == 1
    assert "claims that hold" in first.stdout and (out / "audit.html").exists()
    # resumed: nothing is verified again
    second = _km(*args, cwd=tmp_path)
    assert second.returncode == 0 and "5 of 5 samples already have verdicts" in second.stderr
    # the report alone, of a cut-short audit: the rows without a verdict say so
    lines = (out / "verdicts.jsonl").read_text().splitlines()
    (out / "verdicts.jsonl").write_text("\n".join(lines[:3]) + "\n")
    part = _km(*args, "--report-only", cwd=tmp_path)
    assert part.returncode == 0, part.stderr[-2000:]
    cut = json.loads((out / "audit.json").read_text())
    assert [r["status"] for r in cut["rows"]].count("not_verified") == 2
    assert cut["summary"]["verified"] == 3 and cut["summary"]["counts"]["not_verified"] == 2
    assert sum(cut["summary"]["counts"][o] for o in ("wrong", "broken")) <= 2  # the unverified are not "broken"
    assert "3 of 5 kernels verified so far" in part.stdout
    (out / "verdicts.jsonl").write_text("\n".join(lines) + "\n")
    # regrade: one verdict edited to carry a rejecting flag (re-judged, nothing runs), one from an older
    # harness (re-run: the same status, so it is not listed as changed)
    vs = read_jsonl(out / "verdicts.jsonl", Verdict, [])
    edited = [replace(v, flags=v.flags + ["harness_patched"]) if v.sample_id == "overclaimed" else
              replace(v, harness_version="0.0.1") if v.sample_id == "wrong" else v for v in vs]
    old = tmp_path / "old.jsonl"
    write_jsonl(old, edited)
    rg = _km("regrade", str(old), "-o", str(tmp_path / "rg"), "--samples", str(out / "samples.jsonl"),
             "--tasks", str(out / "tasks.jsonl"), "--device", "cpu", "--trials", "2",
             "--store", str(tmp_path / "s.sqlite"), cwd=tmp_path)
    assert rg.returncode == 0, rg.stderr[-3000:]
    report = json.loads((tmp_path / "rg" / "regrade.json").read_text())
    assert report["rerun"] == 1 and [c["sample_id"] for c in report["changed"]] == ["overclaimed"]
    assert report["changed"][0]["after"]["status"] == "rejected" and report["changed"][0]["how"] == "re-judged"
    assert "overclaimed: ok -> rejected" in rg.stdout
    # and curation leaves the changed row out
    cur = _km("curate", str(out / "samples.jsonl"), str(tmp_path / "rg" / "verdicts.jsonl"), "--recipe", "random",
              "-o", str(tmp_path / "c.jsonl"), "--drop-changed", str(tmp_path / "rg" / "regrade.json"), cwd=tmp_path)
    assert cur.returncode == 0, cur.stderr[-2000:]
    curated = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert "overclaimed" not in {r["sample_id"] for r in curated}
    assert all(r["harness_version"] == HARNESS_VERSION for r in curated)


def test_regrade_plan_decides_from_flags_and_reruns_what_it_cannot_settle():
    vs = [_v("ok", 1.5, [1.4, 1.6], sid="fine"), _v("ok", 1.5, flags=["weak_task"], sid="note"),
          _v("ok", 9.0, flags=["suspicious_speed"], sid="now_rejected"),
          _v("ok", 1.0, flags=["nondeterministic"], sid="now_incorrect"),
          _v("rejected", flags=["torch_fallback"], sid="fallback"),
          _v("ok", 1.2, sid="old", harness_version="0.1.0")]
    p = plan(vs)
    assert {c.sample_id: c.after["status"] for c in p.changes} == {"now_rejected": "rejected",
                                                                    "now_incorrect": "incorrect"}
    assert set(p.rerun) == {"old"} and "0.1.0" in p.rerun["old"]
    # allowed fallbacks: the rejection no longer holds, and what it is underneath must be checked again
    assert "fallback" in plan(vs, fallback="allow").rerun
    assert set(plan(vs, every=True).rerun) == {v.sample_id for v in vs}
    old = {v.sample_id: v for v in vs}
    new = {"old": replace(old["old"], status="incorrect", message="trial 1: wrong"), "fine": old["fine"]}
    (c,) = compare(old, new, {"old": "made by harness 0.1.0"})
    assert (c.sample_id, c.before["status"], c.after["status"], c.how) == ("old", "ok", "incorrect", "re-run")


def test_only_a_policy_rejection_keeps_its_measured_speedup():
    from kernelmill.audit.classify import measured_interval

    timed = {"measurement": {"timed": {"speedup": 3.0, "speedup_ci": [2.8, 3.2]}}}
    assert measured_interval(_v("rejected", flags=["precision_downgrade"], **timed)) == (3.0, [2.8, 3.2], False)
    assert measured_interval(_v("rejected", flags=["input_mutation"], **timed)) == (None, None, False)
    assert measured_interval(_v("incorrect", **timed)) == (None, None, False)


def test_the_audit_page_in_a_browser_searches_and_sorts(tmp_path, chromium):
    rows = [{"row_id": rid, "level": 1, "claimed_speedup": c, "speedup": s, "speedup_lo": s * 0.9,
             "speedup_hi": s * 1.1, "awarded": True, "status": "ok", "outcome": o, "flags": [], "exploit_classes": [],
             "message": msg, "where": f"k.jsonl:{i}"}
            for i, (rid, c, s, o, msg) in enumerate([("alpha", 2.0, 1.0, "slower", ""),
                                                      ("bravo", 1.0, 3.0, "beats_claim", "fast path"),
                                                      ("charlie", 1.5, 1.5, "holds", "")], 1)]
    meta = {"source": "k.jsonl", "harness_version": HARNESS_VERSION, "guards": "standard", "device": "cpu",
            "claimed_hardware": []}
    page = write_report(tmp_path, rows, summarize(rows), meta)["html"]
    chromium.open(page.as_uri())
    assert chromium.console_errors() == []
    visible = "[...document.querySelectorAll('#t tr.row')].filter(r => r.style.display !== 'none').map(r => r.children[0].textContent)"
    assert chromium.eval(visible) == ["alpha", "bravo", "charlie"]
    chromium.eval("document.getElementById('q').value = 'fast path'; filt()")
    assert chromium.eval(visible) == ["bravo"]  # found by its message, in the detail row
    chromium.eval("document.getElementById('q').value = ''; filt()")
    chromium.eval("document.querySelectorAll('#t th')[3].click()")  # measured, ascending
    assert chromium.eval(visible) == ["alpha", "charlie", "bravo"]
    chromium.eval("document.querySelectorAll('#t th')[3].click()")  # and descending
    assert chromium.eval(visible) == ["bravo", "charlie", "alpha"]
    rows_after = "[...document.querySelectorAll('#t tbody tr')].map(r => r.className)"
    assert chromium.eval(rows_after) == ["row", "detail"] * 3  # each detail row still under its own


def test_regrade_reads_a_result_store(tmp_path):
    from kernelmill.verify import ResultStore

    store = ResultStore(tmp_path / "s.sqlite")
    store.put("k1", _v("ok", 9.0, [8.0, 10.0], flags=["suspicious_speed"], sid="fast"))
    store.put("k2", _v("ok", 1.0, [0.9, 1.1], sid="fine"))
    store.close()
    rg = _km("regrade", str(tmp_path / "s.sqlite"), "-o", str(tmp_path / "rg"), cwd=tmp_path)
    assert rg.returncode == 0, rg.stderr[-2000:]
    report = json.loads((tmp_path / "rg" / "regrade.json").read_text())
    assert report["verdicts"] == 2 and [c["sample_id"] for c in report["changed"]] == ["fast"]
    missing = _km("regrade", str(tmp_path / "none.sqlite"), "-o", str(tmp_path / "rg2"), cwd=tmp_path)
    assert missing.returncode != 0 and "no such file" in missing.stderr
