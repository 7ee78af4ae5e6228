"""compute-sanitizer over one call of a candidate (issue 42, `--guards strict` on a GPU).

A kernel can pass every comparison and still read out of bounds (into padding that
happens to hold zeros), race on shared memory (right 19 times in 20) or read memory it
never wrote (an uninitialised tile that the caching allocator happens to hand over
clean). NVIDIA's compute-sanitizer sees these as they happen: this module runs the
candidate once on one input set under each of its tools (memcheck, racecheck,
initcheck), in a fresh process (`python -m kernelmill.verify.measure.sanitizer --call`),
and turns the reports into flags. Only errors inside the candidate's own kernels count
(their names from its source, as provenance names them): library kernels (cuBLAS, cuDNN,
ATen) are not the candidate's to answer for, and some of them read padding by design.

Written by hand: compute-sanitizer is a command-line tool with a text report and no
Python binding; the report's wording is NVIDIA's (CUDA 12 and 13 print the same lines)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

# tool -> the flag its errors give
TOOLS = {"memcheck": "memory_error", "racecheck": "data_race", "initcheck": "uninitialized_read"}
ERROR_EXIT = 86  # --error-exitcode: tells "the tool found errors" from "the call failed"

# "Error:" / "ERROR:" (racecheck's hazard mode) / "Warning: (Warp Level Programming)" before the kind
_HEADER = re.compile(r"^=+\s+(?:(?:Error|ERROR|(Warning|WARNING)):\s+(?:\([^)]*\)\s+)?)?"
                     r"((?:Invalid|Misaligned|Out-of-range|Uninitialized|Race reported|"
                     r"Program hit|Barrier error|Potential).*)$")
# where a report names the kernel: "at k(float *)+0x70 in f.cu:9", "at 0x70 in k(float*)" (no line
# information) and "at 0x70 in f.cu:9:k(float*)" (racecheck's hazard lines with line information)
_WHERE = re.compile(r"\bat\s+(?:0x[0-9a-f]+\s+in\s+)?(?:\S*:\d+:)?(?:void\s+)?([A-Za-z_][\w:]*(?:<[^()]*>)?)\s*\(")
# racecheck's own count: "RACECHECK SUMMARY: 20 hazards displayed (315728 errors, 524416 warnings)"
_RACE_ERRORS = re.compile(r"RACECHECK SUMMARY:.*?\((\d+) errors?,")


@dataclass
class Finding:
    tool: str
    kernel: str  # the kernel's name as the report gives it ("" when it names none)
    line: str  # the report's header line
    warning: bool = False  # racecheck's "Warning:" (a hazard it is not sure of): no flag of its own

    @property
    def flag(self) -> str:
        return TOOLS[self.tool]


def parse(tool: str, text: str) -> list[Finding]:
    """The errors of one tool's report: each header line with the kernel named in it or
    in the few lines after it ("at k(float*)+0x70 in file.cu:5")."""
    lines = [ln.rstrip() for ln in text.splitlines()]
    out = []
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if not m:
            continue
        kernel = ""
        for near in lines[i:i + 5]:
            w = _WHERE.search(near)
            if w:
                kernel = w.group(1).split("::")[-1].split("<")[0]
                break
        out.append(Finding(tool, kernel, m.group(2).strip(), warning=bool(m.group(1))))
    return out


def own_findings(findings: list[Finding], own_kernels: set[str] | frozenset[str]) -> list[Finding]:
    """The findings inside the candidate's own kernels (a name it defines is part of the
    reported one: TileLang's `f` runs as `f_kernel`, templates carry arguments)."""
    return [f for f in findings if f.kernel and any(k == f.kernel or k in f.kernel for k in own_kernels)]


def available() -> str | None:
    """The compute-sanitizer on PATH (or in CUDA's bin folder), None if there is none."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        path = os.path.join(root, "bin", "compute-sanitizer") if root else None
        if path and os.access(path, os.X_OK):
            return path
    return None


# the tools whose instrumentation may be limited to the candidate's own kernels: memcheck
# checks each access against the allocations (tracked through the API, whoever launched),
# racecheck looks inside one kernel's shared memory. initcheck may not: a kernel left
# uninstrumented writes memory it cannot see written, and an own kernel reading that
# memory would read as uninitialised. Unfiltered, memcheck and racecheck instrument every
# kernel the process loads (torch's own at start-up too): the filter is what keeps a
# candidate's check to seconds.
FILTERED = ("memcheck", "racecheck")


# racecheck's options. Its hazard mode reports every byte of every hazard (NVIDIA's guide,
# "Understanding Racecheck Hazard Reports"): on a racy kernel that is most of its time (the
# calibration's in-place scan 96 s for 840k hazards, its tiled GEMM with a barrier missing past
# 120 s, their honest twins 8-9 s: session_2026-11-30e). The analysis mode (the tool's default)
# reports each race once, with its count; warnings (warp-level hazards, which flag nothing here)
# are not looked for; and the hazards it processes are capped (NV_COMPUTE_SANITIZER_MAX_RACECHECK_
# HAZARDS, 10,000,000 unset): one is enough for the flag.
RACECHECK_ARGS = ("--racecheck-report", "analysis", "--racecheck-detect-level", "error")
RACECHECK_ENV = {"NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS": "100000"}


def command(exe: str, tool: str, own_kernels, spec_path: str) -> list[str]:
    """compute-sanitizer's command line for one tool over the call in `spec_path`."""
    names = sorted(own_kernels) if tool in FILTERED else []
    return [exe, "--tool", tool, "--error-exitcode", str(ERROR_EXIT), "--print-limit", "20",
            *(RACECHECK_ARGS if tool == "racecheck" else ()),
            *[arg for name in names for arg in ("--kernel-name", f"kns={name}")],
            sys.executable, "-m", "kernelmill.verify.measure.sanitizer", "--call", spec_path]


def sanitize(spec: dict, env: dict[str, str], own_kernels: set[str] | frozenset[str], timeout: float,
             tools: tuple[str, ...] = tuple(TOOLS), gpu_section=None) -> dict:
    """Run the candidate's call (`spec`: task_code, candidate, input_seed, weight_seed,
    sizes, and `build`: the run's extension builder, if it had one) under each tool; {"tools": {tool: "clean" | "errors" | why it did not run},
    "findings": [(flag, detail), ...] in its own kernels, "seconds": {tool: wall time}}.
    `gpu_section()`: a context manager held around each tool's process (the GPU lock,
    shared: an instrumented call is GPU work no timing on that GPU may overlap). The tools
    run side by side (each holds the shared lock, so no timing runs meanwhile, and a timing
    waiting for the GPU waits for the slowest of them, not their sum): each is a fresh
    process that imports torch and opens a CUDA context under the tool, seconds before
    the one call it watches, and one after another they were most of a strict verdict's
    cost (20-80 s a candidate on an H200, sessions 12-14)."""
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import nullcontext

    section = gpu_section or nullcontext
    exe = available()
    if exe is None:
        return {"tools": {t: "compute-sanitizer not found" for t in tools}, "findings": []}
    report: dict = {"tools": {}, "findings": [], "seconds": {}}
    with tempfile.TemporaryDirectory(prefix="km-sanitize-", dir=env.get("HOME")) as tmp:
        spec_path = os.path.join(tmp, "call.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)

        def one(tool: str):
            t0 = time.monotonic()
            try:
                with section():
                    return _run_tool(command(exe, tool, own_kernels, spec_path), tmp,
                                     {**env, **RACECHECK_ENV} if tool == "racecheck" else env, timeout)
            finally:
                report["seconds"][tool] = round(time.monotonic() - t0, 2)

        with ThreadPoolExecutor(max_workers=len(tools) or 1, thread_name_prefix="km-sanitize") as pool:
            done = list(pool.map(one, tools))
        for tool, proc in zip(tools, done):  # reported in the tools' order, whichever ended first
            cut = isinstance(proc, str)  # timed out: only what it printed before
            text = proc if cut else proc.stdout + "\n" + proc.stderr
            summary = _summary(text)
            if summary:  # what the tool counted, own kernels or not (a clean race check says 0 hazards)
                report.setdefault("summary", {})[tool] = summary
            found = parse(tool, text)
            own = own_findings(found, own_kernels)
            mine = [f for f in own if not f.warning]
            foreign = [f for f in found if f.kernel and f not in own]
            if not mine and tool == "racecheck" and own_kernels and not foreign:
                mine = _counted_races(text, found)
            unnamed = [f.line for f in found if not f.kernel]
            if unnamed:  # report lines no kernel could be read from: kept, so a miss can be looked at
                report.setdefault("unattributed", {})[tool] = unnamed[:3]
            if cut and not mine:  # a hazard seen before the cut stands; no hazard seen proves nothing
                report["tools"][tool] = f"timed out after {timeout:.0f} s"
                continue
            if not cut and proc.returncode not in (0, ERROR_EXIT) and not mine:
                report["tools"][tool] = f"the call failed under {tool} (exit {proc.returncode}): " + \
                    " | ".join(text.strip().splitlines()[-3:])[:300]
                continue
            report["tools"][tool] = "errors" if mine else "clean"
            for f in mine[:3]:
                where = f" (in {f.kernel})" if f.kernel else ""
                late = f", before it was stopped at {timeout:.0f} s" if cut else ""
                report["findings"].append((f.flag, f"{tool}: {f.line}{where}{late}"))
    return report


def _run_tool(cmd: list[str], cwd: str, env: dict, timeout: float):
    """The tool's finished process, or, stopped at `timeout`, the text it printed before. The
    tool and the Python process it watches are one process group, stopped together: killing
    the tool alone (subprocess.run's timeout) left the watched call running on the GPU after
    the GPU lock was let go."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:  # the pipes close with the group; a process that left it could hold them open
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired as exc:
            out, err = exc.stdout, exc.stderr
        return _text(out) + "\n" + _text(err)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _text(out) -> str:
    """A stopped process's partial output (bytes or text, None when it printed nothing)."""
    if out is None:
        return ""
    return out.decode(errors="replace") if isinstance(out, bytes) else out


def _counted_races(text: str, found: list[Finding]) -> list[Finding]:
    """racecheck's own count when no error line of its report was placed in the candidate's
    kernels: the calibration's in-place Hillis-Steele scan read "clean" with "RACECHECK SUMMARY:
    20 hazards displayed (315728 errors, 524416 warnings)" (session_2026-11-30e): the 20 lines
    shown were in a wording the parser did not read (perhaps all warnings, shown first).
    racecheck instruments only the kernels named by `--kernel-name` (the candidate's own,
    `command`), so every error it counts is in them; the caller does not ask when a line
    names another kernel. Warnings (hazards racecheck is not sure of) do not count."""
    m = _RACE_ERRORS.search(text)
    if not m or int(m.group(1)) == 0:
        return []
    line = found[0].line if found else ""
    return [Finding("racecheck", "", f"{m.group(1)} race errors counted in the candidate's own kernels"
                    + (f" (first: {line})" if line else ""))]


_SUMMARY = re.compile(r"^=+\s+((?:ERROR|RACECHECK|LEAK) SUMMARY:.*)$")


def _summary(text: str) -> str:
    """The tool's own count line(s) ("ERROR SUMMARY: 0 errors", "RACECHECK SUMMARY: 3 hazards
    displayed (2 errors, 1 warnings)"): a verdict whose race went unseen says what racecheck counted."""
    return "; ".join(m.group(1).strip() for m in map(_SUMMARY.match, text.splitlines()) if m)[:300]


def unfinished(report: dict) -> dict[str, str]:
    """{tool: why} for each tool of a `sanitize` report that did not check the call (not
    found, timed out, the call failed under it): a strict verdict names them
    (`sanitizer_incomplete`), so a candidate slow or broken under instrumentation does not
    pass as checked."""
    return {tool: state for tool, state in report["tools"].items() if state not in ("clean", "errors")}


def _call(spec_path: str) -> None:
    """The process compute-sanitizer watches: the task's reference module for the inputs
    and init arguments, the candidate's ModelNew, one call, a device synchronise."""
    import importlib.util

    import torch

    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    task = type(sys)("kernelmill_sanitize_task")
    exec(compile(spec["task_code"], "<task>", "exec"), task.__dict__)  # noqa: S102 - the task is trusted code
    for key, value in (spec.get("sizes") or {}).items():
        setattr(task, key, value)
    build = spec.get("build")
    if build:  # the candidate's load_inline calls find what its build phase made (the run's builder)
        from ..build.inline_build import install

        install(build["cache"], merge=build.get("merge"), slim=build.get("slim"))
    loader = importlib.util.spec_from_file_location("candidate", spec["candidate"])
    cand = importlib.util.module_from_spec(loader)
    sys.modules["candidate"] = cand
    loader.loader.exec_module(cand)
    torch.manual_seed(int(spec.get("weight_seed", 0)))
    init = task.get_init_inputs() if hasattr(task, "get_init_inputs") else []
    device = torch.device(spec.get("device", "cuda"))
    model = cand.ModelNew(*init).to(device)
    torch.manual_seed(int(spec.get("input_seed", 0)))
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    with torch.no_grad():
        out = model(*inputs)
    if device.type == "cuda":
        torch.cuda.synchronize()
    if spec.get("echo"):  # the tests' check that the call ran (nothing is compared here)
        print(f"called: {type(out).__name__} {tuple(getattr(out, 'shape', ()))}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--call":
        _call(sys.argv[2])
    else:
        sys.exit("usage: python -m kernelmill.verify.measure.sanitizer --call SPEC.json")
