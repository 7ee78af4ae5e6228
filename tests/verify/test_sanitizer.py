"""compute-sanitizer under `--guards strict` (issue 42, measure/sanitizer.py): the report
parser on reports in NVIDIA's wording, attribution to the candidate's own kernels, and the
plumbing (a process per tool, exit codes, timeouts) through a stand-in compute-sanitizer
that runs the call and prints a report. The real tool runs only on a GPU (test_gpu_corpus)."""

from __future__ import annotations

import itertools
import os
from contextlib import contextmanager
import stat
import sys
import textwrap

import pytest

from kernelmill.verify.measure import sanitizer as san

MEMCHECK = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at relu_tail_kernel(const float *, float *, int)+0x70 in /tmp/x/main.cu:9
=========     by thread (31,0,0) in block (64,0,0)
=========     Address 0x7f3a1c010000 is out of bounds
=========     and is 0 bytes after the nearest allocation at 0x7f3a1c000000 of size 65536 bytes
=========
========= Invalid __global__ read of size 16 bytes
=========     at void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm>(T1::Params)+0x1f0
=========     by thread (0,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 2 errors
"""
RACECHECK = """\
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at void block_sum<256>(const float *, float *, int)+0x1a0 in /tmp/r.cu:14
=========     and Read access at void block_sum<256>(const float *, float *, int)+0x1c0 in /tmp/r.cu:16 [248 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""
INITCHECK = """\
========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at 0x1b0 in tile_kernel(float *, const float *)
=========     by thread (3,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 1 error
"""
CLEAN = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"


def test_each_tool_s_report_gives_its_errors_and_kernels():
    mem = san.parse("memcheck", MEMCHECK)
    assert [(f.kernel, f.flag) for f in mem] == [("relu_tail_kernel", "memory_error"), ("Kernel2", "memory_error")]
    assert mem[0].line.startswith("Invalid __global__ write of size 4")
    race = san.parse("racecheck", RACECHECK)
    assert [(f.kernel, f.flag) for f in race] == [("block_sum", "data_race")]
    init = san.parse("initcheck", INITCHECK)
    assert [(f.kernel, f.flag) for f in init] == [("tile_kernel", "uninitialized_read")]
    assert san.parse("memcheck", CLEAN) == []


def test_only_the_candidate_s_own_kernels_count():
    mem = san.parse("memcheck", MEMCHECK)
    assert [f.kernel for f in san.own_findings(mem, {"relu_tail_kernel"})] == ["relu_tail_kernel"]
    assert san.own_findings(mem, {"my_gemm"}) == []  # cuBLAS/CUTLASS's read is not the candidate's
    tl = san.parse("initcheck", INITCHECK.replace("tile_kernel", "matmul_kernel"))
    assert len(san.own_findings(tl, {"matmul"})) == 1  # TileLang's `matmul` runs as `matmul_kernel`


TASK = """import torch
import torch.nn as nn
N = 64
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(N)]
def get_init_inputs():
    return []
"""


def _fake_tool(folder, report: str, exit_code: int, only: str | None = None) -> str:
    """A compute-sanitizer stand-in: records its arguments, prints `report` and exits with
    `exit_code` (for the tool `only` when given; a clean report for the others)."""
    path = folder / "compute-sanitizer"
    path.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, sys
        with open({str(folder / 'calls.jsonl')!r}, "a") as f:
            f.write(json.dumps(sys.argv[1:]) + "\\n")
        tool = sys.argv[sys.argv.index("--tool") + 1]
        if {only!r} in (None, tool):
            print({report!r})
            sys.exit({exit_code})
        print({CLEAN!r})
        """))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(folder)


@pytest.mark.parametrize("report, code, want", [
    (MEMCHECK, san.ERROR_EXIT, ["memory_error"]),   # its own kernel wrote out of bounds
    (MEMCHECK.replace("relu_tail_kernel", "at_kernel"), san.ERROR_EXIT, []),  # a library's error only
    (CLEAN, 0, []),
])
def test_sanitize_runs_each_tool_and_keeps_its_own_errors(tmp_path, monkeypatch, report, code, want):
    import json

    monkeypatch.setenv("PATH", _fake_tool(tmp_path, report, code, only="memcheck") + os.pathsep + os.environ["PATH"])
    env = {**os.environ, "HOME": str(tmp_path)}
    spec = {"task_code": TASK, "candidate": str(tmp_path / "candidate.py"), "input_seed": 3, "weight_seed": 0}
    held = []

    @contextmanager
    def section():  # the GPU lock's place: entered once around each tool's process
        held.append("in")
        yield
        held.append("out")

    got = san.sanitize(spec, env, {"relu_tail_kernel"}, timeout=60, gpu_section=section)
    assert sorted(held) == ["in"] * 3 + ["out"] * 3  # the lock entered once around each tool's process
    assert sorted({f for f, _ in got["findings"]}) == want, got
    assert got["tools"] == {"memcheck": "errors" if want else "clean", "racecheck": "clean", "initcheck": "clean"}
    assert list(got["tools"]) == ["memcheck", "racecheck", "initcheck"] and set(got["seconds"]) == set(got["tools"])
    # each tool's own count, kept whatever it found (a clean racecheck says what it counted)
    assert got["summary"]["memcheck"] == ("ERROR SUMMARY: 2 errors" if code else "ERROR SUMMARY: 0 errors")
    assert got["summary"]["racecheck"] == "ERROR SUMMARY: 0 errors"
    calls = sorted((json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()),
                   key=lambda c: ["memcheck", "racecheck", "initcheck"].index(c[c.index("--tool") + 1]))
    assert [c[c.index("--tool") + 1] for c in calls] == ["memcheck", "racecheck", "initcheck"]
    for c in calls:  # the watched process is the call of this module, with the tool's error exit code
        assert c[c.index("-m") + 1] == "kernelmill.verify.measure.sanitizer" and c[-2] == "--call"
        assert c[c.index("--error-exitcode") + 1] == str(san.ERROR_EXIT)
    # memcheck and racecheck instrument the candidate's own kernels only; initcheck all of them
    # (an uninstrumented writer would make its output read as uninitialised)
    assert [c[c.index("--kernel-name") + 1] if "--kernel-name" in c else None for c in calls] == [
        "kns=relu_tail_kernel", "kns=relu_tail_kernel", None]


def test_the_tools_run_side_by_side_each_in_the_gpu_section(tmp_path, monkeypatch):
    # each tool's process is a fresh interpreter opening a CUDA context under the tool: one
    # after another they were most of a strict verdict's cost. Each stand-in notes when it
    # started and ended: every one starts before any ends, and each inside a held section
    tool = tmp_path / "compute-sanitizer"
    tool.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys, time
        name = sys.argv[sys.argv.index("--tool") + 1]
        with open({str(tmp_path / 'spans.txt')!r}, "a") as f:
            f.write(f"start {{name}} {{time.time()}}\\n")
        time.sleep(1.0)
        with open({str(tmp_path / 'spans.txt')!r}, "a") as f:
            f.write(f"end {{name}} {{time.time()}}\\n")
        print({CLEAN!r})
        """))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    inside = []

    @contextmanager
    def section():
        inside.append(+1)
        yield
        inside.append(-1)

    got = san.sanitize({"task_code": TASK, "candidate": "c.py"}, {**os.environ, "HOME": str(tmp_path)},
                       {"k"}, timeout=60, gpu_section=section)
    assert got["tools"] == {t: "clean" for t in san.TOOLS}
    spans = [line.split() for line in (tmp_path / "spans.txt").read_text().splitlines()]
    starts = [float(t) for kind, _, t in spans if kind == "start"]
    ends = [float(t) for kind, _, t in spans if kind == "end"]
    assert len(starts) == len(ends) == 3 and max(starts) < min(ends)
    assert max(itertools.accumulate(inside)) == 3  # all three sections held at once


def test_a_call_that_fails_under_the_tool_is_said_and_flags_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _fake_tool(tmp_path, "Traceback: CUDA error: no device", 1) + os.pathsep
                       + os.environ["PATH"])
    got = san.sanitize({"task_code": TASK, "candidate": "c.py"}, {**os.environ, "HOME": str(tmp_path)},
                       {"k"}, timeout=60, tools=("memcheck",))
    assert got["findings"] == [] and got["tools"]["memcheck"].startswith("the call failed under memcheck (exit 1)")


def test_no_tool_on_the_machine_is_said(monkeypatch):
    monkeypatch.setattr(san, "available", lambda: None)
    got = san.sanitize({}, {}, {"k"}, timeout=1)
    assert got == {"tools": {t: "compute-sanitizer not found" for t in san.TOOLS}, "findings": []}


def test_the_watched_call_loads_the_task_and_the_candidate_and_calls_once(tmp_path):
    import json
    import subprocess

    (tmp_path / "candidate.py").write_text("import torch\nclass ModelNew(torch.nn.Module):\n"
                                           "    def forward(self, x):\n        return x.clamp_min(0)\n")
    spec = tmp_path / "call.json"
    spec.write_text(json.dumps({"task_code": TASK, "candidate": str(tmp_path / "candidate.py"), "input_seed": 1,
                                "sizes": {"N": 8}, "device": "cpu", "echo": True}))
    proc = subprocess.run([sys.executable, "-m", "kernelmill.verify.measure.sanitizer", "--call", str(spec)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "called: Tensor (8,)" in proc.stdout, proc.stderr[-500:]


def test_the_verifier_gives_each_tool_the_sanitize_timeout(tmp_path, monkeypatch):
    # not the run's timeout (300 s on a GPU, for each of three tools): a racecheck of a full-size
    # 4096^3 tiled matmul watches ~1e11 shared-memory accesses and ran past it (session 14)
    from types import SimpleNamespace

    from kernelmill.verify import runner
    from kernelmill.verify.config import VerifyConfig

    seen = {}

    def fake(spec, env, own, timeout, gpu_section=None):
        seen.update(timeout=timeout, own=set(own))
        return {"tools": {t: "clean" for t in san.TOOLS}, "findings": [], "seconds": {t: 1.0 for t in san.TOOLS}}

    monkeypatch.setattr(runner, "sanitize", fake)
    code = 'src = r"""__global__ void my_kernel(float* y) {}"""\n'
    job = SimpleNamespace(sample=SimpleNamespace(code=code, language="cuda"), workdir=tmp_path,
                          task=SimpleNamespace(code=TASK))
    me = SimpleNamespace(config=VerifyConfig(sanitize_timeout=7.0), _env=lambda *a: {}, cache_dir=tmp_path)
    data = runner.Verifier._sanitize(me, job, 0, {"input_seed": 1}, {"status": "ok", "flags": []})
    assert seen == {"timeout": 7.0, "own": {"my_kernel"}}
    assert data["measurement"]["sanitizer_s"] == {t: 1.0 for t in san.TOOLS}
    assert data["status"] == "ok" and data["flags"] == []


def _sanitized(tmp_path, monkeypatch, tools: dict, language="cuda", **config):
    """`Verifier._sanitize` over a stand-in `sanitize` that answers `tools`; (its verdict, the spec)."""
    from types import SimpleNamespace

    from kernelmill.verify import runner
    from kernelmill.verify.config import VerifyConfig

    specs = []

    def fake(spec, env, own, timeout, gpu_section=None):
        specs.append(spec)
        return {"tools": tools, "findings": [], "seconds": {t: 1.0 for t in tools}}

    monkeypatch.setattr(runner, "sanitize", fake)
    code = 'src = r"""__global__ void my_kernel(float* y) {}"""\n'
    job = SimpleNamespace(sample=SimpleNamespace(code=code, language=language), workdir=tmp_path,
                          task=SimpleNamespace(code=TASK))
    me = SimpleNamespace(config=VerifyConfig(**config), _env=lambda *a: {}, cache_dir=tmp_path)
    return runner.Verifier._sanitize(me, job, 0, {"input_seed": 1}, {"status": "ok", "flags": [], "message": "m"}), specs[0]


def test_a_tool_that_did_not_check_the_call_is_named_in_the_verdict(tmp_path, monkeypatch):
    # strict promises three tools' checks: a candidate slow under instrumentation (or a call that
    # fails under it) must not pass as checked. Session 15: three builtin CUDA candidates reached
    # the 120 s limit and their verdicts said nothing
    data, _ = _sanitized(tmp_path, monkeypatch, {"memcheck": "clean", "racecheck": "timed out after 120 s",
                                                 "initcheck": "the call failed under initcheck (exit 1): x"})
    assert data["status"] == "ok" and data["flags"] == ["sanitizer_incomplete"]
    assert data["message"].startswith("m; not checked by racecheck (timed out after 120 s); initcheck (the call failed")
    assert san.unfinished({"tools": {"memcheck": "errors", "racecheck": "clean"}}) == {}


def test_the_watched_call_gets_the_run_s_builder(tmp_path, monkeypatch):
    # without it torch's own load_inline compiled the extension again under each tool (93-121 s of
    # every CUDA candidate's strict verdict on an H200, session 15; Triton candidates 7-30 s)
    from kernelmill.verify.config import VerifyConfig

    _, spec = _sanitized(tmp_path, monkeypatch, {t: "clean" for t in san.TOOLS}, merge_units=False)
    assert spec["build"] == {"cache": str(tmp_path / "build"), "merge": False, "slim": VerifyConfig().slim_units}
    _, spec = _sanitized(tmp_path, monkeypatch, {t: "clean" for t in san.TOOLS}, fast_build=False)
    assert "build" not in spec
    _, spec = _sanitized(tmp_path, monkeypatch, {t: "clean" for t in san.TOOLS}, language="triton")
    assert "build" not in spec


def test_the_watched_call_routes_load_inline_through_the_builder(tmp_path):
    # the call process installs the builder before the candidate is imported, so a load_inline
    # at import finds the cache the build phase filled (here: which function the candidate sees)
    import json
    import subprocess

    (tmp_path / "candidate.py").write_text(
        "import torch, torch.utils.cpp_extension as ce\n"
        "print('load_inline from', ce.load_inline.__module__, 'load from', ce.load.__module__)\n"
        "class ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x.clamp_min(0)\n")
    for build, want in ((None, "torch.utils.cpp_extension"), ({"cache": str(tmp_path / "build")},
                                                              "kernelmill.verify.build.inline_build")):
        spec = tmp_path / "call.json"
        spec.write_text(json.dumps({"task_code": TASK, "candidate": str(tmp_path / "candidate.py"), "input_seed": 1,
                                    "sizes": {"N": 8}, "device": "cpu", "echo": True,
                                    **({"build": build} if build else {})}))
        proc = subprocess.run([sys.executable, "-m", "kernelmill.verify.measure.sanitizer", "--call", str(spec)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-500:]
        assert f"load_inline from {want} load from {want}" in proc.stdout, proc.stdout


def test_the_tools_count_lines_are_kept():
    assert san._summary(RACECHECK) == "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
    assert san._summary(MEMCHECK) == "ERROR SUMMARY: 2 errors"
    assert san._summary("no tool output at all") == ""


# racecheck's hazard mode in the older wording, with line information before the kernel
HAZARD_MODE = """\
========= COMPUTE-SANITIZER
========= ERROR: Potential RAW hazard detected at __shared__ 0x1f0 in block (0, 0, 0) :
=========     Write Thread (31, 0, 0) at 0x00000270 in /tmp/s/main.cu:8:scan_kernel(const float *, float *, int)
=========     Read Thread (32, 0, 0) at 0x00000250 in /tmp/s/main.cu:8:scan_kernel(const float *, float *, int)
=========     Current Value : 0, Incoming Value : 0
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""
# report lines no kernel can be read from, and racecheck's count (the calibration's in-place
# scan, session_2026-11-30e: 315728 errors counted, the verdict read "clean")
UNPLACED = """\
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at 0x1a0
=========     and Read access at 0x1c0 [1024 hazards]
========= RACECHECK SUMMARY: 20 hazards displayed (315728 errors, 524416 warnings)
"""


def test_hazard_mode_lines_name_their_kernel():
    race = san.parse("racecheck", HAZARD_MODE)
    assert [(f.kernel, f.flag) for f in race] == [("scan_kernel", "data_race")]
    assert race[0].line.startswith("Potential RAW hazard")
    assert not race[0].warning
    warn = san.parse("racecheck", HAZARD_MODE.replace("ERROR: Potential", "Warning: (Warp Level Programming) Potential"))
    assert [(f.kernel, f.warning) for f in warn] == [("scan_kernel", True)]


WARNED = HAZARD_MODE.replace("ERROR: Potential", "Warning: (Warp Level Programming) Potential")


@pytest.mark.parametrize("report, state", [
    # the lines shown are warnings in the candidate's kernel, the count has errors: the count decides
    (WARNED.replace("(1 error, 0 warnings)", "(315728 errors, 524416 warnings)"), "errors"),
    # warnings only, shown and counted: no flag
    (WARNED.replace("(1 error, 0 warnings)", "(0 errors, 1 warning)"), "clean"),
])
def test_racecheck_warnings_alone_flag_nothing_but_do_not_hide_counted_errors(tmp_path, monkeypatch, report, state):
    got = _one_tool(tmp_path, monkeypatch, report, san.ERROR_EXIT, {"scan_kernel"})
    assert got["tools"] == {"racecheck": state}
    assert [f for f, _ in got["findings"]] == (["data_race"] if state == "errors" else [])


def _one_tool(tmp_path, monkeypatch, report, code, own, tool="racecheck", timeout=60):
    monkeypatch.setenv("PATH", _fake_tool(tmp_path, report, code, only=tool) + os.pathsep + os.environ["PATH"])
    return san.sanitize({"task_code": TASK, "candidate": "c.py"}, {**os.environ, "HOME": str(tmp_path)},
                        own, timeout=timeout, tools=(tool,))


def test_racecheck_s_own_count_decides_when_no_line_names_a_kernel(tmp_path, monkeypatch):
    got = _one_tool(tmp_path, monkeypatch, UNPLACED, san.ERROR_EXIT, {"scan_kernel"})
    assert got["tools"] == {"racecheck": "errors"}
    assert [f for f, _ in got["findings"]] == ["data_race"]
    assert "315728 race errors counted" in got["findings"][0][1]
    assert got["unattributed"]["racecheck"] == ["Race reported between Write access at 0x1a0"]


@pytest.mark.parametrize("report, own", [
    # no filter on the tool (no own kernel named): what it counts may be anyone's
    (UNPLACED, set()),
    # a line named a kernel that is not the candidate's: the count is not taken as its own
    (RACECHECK.replace("1 hazard displayed (1 error,", "3 hazards displayed (7 errors,"), {"my_kernel"}),
    # warnings only
    (UNPLACED.replace("(315728 errors", "(0 errors"), {"scan_kernel"}),
])
def test_racecheck_s_count_alone_does_not_flag_what_it_cannot_place(tmp_path, monkeypatch, report, own):
    got = _one_tool(tmp_path, monkeypatch, report, san.ERROR_EXIT, own)
    assert got["findings"] == [] and got["tools"] == {"racecheck": "clean"}


def _slow_tool(folder, report: str) -> str:
    """A stand-in that prints `report` and then hangs past the timeout."""
    path = folder / "compute-sanitizer"
    path.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys, time
        print({report!r}, flush=True)
        time.sleep(60)
        """))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(folder)


@pytest.mark.parametrize("report, state, flags", [
    # a hazard printed before the tool was stopped stands (matmul/cuda/missing_second_sync ran
    # racecheck past 120 s on two sessions: its hazards were never read)
    (RACECHECK.split("=========\n")[0], "errors", ["data_race"]),
    # nothing seen before the cut proves nothing: the tool did not check the call
    ("========= COMPUTE-SANITIZER\n", "timed out after 2 s", []),
])
def test_a_tool_stopped_at_the_timeout_keeps_what_it_reported(tmp_path, monkeypatch, report, state, flags):
    monkeypatch.setenv("PATH", _slow_tool(tmp_path, report) + os.pathsep + os.environ["PATH"])
    got = san.sanitize({"task_code": TASK, "candidate": "c.py"}, {**os.environ, "HOME": str(tmp_path)},
                       {"block_sum"}, timeout=2, tools=("racecheck",))
    assert got["tools"] == {"racecheck": state}
    assert [f for f, _ in got["findings"]] == flags
    if flags:
        assert "before it was stopped at 2 s" in got["findings"][0][1]
        assert san.unfinished(got) == {}
    else:
        assert san.unfinished(got) == {"racecheck": "timed out after 2 s"}


def test_racecheck_reports_each_race_once_and_caps_what_it_processes(tmp_path, monkeypatch):
    # its hazard mode reports every byte of every hazard: 96 s and past 120 s on the
    # calibration's two racy kernels against 8-9 s for their honest twins (session_2026-11-30e)
    import json

    tool = tmp_path / "compute-sanitizer"
    tool.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, sys
        with open({str(tmp_path / 'calls.jsonl')!r}, "a") as f:
            f.write(json.dumps([sys.argv[1:], os.environ.get("NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS")]) + "\\n")
        print({CLEAN!r})
        """))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    san.sanitize({"task_code": TASK, "candidate": "c.py"}, {**os.environ, "HOME": str(tmp_path)}, {"k"}, timeout=60)
    calls = {c[c.index("--tool") + 1]: (c, cap) for c, cap in
             (json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines())}
    race, cap = calls["racecheck"]
    assert race[race.index("--racecheck-report") + 1] == "analysis"
    assert race[race.index("--racecheck-detect-level") + 1] == "error"
    assert cap == "100000" and calls["memcheck"][1] is None  # the cap is racecheck's alone
    assert "--racecheck-report" not in calls["memcheck"][0]


RACY = ("cumsum/cuda/hillis_steele_in_place", "matmul/cuda/missing_second_sync")
TWINS = ("cumsum/cuda/hillis_steele", "matmul/cuda/tiled")


def test_the_gpu_test_s_kernels_are_the_calibration_s():
    # what the GPU test below loads, loaded here too: a renamed kernel or a moved suite fails on
    # every machine, not only on the device
    from calibration_support import calibration_kernels

    picked, run = calibration_kernels(*RACY, *TWINS)
    assert {k.kind for k in picked if k.kernel_id in RACY} == {"wrong"}
    assert {k.kind for k in picked if k.kernel_id in TWINS} == {"control"}
    assert callable(run.kernelmill_checks)


@pytest.mark.gpu
def test_strict_flags_the_calibration_s_races_and_not_their_honest_twins(tmp_path):
    """On a GPU: the calibration's two racy CUDA kernels (an in-place Hillis-Steele scan, a tiled
    GEMM without its second barrier) are caught by racecheck under strict, within the sanitizer's
    timeout; their honest twins pass with racecheck clean. On 0.5.14 the scan read clean beside
    315728 counted errors and the GEMM's racecheck ran past 120 s (session_2026-11-30e)."""
    import torch

    from calibration_support import calibration_kernels

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    racy, honest = RACY, TWINS
    picked, run = calibration_kernels(*racy, *honest)
    got = {}
    run.kernelmill_checks(picked, "cuda", str(tmp_path / "cache"), 8.0, None, 1, "strict_fp64",
                          lambda kid, res: got.__setitem__(kid, res))
    for kid in racy:
        res = got[kid]
        assert not res["passed"] and "data_race" in res["flags"], (kid, res)
        assert res["sanitizer"]["racecheck"] == "errors", (kid, res)
    for kid in honest:
        res = got[kid]
        assert res["passed"] and res["sanitizer"]["racecheck"] == "clean", (kid, res)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie nobody reaped yet counts as ended)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_tool_stopped_at_the_timeout_takes_the_watched_call_with_it(tmp_path, monkeypatch):
    # compute-sanitizer runs the call in a child process: stopping the tool alone left that child
    # running on the GPU after the GPU lock was let go
    import time

    tool = tmp_path / "compute-sanitizer"
    tool.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(tmp_path / 'child.pid')!r}, "w").write(str(child.pid))
        print("========= COMPUTE-SANITIZER", flush=True)
        time.sleep(120)
        """))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    got = san.sanitize({"task_code": TASK, "candidate": "c.py"}, {**os.environ, "HOME": str(tmp_path)},
                       {"k"}, timeout=3, tools=("racecheck",))
    assert got["tools"] == {"racecheck": "timed out after 3 s"}
    pid = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the watched process outlived its tool"
