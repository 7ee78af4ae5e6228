"""The CPU twin of benchmarks/tilelang_loop_device.sh: the same script, every
stage, with the `torch` DSL on the CPU (scripted answers made from the torch
seed kernels; the real verifier; tiny local models)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.slow
def test_whole_loop_script_on_cpu(tmp_path):
    for mod in ("trl", "sentence_transformers", "matplotlib", "pyarrow"):
        pytest.importorskip(mod)
    if shutil.which("bash") is None or shutil.which("tar") is None:
        pytest.skip("needs bash and tar")
    out, work = tmp_path / "out", tmp_path / "work"
    env = {**os.environ, "KM_DSL": "torch", "KM_DEVICE": "cpu", "OUT": str(out), "KM_WORK": str(work),
           "PYTHON": os.environ.get("PYTHON", "python")}
    proc = subprocess.run(["bash", "benchmarks/tilelang_loop_device.sh"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == ["eval.md", "eval.png", "growth.png", "loop.log",
                                                      "loop_run.tar.gz", "summary.json"]
    s = json.loads((out / "summary.json").read_text())
    assert s["problems"] == [] and s["missing"] == []
    # the corpus grew by exactly the verified samples: here ReLU (round 1), then Softmax and
    # MSELoss on their retries; Cumsum's two wrong answers never got in
    assert s["grown"] == s["verified"] == 3 and s["corpus"] == s["seed_size"] + 3
    assert [r["added"] for r in s["rounds"]] == [r["verified"] for r in s["rounds"]]
    assert set(s["labels_vs_status"]) == {"right", "wrong", "broken"}
    assert set(s["labels_vs_status"]["right"]) == {"ok"} and set(s["labels_vs_status"]["broken"]) == {"compile_error"}
    # held-out table: one row per round plus the seeds-only row; 2 tasks x 5 samples, 3 right of 10
    assert [e["round"] for e in s["eval"]] == [0, 1, 2, 3]
    assert all(e["samples"] == 10 and e["correct"] == 3 and e["pass@5"] == 1.0 for e in s["eval"])
    a = s["align"]
    assert a["kernels"]["total"] == s["corpus"] and a["negatives"]["kept"] > 0
    # the KTO rows are the kept traces and the negatives, brought to 3:8 by dropping from the side over it
    from kernelmill.dsl.kto import balance

    assert a["kto"]["positives_in"] == a["scored"]["kept"] and a["grpo"]["tasks"] == 4
    assert a["kto"]["negatives_in"] == a["negatives"]["kept"] + a["negatives"]["failed_attempts"]
    assert (a["kto"]["positives"], a["kto"]["negatives"]) == balance(a["kto"]["positives_in"],
                                                                     a["kto"]["negatives_in"], (3, 8))
    assert s["kto-run"]["steps"] == 3 and s["grpo-run"]["steps"] == 2 and s["grpo_episodes"]["episodes"] == 4
    assert [r["reward"] for r in s["reward"]["rows"]] == [pytest.approx(1.3), -0.5, -1.0]
