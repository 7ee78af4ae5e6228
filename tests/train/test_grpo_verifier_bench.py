"""benchmarks/grpo_verifier_gpu.py: multi-turn GRPO with the real verifier (CPU stand-in).

The slow tests run the benchmark as a subprocess on the CPU, with the verifier in the trainer's
process (`--via local`) and as a `kernelmill serve` process (`--via serve`), and check that real
candidates were verified (a correct and a failing verdict), that the verifier's time was measured,
and that the serve process is gone afterwards. The fast tests check the text-to-candidate mapping,
the reward hook and the GPU sampling's summary without training.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks" / "grpo_verifier_gpu.py"
FAILING = {"incorrect", "runtime_error", "compile_error", "timeout"}


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("grpo_verifier_gpu", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
@pytest.mark.parametrize("via", ["local", "serve"])
def test_benchmark_runs_real_candidates_on_cpu(tmp_path, via):
    out = tmp_path / "grpo2.json"
    env = dict(os.environ, KERNELMILL_CACHE=str(tmp_path / "cache"), TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, str(BENCH), "--device", "cpu", "--via", via, "--hidden", "32", "--layers", "1",
           "--grpo-steps", "1", "--grpo-batch", "2", "--generations", "2", "--turns", "2", "--turn-tokens", "8",
           "--languages", "torch", "--out", str(out)]
    t0 = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    wall = time.monotonic() - t0
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    result = json.loads(out.read_text())
    (run,) = result["runs"]
    assert "error" not in run, run
    assert run["name"] == "cpu" and run["via"] == via and run["verifier_device"] == "cpu"
    assert "no meaning" in run["note"] and "no meaning" in res.stdout
    assert run["steps"] == 1 and run["episodes"] == 2 and run["turns_per_episode"] == 2
    assert run["episodes_per_min"] > 0
    assert run["verifier_s"] > 0 and 0 < run["verifier_share"] < 1
    assert run["verifier_calls"] == 2 and run["verified_samples"] == 4  # one call per turn, one sample per episode
    statuses = run["statuses"]
    assert sum(statuses.values()) == 4
    assert statuses.get("ok", 0) >= 1 and set(statuses) & FAILING, statuses  # the verifier ran real candidates
    assert run["drawn_expectations"].get("ok", 0) >= 1 and run["duplicate_texts"] == 0
    assert run["step_time_mean_s"] > 0 and -1.0 <= run["reward_mean"] <= 10
    assert "ep/min" in res.stdout and "verifier s" in res.stdout  # the table
    assert not Path(result["work_dir"]).exists()  # cleaned up
    if via == "serve":
        pid = run["serve_pid"]
        assert run["serve_stop"]["pid"] == pid and run["serve_stop"]["returncode"] is not None
        assert run["serve_health_end"]["served"] == 2 and run["serve_health_end"]["served_cached"] == 0
        assert gone(pid)
        with pytest.raises(ProcessLookupError):  # nothing of its process group (its verify workers) is left
            os.killpg(run["serve_stop"]["pgid"], 0)
    print(f"{via}: {wall:.1f} s")


def test_pool_keeps_tasks_with_correct_and_failing_candidates(bench):
    pool = bench.candidate_pool(["torch"])
    assert pool, "no builtin torch task with both a correct and a failing candidate"
    for (tid, lang), cands in pool.items():
        expects = [c.meta["expect"] for c in cands]
        assert lang == "torch" and "ok" in expects and set(expects) & set(bench.FAILING)
        assert "timeout" not in expects and all(c.task_id == tid for c in cands)
    assert ("level1/01_ReLU", "torch") in pool  # ok + runtime_error (its timeout candidate left out)


def draw_all(bench, pool, texts, tag="t"):
    cmap = bench.CandidateMap(pool, tag=tag)
    key = next(iter(pool))
    return cmap, [cmap.assign(t, *key) for t in texts]


def test_candidate_mapping_is_deterministic_unique_and_mixed(bench):
    pool = bench.candidate_pool(["torch"])
    key = next(iter(pool))
    texts = [f"random text {i}" for i in range(12)]
    cmap, codes = draw_all(bench, pool, texts)
    _, again = draw_all(bench, pool, texts)
    assert codes == again  # the same texts give the same candidates (and, with the same tag, the same code)
    assert len(set(codes)) == len(codes)  # every candidate is a new source: never a cached verdict
    for n, (text, code) in enumerate(zip(texts, codes)):
        last = code.rstrip("\n").splitlines()[-1]
        assert last.startswith(f"# episode t-{n}-") and code.startswith(tuple(c.code.rstrip("\n") for c in pool[key]))
        assert cmap.extract_code(None)(text) == (code, None)  # what both KernelReward and the feedback see
    # every len(deck) draws of a task hold each of its candidates once: correct and failing mixed
    size = len(pool[key])
    for i in range(0, len(texts) - size + 1, size):
        assert sorted(d["sample_id"] for d in cmap.draws[i:i + size]) == sorted(c.sample_id for c in pool[key])
    expects = cmap.expectations()
    assert expects["ok"] >= 1 and set(expects) & set(bench.FAILING)
    # another run's tag: other comments, so no verdict of one run is served to the next
    _, tagged = draw_all(bench, pool, texts, tag="u")
    assert not set(tagged) & set(codes)
    with pytest.raises(KeyError, match="no builtin candidates"):
        cmap.assign("x", "level1/06_Sum", "torch")  # only an incorrect one: not in the pool


def test_unknown_text_falls_back_to_the_real_parser(bench):
    from kernelmill.train.rewards import extract_code

    cmap = bench.CandidateMap(bench.candidate_pool(["torch"]), tag="t")
    text = "```python\nclass ModelNew:\n    pass\n```"
    assert cmap.extract_code(extract_code)(text) == extract_code(text)


def test_reward_hook_verifies_the_drawn_candidates_and_is_undone(bench, tmp_path):
    import kernelmill.train.grpo as grpo
    import kernelmill.train.rewards as rewards
    from kernelmill.records import Verdict
    from kernelmill.tasks import load_tasks

    pool = bench.candidate_pool(["torch"])
    (tid, lang) = next(iter(pool))
    cmap = bench.CandidateMap(pool, tag="t")
    seen = []

    def verifier(tasks, samples):
        seen.extend(samples)
        return [Verdict(s.sample_id, s.task_id, "ok", compiled=True, correct=True, speedup=1.0) for s in samples]

    timed = bench.TimedVerifier(verifier)
    before = rewards.extract_code, grpo.KernelReward, grpo.build_grpo_trainer
    with bench.patched(cmap, clock=None):
        reward = grpo.KernelReward(timed, tasks=load_tasks("builtin").by_id())  # as run_grpo with reward.tasks
        assert isinstance(reward, before[1])
        verdicts = reward.verify(["a", "b"], [tid, tid], [lang, lang], [None, None])
    assert (rewards.extract_code, grpo.KernelReward, grpo.build_grpo_trainer) == before
    assert [v.status for v in verdicts] == ["ok", "ok"]
    assert [s.code for s in seen] == [cmap.by_text["a"], cmap.by_text["b"]]
    assert all(s.task_id == tid and s.language == lang for s in seen)
    assert len(timed.calls) == 1 and timed.calls[0]["samples"] == 2 and timed.seconds >= 0


def test_step_clock_stops_before_a_step_that_would_not_fit(bench):
    clock = bench.step_clock(deadline=time.monotonic() + 3600)
    state, control = SimpleNamespace(global_step=1, max_steps=4), SimpleNamespace(should_training_stop=False)
    clock.on_step_begin(None, state, control)
    clock.on_step_end(None, state, control)
    assert not control.should_training_stop and len(clock.step_s) == 1
    late = bench.step_clock(deadline=time.monotonic() - 1)
    late.on_step_begin(None, state, control)
    late.on_step_end(None, state, control)
    assert control.should_training_stop and late.stopped_early
    last = SimpleNamespace(global_step=4, max_steps=4)  # the last step: nothing to stop
    done, control = bench.step_clock(deadline=time.monotonic() - 1), SimpleNamespace(should_training_stop=False)
    done.on_step_begin(None, last, control)
    done.on_step_end(None, last, control)
    assert not control.should_training_stop and not done.stopped_early


def test_gpu_csv_summary_and_sampler(bench, tmp_path, monkeypatch):
    text = "0, 10, 1000\n1, 50, 3000\n0, 30, 1500\n1, [N/A], 2000\n1, 70, 2500\n0, 2"  # a torn last line
    assert bench.summarise_gpu_csv(text) == {
        "0": {"samples": 2, "util_mean": 20.0, "util_max": 30.0, "mem_max_mib": 1500.0},
        "1": {"samples": 2, "util_mean": 60.0, "util_max": 70.0, "mem_max_mib": 3000.0}}
    assert bench.summarise_gpu_csv("") == {}
    # a stand-in nvidia-smi: the sampler starts it, stops it and summarises what it wrote
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nwhile true; do echo '0, 40, 800'; echo '1, 90, 4000'; sleep 0.05; done\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    sampler = bench.GpuSampler(tmp_path / "smi.csv")
    assert sampler.start()
    time.sleep(0.5)
    summary = sampler.stop()
    assert summary["0"]["util_mean"] == 40 and summary["1"]["mem_max_mib"] == 4000 and summary["1"]["samples"] >= 2
    assert sampler.proc is None


def test_recipe_reward_sections(bench):
    from kernelmill.train.config import RewardSettings

    a = SimpleNamespace(via="serve")
    assert "verifier: http" in bench.reward_yaml(a, 1, "http://127.0.0.1:1") and "gpus" not in bench.reward_yaml(
        a, 1, "http://127.0.0.1:1")
    a.via = "local"
    import yaml

    assert yaml.safe_load(bench.reward_yaml(a, 1, None))["reward"] == {
        "tasks": "builtin", "verifier": "local", "verify": {"device": "cuda", "gpus": [1]}}
    assert yaml.safe_load(bench.reward_yaml(a, None, None))["reward"]["verify"] == {"device": "cpu"}
    RewardSettings(**yaml.safe_load(bench.reward_yaml(a, 0, None))["reward"])


def test_arguments(bench):
    a = bench.parse_args(["--device", "cpu"])
    assert a.mode == "single" and a.languages == ["torch"]
    a = bench.parse_args([])
    assert a.mode == "both" and a.languages == ["torch", "cuda"] and a.via == "serve"
    assert (a.hidden, a.layers, a.turn_tokens, a.generations) == (256, 4, 64, 4)
    with pytest.raises(SystemExit):
        bench.parse_args(["--grpo-batch", "3", "--generations", "2"])


def fake_run(name, rate, gpu):
    return {"name": name, "via": "serve", "verifier_device": f"cuda GPU {gpu}", "steps": 2,
            "stopped_early": name == "same", "episodes": 8, "episodes_per_min": rate,
            "steady_episodes_per_min": rate * 1.1, "turns_per_episode": 2.0,
            "verifier_s": 30.0, "verifier_share": 0.8, "step_time_mean_s": 20.0, "verified_samples": 16,
            "statuses": {"ok": 9, "incorrect": 4, "compile_error": 3}, "reward_mean": 0.4, "wall_s": 55.0,
            "policy_peak_mem_gb": 1.25, "gpu_use": {"0": {"samples": 90, "util_mean": 12.5, "util_max": 80.0,
                                                          "mem_max_mib": 5000.0},
                                                    "1": {"samples": 90, "util_mean": 40.0, "util_max": 99.0,
                                                          "mem_max_mib": 9000.0}}}


def test_table_and_comparison(bench):
    runs = [fake_run("other", 12.0, 1), fake_run("same", 10.0, 0), {"name": "x", "error": "RuntimeError: boom"}]
    text = bench.table(runs)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["run", "via", "verifier"] and set(lines[1]) <= {"-", " "}
    assert "12.0" in lines[2] and "1.25" in lines[2] and "0:12/5000 1:40/9000" in lines[2] and "2*" in lines[3]
    assert "stopped early" in text and "x: RuntimeError: boom" in text
    c = bench.comparison(runs)
    assert c["episodes_per_min_other_over_same"] == pytest.approx(1.2)
    assert c["steady_episodes_per_min_other_over_same"] == pytest.approx(1.2) and c["same_steps"]
    assert bench.comparison(runs[:1]) is None
    assert bench.steady_rate([{"step": 0}, {"step": 1}, {"step": 1}], [10.0, 6.0]) == pytest.approx(20.0)
    assert bench.steady_rate([{"step": 0}], [10.0]) is None
