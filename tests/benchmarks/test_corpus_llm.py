"""The LLM-style corpus (benchmarks/corpus_llm/): headers, tasks, parse,
extension names and sources, a few nvcc compiles, the CPU torch runs; and
vs_kernelbench.py's bookkeeping (no subprocesses)."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from benchmark_support import load_script

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "benchmarks" / "corpus_llm"


check = load_script("corpus_llm_check", CORPUS / "check.py")
CANDS = check.load_corpus(CORPUS)
KB_AVAILABLE = check.KERNELBENCH_TASKS.is_dir()


def test_size_and_spread():
    assert len(CANDS) >= 120
    assert len({c.task for c in CANDS}) >= 30
    kinds = Counter(c.kind for c in CANDS)
    assert set(kinds) == {"builtin", "kernelbench"}
    assert 0.4 <= kinds["builtin"] / len(CANDS) <= 0.7
    langs = Counter(c.language for c in CANDS)
    assert langs["cuda"] >= 60 and langs["triton"] >= 8 and langs["torch"] >= 20 and langs["cpp"] >= 3
    expects = Counter(c.expect for c in CANDS)
    assert 5 <= expects["incorrect"] <= 20


def test_styles_llms_write():
    texts = {c.name: c.path.read_text() for c in CANDS}

    def count(pattern):
        return sum(1 for t in texts.values() if re.search(pattern, t, re.S | re.M))

    assert count(r"^\w+ = load_inline\(") >= 20  # module level
    assert count(r"def __init__\(.*?load_inline\(.*?def forward") >= 15  # __init__ time
    assert count(r"def forward\(.*?load_inline\(") >= 10  # forward time (lazy)
    assert count(r"try:\s+(?:\w+ = |self\.\w+ = )?load_inline\(") >= 10  # try/except fallbacks
    assert count(r"PYBIND11_MODULE") >= 10
    assert count(r"functions=\[") >= 40
    assert count(r"load_inline\(.*load_inline\(") >= 5  # several extensions
    assert count(r"@triton\.autotune") >= 8
    assert count(r"channels_last") >= 2 and count(r"cudnn\.benchmark = True") >= 2


@pytest.mark.parametrize("cand", [c for c in CANDS if c.kind == "builtin"],
                         ids=[c.name for c in CANDS if c.kind == "builtin"])
def test_static(cand):
    assert check.static_check(cand) == []


@pytest.mark.skipif(not KB_AVAILABLE, reason="KernelBench's problems are not next to the repo "
                                             "(../shared/baselines/kernelbench or KERNELBENCH_DIR)")
def test_static_on_kernelbench_tasks():
    problems = {c.name: check.static_check(c) for c in CANDS if c.kind == "kernelbench"}
    assert problems and not any(problems.values()), {k: v for k, v in problems.items() if v}


def test_builtin_tasks_exist_without_kernelbench():
    for c in CANDS:
        if c.kind == "builtin":
            assert check.task_file(c.task).is_file(), c.task


def test_extension_names_unique_and_sources_extracted():
    assert check.duplicate_names(CANDS) == {}
    units, missing = check.cuda_units(CANDS)
    assert len({u["candidate"] for u in units}) == sum(1 for c in CANDS if c.language == "cuda")
    assert all(m.get("resolved_by") for m in missing)  # what ast cannot resolve is covered by module constants
    assert all("__global__" in u["source"] for u in units)


def test_extract_handles_the_usual_spellings():
    code = '''
from torch.utils.cpp_extension import load_inline
A = "__global__ void k() {}"
B = A + "\\n// more"
m1 = load_inline(name="one", cpp_sources="", cuda_sources=A)
m2 = load_inline("two", "", [B])
def make(n):
    src = f"__global__ void k{n}() {{}}"
    return load_inline(name="three", cpp_sources="", cuda_sources=src)
class M:
    def __init__(self):
        local = r"""__global__ void z() {}"""
        self.e = load_inline(name="four", cpp_sources="", cuda_sources=local, functions=["f"])
cpu = load_inline(name="five", cpp_sources="int f();", functions=["f"])
'''
    exts = {e.name: e for e in check.extract_extensions(code)}
    assert exts["one"].cuda == ["__global__ void k() {}"]
    assert exts["two"].cuda == ["__global__ void k() {}\n// more"]
    assert exts["three"].cuda is None and "line" in exts["three"].why  # an f-string with a value
    assert exts["four"].cuda == ["__global__ void z() {}"]
    assert not exts["five"].has_cuda_arg


def test_header_errors_are_named():
    with pytest.raises(ValueError, match="first line"):
        check.parse_header("import torch\n")
    with pytest.raises(ValueError, match="expect"):
        check.parse_header("# task: builtin/level1/01_ReLU.py  language: torch  device: both\n# style: x\n")


def test_torch_candidates_match_on_cpu():
    pytest.importorskip("torch")
    for c in CANDS:
        if c.language != "torch" or c.kind != "builtin":
            continue
        r = check.run_on_cpu(c, tol=1e-4, max_mb=16.0)
        assert "skipped" not in r, c.name
        assert r["match"] == (c.expect == "ok"), (c.name, r)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvcc_compiles_a_sample(tmp_path):
    pytest.importorskip("torch")
    units, _ = check.cuda_units(CANDS)
    # two units of the two ways the corpus builds (functions= at module level; a build in
    # __init__ of a KernelBench task), compiled side by side: each is one nvcc process parsing
    # torch's headers (~35 s of a CI core), and the CI machine has two. The whole corpus is
    # `python benchmarks/corpus_llm/check.py` (it compiles every unit; five here made this the suite's
    # longest test: issue 45)
    wanted = ["b_relu__cuda_module_functions", "kb1_01_square_matmul__cuda_init"]
    sample = [next(u for u in units if u["candidate"] == w) for w in wanted]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda u: check.compile_ptx(u["source"], u["extension"], tmp_path, u["tag"]), sample))
    for u, r in zip(sample, results):
        assert r["ok"], (u["candidate"], r.get("error"))
        assert r["entries"] >= 1


# ---------------------------------------------------------- vs_kernelbench

vs = load_script("vs_kernelbench_mod", REPO / "benchmarks" / "vs_kernelbench.py")


def test_kb_status_mapping():
    assert vs.kb_status({"compiled": False}) == ("compile_error", None)
    assert vs.kb_status({"compiled": True, "correctness": False, "metadata": {"runtime_error": "x"}}) == ("runtime_error", None)
    assert vs.kb_status({"compiled": True, "correctness": False, "metadata": {}}) == ("incorrect", None)
    assert vs.kb_status({"compiled": True, "correctness": True, "runtime_us": 2.0, "ref_runtime_us": 4.0}) == ("ok", 2.0)
    assert vs.kb_status({"status": "timeout"}) == ("timeout", None)


def test_selection_and_summary():
    cpu = vs.select(CANDS, "cpu", "", 0, "all")
    assert cpu and all(c.runs_on("cpu") for c in cpu)
    assert not any(c.language in ("cuda", "triton") for c in cpu)
    gpu = vs.select(CANDS, "cuda", "", 3, "kernelbench")
    assert len(gpu) == 3 and all(c.kind == "kernelbench" for c in gpu)
    with pytest.raises(SystemExit):
        vs.select(CANDS, "cpu", "b_relu__cuda_module_functions", 0, "all")
    a, b = gpu[0], gpu[1]
    results = {
        "kernelbench": {"eval": {a.name: {"status": "ok", "speedup": 1.5}, b.name: {"status": "incorrect"}},
                        "segments": [{"candidates": 2, "seconds": 60.0}]},
        "kernelmill": {"verdicts": {a.name: {"status": "ok", "speedup": 1.4}, b.name: {"status": "ok", "speedup": 1.0}},
                       "segments": [{"candidates": 2, "seconds": 6.0}]},
    }
    summary, rows = vs.summarize(gpu[:2], results)
    assert summary["kernelbench"]["per_minute"] == pytest.approx(2.0)
    assert summary["kernelmill"]["per_minute"] == pytest.approx(20.0)
    assert summary["ratio_kernelmill_over_kernelbench"] == pytest.approx(10.0)
    assert summary["compared"] == 2 and summary["agree"] == 1
    diff = next(r for r in rows if r["candidate"] == b.name)
    assert diff["right_by_expectation"] == ("kernelmill" if b.expect == "ok" else "kernelbench")
    md = vs.markdown(summary, rows, {"device": "cuda", "correct_trials": 5, "perf_trials": 100, "guards": "standard"})
    assert "10.00x" in md and a.name in md


def test_external_rows_become_candidates_and_tasks_split_alike(tmp_path):
    import json

    rows = [{"id": f"L1-{i}", "ref_code": f"# ref {i}\n", "custom_code": code}
            for i, code in enumerate(["from torch.utils.cpp_extension import load_inline\n", "import triton\n",
                                      "import torch\n", "import torch\n", "import torch\n"])]
    table = tmp_path / "kernels.jsonl"
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cands = vs.load_external(table, tmp_path / "work")
    assert [c.name for c in cands] == ["L1-0", "L1-1", "L1-2", "L1-3", "L1-4"]
    assert [c.language for c in cands] == ["cpp", "triton", "torch", "torch", "torch"]
    assert all(c.kind == "external" and c.runs_on("cuda") and not c.runs_on("cpu") for c in cands)
    assert vs.task_source(cands[3], tmp_path, tmp_path / "work").read_text() == "# ref 3\n"
    tasks = tmp_path / "tasks"
    vs.write_task_folder(cands, tasks, tmp_path, tmp_path / "work")
    assert (tasks / "external" / "L1-4.py").read_text() == "# ref 4\n" and cands[4].task_id == "external/L1-4"
    # the two halves of a split are disjoint and cover the set, each spread over it
    one, two = vs.part_of(cands, "1/2"), vs.part_of(cands, "2/2")
    assert [c.name for c in one] == ["L1-0", "L1-2", "L1-4"] and [c.name for c in two] == ["L1-1", "L1-3"]
    for bad in ("0/2", "3/2", "half"):
        with pytest.raises(SystemExit):
            vs.part_of(cands, bad)
    table.write_text(table.read_text() + '{"id": "L1-9", "ref_code": "x"}\n')
    with pytest.raises(SystemExit, match=r"kernels.jsonl:6"):  # a row without its candidate
        vs.load_external(table, tmp_path / "work2")
    # rows without an expectation are compared, not counted as (un)expected
    results = {"kernelbench": {"eval": {"L1-0": {"status": "ok", "speedup": 1.5}}, "segments": [{"candidates": 1, "seconds": 30}]},
               "kernelmill": {"verdicts": {"L1-0": {"status": "incorrect"}}, "segments": [{"candidates": 1, "seconds": 3}]}}
    summary, out = vs.summarize(cands[:1], results)
    assert summary["compared"] == 1 and summary["agree"] == 0 and summary["kernelmill_as_expected"] == 0
    assert summary["statuses"] == {"ok": {"incorrect": 1}}  # the disagreements by kind
    assert "KernelBench -> kernelmill: ok -> incorrect 1." in vs.markdown(summary, out, results)
    assert "right_by_expectation" not in out[0] and summary["ratio_kernelmill_over_kernelbench"] == pytest.approx(10.0)


def test_a_resumed_kernelbench_side_keeps_a_cut_runs_time_and_drops_its_stale_build_locks(tmp_path):
    kb = {"eval": {}, "segments": [{"candidates": 3, "seconds": 30.0}],
          "segments_open": {"candidates": 22, "seconds": 356.3}}
    vs.close_cut_segment(kb)
    assert "segments_open" not in kb
    assert kb["segments"][-1] == {"candidates": 22, "seconds": 356.3, "cut": True}
    vs.close_cut_segment(kb)  # nothing open: nothing added
    assert len(kb["segments"]) == 2
    n, secs, _ = vs._rate(kb["segments"])
    assert (n, secs) == (25, pytest.approx(386.3))
    root = tmp_path / "kb_build"
    (root / "a" / "ext").mkdir(parents=True)
    (root / "a" / "ext" / "lock").write_text("")
    (root / "b").mkdir()
    (root / "b" / "lock").write_text("")  # b is done: its folder is not touched
    (root / "c").mkdir()
    (root / "c" / "main.cpp").write_text("")
    assert vs.stale_build_locks(root, ["a", "c", "missing"]) == [root / "a" / "ext" / "lock"]
    # and no evaluation is started that the call's deadline would cut (its build lock stays behind)
    assert vs.fits_before(0, 500.0, 1000.0)  # no deadline
    assert vs.fits_before(1060.0, 59.7, 1000.0) and not vs.fits_before(1040.0, 59.7, 1000.0)


def test_a_resumed_kernelbench_side_compiles_only_what_no_earlier_call_compiled(tmp_path):
    root = tmp_path / "kb_build"
    jobs = [{"name": n, "build_dir": str(root / n)} for n in ("a", "b", "c")]
    assert vs.still_to_compile(jobs, {}) == jobs  # the first call compiles every one
    root.mkdir()
    done = {"a": {"compiled": True}, "b": {"compiled": False}}  # a failed compile is a compile done too
    assert [j["name"] for j in vs.still_to_compile(jobs, done)] == ["c"]
    # a fresh machine (the build root gone): everything again
    assert vs.still_to_compile([{"name": "a", "build_dir": str(tmp_path / "gone" / "a")}], done) != []


def test_a_kernelbench_that_does_not_import_stops_the_comparison_before_kernelmill_runs(tmp_path, capsys):
    kb = tmp_path / "kb"
    (kb / "harness" / "kernelbench").mkdir(parents=True)
    (kb / "harness" / "kernelbench" / "__init__.py").write_text("")
    (kb / "harness" / "kernelbench" / "eval.py").write_text("import dotenv_that_is_not_installed\n")
    out = tmp_path / "vk.json"
    with pytest.raises(SystemExit) as e:
        vs.main(["--device", "cuda", "--kernelbench", str(kb), "--out", str(out)])
    assert e.value.code == 2
    assert "dotenv_that_is_not_installed" in capsys.readouterr().err
    assert not out.exists() and not out.with_suffix(".work").exists()


def test_the_parts_of_a_split_set_combine_into_one_comparison_of_one_version(tmp_path):
    import json

    def part(k, names, version, kb_s, km_s, device="NVIDIA H200"):
        return {"device": "cuda", "device_name": device, "corpus": "kernels.jsonl", "part": f"{k}/2",
                "correct_trials": 5, "perf_trials": 100, "guards": "standard",
                "rows": [{"candidate": n, "task": f"external/{n}", "language": "torch", "expect": None} for n in names],
                "kernelbench": {"eval": {n: {"status": "ok", "speedup": 1.0} for n in names},
                                "segments": [{"candidates": len(names), "seconds": kb_s}]},
                "kernelmill": {"verdicts": {n: {"status": "ok", "speedup": 1.1, "harness_version": version} for n in names},
                               "segments": [{"candidates": len(names), "seconds": km_s}]}}

    def write(name, data):
        path = tmp_path / name
        path.write_text(json.dumps(data))
        return path

    a = write("a.json", part(1, ["x", "y"], "0.5.19", 100.0, 20.0))
    b = write("b.json", part(2, ["z"], "0.5.19", 50.0, 10.0))
    out, md = tmp_path / "all.json", tmp_path / "all.md"
    assert vs.main(["--combine", str(a), str(b), "--out", str(out), "--markdown", str(md)]) == 0
    merged = json.loads(out.read_text())
    assert merged["summary"]["kernelbench"]["seconds"] == 150.0 and merged["summary"]["kernelmill"]["seconds"] == 30.0
    assert merged["summary"]["ratio_kernelmill_over_kernelbench"] == pytest.approx(5.0)
    assert merged["parts"] == ["1/2", "2/2"] and merged["harness_version"] == "0.5.19"
    assert "Parts: 1/2, 2/2, kernelmill harness 0.5.19" in md.read_text()
    # parts that do not belong together are refused, naming why
    c = write("c.json", part(2, ["z"], "0.5.18", 50.0, 10.0))
    with pytest.raises(SystemExit, match=r"one harness version: 0.5.18: c.json; 0.5.19: a.json"):
        vs.combine([a, c])
    with pytest.raises(SystemExit, match="x is in a.json and d.json"):
        vs.combine([a, write("d.json", part(2, ["x"], "0.5.19", 1.0, 1.0))])
    with pytest.raises(SystemExit, match="differ in device_name"):
        vs.combine([a, write("e.json", part(2, ["w"], "0.5.19", 1.0, 1.0, device="NVIDIA H100"))])
    with pytest.raises(SystemExit, match="nothere.json"):
        vs.combine([a, tmp_path / "nothere.json"])


def test_the_gpu_watch_reports_who_held_each_gpu_during_kernelmill_s_run(tmp_path, monkeypatch):
    from kernelmill.verify.measure.gpulock import gpu_lock

    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")  # the run's GPUs 0 and 1 are the machine's 3 and 5
    watch = vs.GpuWatch(2)
    assert [g for g, _, _ in watch.watched] == [0, 1]
    # a run worker on GPU 1 sees it as "cuda" under CUDA_VISIBLE_DEVICES=5 (runner._visible)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5")
    with gpu_lock("cuda", exclusive=False, label="run-pre"):
        pass
    with gpu_lock("cuda", exclusive=True, label="timing"):
        pass
    raw = tmp_path / "watch.json"
    out = watch.summary(raw)
    assert out["0"]["lock"] == {"holds": 0} and out["1"]["lock"]["timings"] == 1
    kept = json.loads(raw.read_text())  # every hold, for a timeline: times from the watch's start
    holds = kept["gpus"]["1"]["holds"]
    assert [h[1:3] for h in holds] == [[0, "run-pre"], [1, "timing"]] and kept["gpus"]["0"]["holds"] == []
    assert all(0 <= h[3] <= h[4] <= h[5] <= kept["wall_s"] for h in holds)
    assert set(out["1"]["lock"]["held"]) == {"run-pre", "timing"}
    assert not list(tmp_path.glob("*.events"))  # logging ends with the summary
    lines = vs.gpu_lines(out)
    assert lines[1].startswith("- GPU 1: a timing held it") and "1 timings waited" in lines[1]
    results = {"device": "cuda", "kernelmill": {"segments": [{"candidates": 1, "seconds": 1.0, "gpus": out}]}}
    summary, rows = vs.summarize([], results)
    assert "kernelmill's GPUs during its run" in vs.markdown(summary, rows, results)


def test_the_gpu_watch_splits_nvidia_smi_s_busy_share_by_who_held_the_lock():
    le = vs.lock_events
    holds = [le.Hold(1, True, "timing", 0.9, 1.0, 2.0, True), le.Hold(2, False, "run-pre", 2.0, 2.0, 4.0, True),
             le.Hold(3, True, "timing", 4.5, 4.6, 4.7, False)]  # not acquired: it held nothing
    samples = [(0.5, 0.0), (1.5, 80.0), (3.0, 20.0), (3.5, 40.0), (4.65, 10.0), (9.0, 99.0)]
    got = le.busy_by_state(holds, samples, 0.0, 5.0)
    assert got == {"nothing": {"mean_pct": 5.0, "samples": 2}, "shared_only": {"mean_pct": 30.0, "samples": 2},
                   "timing": {"mean_pct": 80.0, "samples": 1}}
    line = vs.gpu_lines({"0": {"lock": {"cover": {}}, "smi_util_mean": 30.0, "smi_samples": 5, "smi_by_state": got}})[0]
    assert "busy while nothing 5.0%, shared only 30.0%, timing 80.0%" in line
