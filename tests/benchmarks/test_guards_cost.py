"""benchmarks/guards_cost.py: a level cut off by a device call's limit goes on from the
candidates it finished (--resume), and its figures cover them all. The verification itself
is stood in for (it is kernelmill verify, tested elsewhere); the bookkeeping is what is checked."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
_spec = importlib.util.spec_from_file_location("guards_cost", ROOT / "benchmarks" / "guards_cost.py")
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)


class _Cut(Exception):
    """The device call's time limit, as far as the script can tell."""


def _stand_in(asked: list, cut_after: int | None):
    def verify(tasks, samples, cfg, on_verdict=None):
        out = []
        for s in samples:
            if cut_after is not None and len(asked) >= cut_after:
                raise _Cut()
            asked.append((cfg.guards, s.sample_id))
            v = SimpleNamespace(sample_id=s.sample_id, status="ok", flags=[],
                                phases={"run_wall_s": 2.0 if cfg.guards == "strict" else 1.0,
                                        "sanitize_s": 3.0 if cfg.guards == "strict" else 0.0,
                                        "guard_inputs_s": 0.25, "resident_jobs": 1},
                                measurement={"exchange": None})
            out.append(v)
            if on_verdict is not None:
                on_verdict(v)
        return out
    return verify


def test_a_cut_level_resumes_from_the_candidates_it_finished(tmp_path, monkeypatch):
    out, work = tmp_path / "cost.json", tmp_path / "work"
    args = ["--device", "cpu", "--languages", "torch", "--levels", "standard,strict", "--json", str(out),
            "--work", str(work)]
    n = len([s for s in G.builtin_samples() if s.meta.get("expect") == "ok" and s.language == "torch"])
    assert n >= 4
    asked: list = []
    monkeypatch.setattr(G, "verify_samples", _stand_in(asked, cut_after=n + 3))  # standard whole, strict 3 of n
    with pytest.raises(_Cut):
        G.main(args)
    cut = json.loads(out.read_text())
    assert [r["level"] for r in cut["results"]] == ["standard"]
    assert cut["in_progress"]["level"] == "strict" and cut["in_progress"]["done"] == 3
    first_three = [s for g, s in asked if g == "strict"]

    again: list = []
    monkeypatch.setattr(G, "verify_samples", _stand_in(again, cut_after=None))
    G.main(args + ["--resume"])
    assert all(g == "strict" for g, _ in again)  # the finished level is not run again
    assert not {s for _, s in again} & set(first_three) and len(again) == n - 3  # nor a finished candidate
    done = json.loads(out.read_text())
    assert "in_progress" not in done
    strict = [r for r in done["results"] if r["level"] == "strict"][0]
    assert strict["candidates"] == n and strict["resumed_from"] == 3
    assert {e["sample"] for e in strict["each"]} == set(first_three) | {s for _, s in again}
    assert strict["median_run_and_sanitize_s"] == 5.0 and strict["median_guard_overhead_s"] == 0.25


def test_resume_needs_a_result_to_go_on_from(tmp_path, capsys):
    with pytest.raises(SystemExit):
        G.main(["--json", str(tmp_path / "none.json"), "--resume"])
    assert "no " in capsys.readouterr().err
    (tmp_path / "old.json").write_text(json.dumps({"results": [], "in_progress": {"level": "strict", "done": 2}}))
    with pytest.raises(SystemExit):
        G.main(["--json", str(tmp_path / "old.json"), "--resume"])
    assert "in_progress.rows" in capsys.readouterr().err
