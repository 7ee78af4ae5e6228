"""`kernelmill prepare-builds`: the precompiled headers of the samples' flag sets, built
into the cache a run's builds look in (a stand-in compiler writes the header)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify.build import inline_build
from kernelmill.verify.build.build_prepare import flag_sets, run_specs


def _write(path, samples):
    path.write_text("".join(json.dumps({"sample_id": s.sample_id, "task_id": s.task_id, "language": s.language,
                                        "code": s.code}) + "\n" for s in samples))


def test_prepare_builds_for_the_samples_flag_sets(tmp_path, monkeypatch, fake_compiler):
    calls = fake_compiler
    monkeypatch.setenv("KERNELMILL_CACHE", str(tmp_path / "cache"))
    cpp = [s for s in builtin_samples() if s.language == "cpp"]
    _write(tmp_path / "s.jsonl", cpp)
    res = CliRunner().invoke(app, ["prepare-builds", str(tmp_path / "s.jsonl"), "--no-cuda"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["sets"] and all(s["ready"] for s in report["sets"])
    # the headers, then the slim path's binding objects of the samples' signature lists
    assert report["bindings"]["built"] >= 1 and report["bindings"]["failed"] == 0
    headers = [c for c in calls if "c++-header" in c]
    assert headers and len(calls) == len(headers) + report["bindings"]["built"]
    assert "binding objects:" in res.stderr
    # a build of those candidates finds each header without building one
    n = len(calls)
    builder = inline_build.InlineBuilder(tmp_path / "cache" / "build")
    for spec in run_specs([s.code for s in cpp], min_uses=1):
        for cxx, flags in flag_sets(spec):
            assert builder._pch(cxx, flags) is not None
    assert len(calls) == n


def test_prepare_builds_without_flag_sets_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_CACHE", str(tmp_path / "cache"))
    _write(tmp_path / "s.jsonl", [s for s in builtin_samples() if s.language == "torch"][:1])
    res = CliRunner().invoke(app, ["prepare-builds", str(tmp_path / "s.jsonl"), "--no-cuda"])
    assert res.exit_code == 0 and "nothing to prepare" in res.output
