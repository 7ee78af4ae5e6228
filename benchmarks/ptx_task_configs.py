"""How many external pairs carry a launch configuration `ptx evaluate` accepts (issue 44 item 4).

Two sets: (1) the CUDA-L1 `load_inline` candidates (../shared/external/cuda-l1/kernels.jsonl,
every row whose custom_code calls load_inline), each written to a .py file and turned into pairs
by `build_pairs` as `kernelmill ptx pairs FILE.py` does; (2) benchmarks/ptx_external (the
external-style set: cudal1/*.cu, the same candidates' device code, and hand/*.cu), pairs by
`build_pairs` on the .cu files, a cudal1 file's row found by its name.

Per ok pair, "before": `pair_config` as it is (a stored config, else one derived from the
pair's own launch site). "after": the same once `task_configs.attach_configs` stored the
configs of the row's trace (the candidate run on the CPU with its KernelBench task's inputs,
torch_trace.py). With --nvcc, a config counts as accepted only when the evaluator's harness of
the pair's own source with that config compiles (harness.Builder, as `ptx evaluate` builds the
reference; nothing runs: no GPU here).

A third source of configs (session 16): launch files written beside the hand-written kernels
(`hand/NAME.launch.json`, ptx/evaluate/launch_files.py), which `build_pairs` attaches as it
writes the pairs. Stages reported per set and per folder: "own launch site" (launch-file
configs taken off), "+ task" (the traces' configs), "+ launch files" (everything).

    python benchmarks/ptx_task_configs.py [--nvcc] [--json out.json] [--traces traces.json]
                                          [--pairs-out ext_pairs.jsonl]

On a GPU machine, every configured pair of a pairs file launched once, its reference harness
with the evaluator's own inputs, under compute-sanitizer's memcheck (the launch files' bound
arguments checked; needs torch with CUDA and compute-sanitizer on PATH):

    python benchmarks/ptx_task_configs.py --sanitize ext_pairs.jsonl [--json sanitize.json]
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kernelmill.ptx.evaluate.config import ConfigError, KernelConfig, pair_config
from kernelmill.ptx.evaluate.launch_files import ORIGIN
from kernelmill.ptx.evaluate.harness import Builder, harness_source
from kernelmill.ptx.evaluate.task_configs import attach_configs, trace_candidate
from kernelmill.ptx.pairs import PairConfig, build_pairs
from kernelmill.records import Pair, append_jsonl, iter_jsonl

ROOT = Path(__file__).resolve().parent
L1 = ROOT.parent.parent / "shared" / "external" / "cuda-l1" / "kernels.jsonl"


def pairs_of(paths: list[Path], out: Path) -> list[Pair]:
    if out.exists():
        out.unlink()
    build_pairs(paths, out, PairConfig())
    return [Pair(**d) if isinstance(d, dict) else d for d in iter_jsonl(out)]


def status(pair: Pair, builder: Builder | None) -> str:
    """'ok' or why the evaluator would answer no_configuration / reference_failed."""
    try:
        cfg = pair_config(pair)
    except ConfigError as exc:
        return "no config: " + str(exc)
    if builder is None:
        return "ok"
    b = builder.build(harness_source(pair.source, cfg))
    return "ok" if b.ok else "harness does not compile: " + next(
        (ln for ln in b.error.splitlines() if "error" in ln), b.error[:200])


def measure(pairs: list[Pair], builder: Builder | None) -> dict:
    ok = [p for p in pairs if (p.meta or {}).get("status") == "ok"]
    with ThreadPoolExecutor(2) as ex:
        verdicts = list(ex.map(lambda p: status(p, builder), ok))
    reasons = collections.Counter(v.split(":")[0] + ": " + v.split(":", 2)[1].strip()[:70]
                                  if v != "ok" else v for v in verdicts)
    folders: dict[str, list[int]] = {}
    for p, v in zip(ok, verdicts):  # per folder of the source (cudal1/, hand/)
        f = folders.setdefault(Path(p.origin.split("#")[0]).parent.name, [0, 0])
        f[0] += 1
        f[1] += v == "ok"
    return {"pairs": len(ok), "configured": sum(v == "ok" for v in verdicts), "reasons": dict(reasons.most_common()),
            "folders": {k: {"pairs": a, "configured": b} for k, (a, b) in sorted(folders.items())},
            "per_pair": [{"pair": p.pair_id, "kernel": p.kernel_name, "origin": p.origin, "status": v,
                          "config_origin": ((p.meta or {}).get("config") or {}).get("origin", "")}
                         for p, v in zip(ok, verdicts)]}


def without_launch_files(pairs: list[Pair]) -> list[Pair]:
    """Copies of the pairs with the configs of launch files taken off (the stage before them)."""
    out = []
    for p in pairs:
        meta = dict(p.meta or {})
        if str((meta.get("config") or {}).get("origin", "")).startswith(ORIGIN):
            del meta["config"]
        out.append(dataclasses.replace(p, meta=meta))
    return out


# --- on a GPU: each configured pair launched once under compute-sanitizer ----------------------

def sanitize(pairs_path: Path, build_dir: Path, launch_s: float = 60.0, save=None) -> dict:
    """{pair id: 'clean' | why}: the reference harness of every configured pair, launched once
    with the evaluator's inputs (worker.make_buffers, seed 0) in a process run by
    `compute-sanitizer --tool memcheck`; after a memcheck report, a failed launch or a launch
    still running after `launch_s` seconds (`timeout`: a hang or a kernel too slow under the
    tool) the driver starts again with the next pair, so one bad launch does not hide the
    others. Each verdict is printed as it lands and `save(verdicts)` called, so a pass cut by
    its caller's time limit keeps what it found (session 24's pass printed nothing in 200 s)."""
    builder = Builder(build_dir)
    jobs = []
    for d in iter_jsonl(pairs_path):
        p = Pair(**d)
        if (p.meta or {}).get("status") != "ok":
            continue
        try:
            cfg = pair_config(p)
        except ConfigError:
            continue
        b = builder.build(harness_source(p.source, cfg))
        if b.ok:
            jobs.append({"id": p.pair_id, "so": b.so, "config": cfg.to_dict()})
    print(f"memcheck: {len(jobs)} configured launches built", flush=True)
    verdicts: dict[str, str] = {}

    def land(pid: str, why: str) -> None:
        verdicts[pid] = why
        print(f"  [{len(verdicts)}/{len(jobs)}] {pid}: {why}", flush=True)
        if save:
            save(verdicts)

    while len(verdicts) < len(jobs):
        rest = [j for j in jobs if j["id"] not in verdicts]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(rest, f)
        proc = subprocess.Popen(["compute-sanitizer", "--tool", "memcheck", "--print-limit", "20", sys.executable,
                                 __file__, "--driver", f.name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
        lines: queue.Queue = queue.Queue()

        def pump(out=proc.stdout) -> None:  # the tool's output, a line at a time, then None
            for ln in out:
                lines.put(ln)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        current, errors, tail, began, started = None, [], [], 0.0, False
        while True:
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                if current and time.monotonic() - began > launch_s:
                    os.killpg(proc.pid, signal.SIGKILL)  # the tool and the process it runs
                    proc.wait()
                    land(current, f"timeout: no end within {launch_s:.0f} s under memcheck")
                    current = None
                    break
                continue
            if line is None:
                break
            line = line.rstrip("\n")
            tail = (tail + [line])[-5:]
            if line.startswith("KM-BEGIN "):
                current, errors, began, started = line.split(" ", 1)[1], [], time.monotonic(), True
            elif line.startswith("KM-END ") and current:
                land(current, "clean" if not errors else "memcheck: " + errors[0])
                current = None
            elif current and re.match(r"=+ (Invalid|Out-of-range|Misaligned|Program hit)", line):
                errors.append(line.strip("= ").strip())
        proc.wait()
        os.unlink(f.name)
        if current:  # the driver died inside this pair's launch
            land(current, "memcheck: " + errors[0] if errors else "launch failed: " + (tail or ["?"])[-1][:200])
        elif len(verdicts) < len(jobs) and not started:
            raise RuntimeError(f"the driver started no launch: {' | '.join(tail)}")
    return verdicts


def driver(jobs_path: str) -> None:
    """Inside compute-sanitizer: launch each job's harness once, stop at the first failure."""
    import torch

    from kernelmill.ptx.evaluate.worker import Lib, make_buffers
    for job in json.loads(Path(jobs_path).read_text()):
        print("KM-BEGIN", job["id"], flush=True)
        cfg = KernelConfig.from_dict(job["config"])
        dev = [None if b is None else b.to("cuda") for b in make_buffers(cfg, 0, job["id"])]
        Lib(job["so"]).launcher(dev, torch.cuda.current_stream().cuda_stream)()
        torch.cuda.synchronize()
        print("KM-END", job["id"], flush=True)


_CODE_KEY = "_tracer_code"


def _tracer_code() -> str:
    """A fingerprint of the code whose results a trace keeps (the tracer and the host evaluator)."""
    import hashlib

    from kernelmill.cudasrc import host_eval
    from kernelmill.ptx.evaluate import task_configs

    h = hashlib.sha256()
    for mod in (host_eval, task_configs):
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=Path, default=L1)
    ap.add_argument("--nvcc", action="store_true", help="count a config only when its harness compiles")
    ap.add_argument("--build-dir", type=Path, default=Path("/tmp/kernelmill-task-configs-build"))
    ap.add_argument("--traces", type=Path, help="cache of trace results by row id (read and written)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--pairs-out", type=Path, help="write the external set's pairs, configs attached")
    ap.add_argument("--sanitize", type=Path, help="GPU: launch each configured pair of this file under memcheck")
    ap.add_argument("--launch-s", type=float, default=60.0,
                    help="--sanitize: seconds one launch may run under memcheck before it is called a timeout")
    ap.add_argument("--driver", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.driver:
        return driver(args.driver)
    if args.sanitize:
        t0 = time.perf_counter()

        def save(verdicts: dict) -> None:
            if args.json:
                clean = sum(v == "clean" for v in verdicts.values())
                args.json.write_text(json.dumps({"launches": len(verdicts), "clean": clean,
                                                 "verdicts": verdicts}, indent=1) + "\n")

        verdicts = sanitize(args.sanitize, args.build_dir, args.launch_s, save)
        bad = {k: v for k, v in verdicts.items() if v != "clean"}
        print(f"memcheck: {len(verdicts) - len(bad)} of {len(verdicts)} launches clean "
              f"({time.perf_counter() - t0:.0f} s)")
        for k, v in bad.items():
            print(f"    {k}: {v}")
        return None
    rows = [json.loads(ln) for ln in args.rows.read_text().splitlines() if ln.strip()]
    inline = {r["id"] for r in rows if "load_inline" in r["custom_code"]}
    listed = {f.stem.rsplit("_", 1)[0] if f.stem.count("-") == 3 and "_" in f.stem else f.stem
              for f in (ROOT / "ptx_external" / "cudal1").glob("*.cu")}
    rows = {r["id"]: r for r in rows if r["id"] in inline | listed}
    builder = Builder(args.build_dir) if args.nvcc else None
    traces = json.loads(args.traces.read_text()) if args.traces and args.traces.exists() else {}
    if traces and traces.get(_CODE_KEY) != _tracer_code():
        # a trace holds the launches the host evaluator found: made by other code, they would be
        # reused silently (session 24's dim3 fix changed eight cuda-l1 launches, none through a cache)
        print(f"--traces {args.traces}: made by other tracing code, traced again", file=sys.stderr)
        traces = {}
    traces[_CODE_KEY] = _tracer_code()
    t0 = time.perf_counter()
    for rid, r in rows.items():
        if rid not in traces:
            traces[rid] = trace_candidate(r["custom_code"], r["ref_code"])
    trace_s = time.perf_counter() - t0
    if args.traces:
        args.traces.write_text(json.dumps(traces))
    traces.pop(_CODE_KEY)
    result: dict = {"rows": len(rows), "load_inline_rows": len(inline), "trace_seconds": round(trace_s, 1),
                    "trace_errors": {k: v["error"] for k, v in traces.items() if v.get("error")}}
    with tempfile.TemporaryDirectory() as d:
        files = []
        for rid, r in rows.items():
            if rid not in inline:
                continue
            f = Path(d) / f"{rid}.py"
            f.write_text(r["custom_code"])
            files.append(f)
        sets = {"cuda-l1 load_inline (.py)": pairs_of(files, Path(d) / "l1.jsonl"),
                "ptx_external (.cu)": pairs_of(sorted((ROOT / "ptx_external").glob("*/*.cu")),
                                               Path(d) / "ext.jsonl")}
    for name, pairs in sets.items():
        stages = {"own launch site": without_launch_files(pairs)}
        with_task = without_launch_files(pairs)
        for p in [*with_task, *pairs]:
            rid = Path(p.origin.split("#")[0]).stem
            rid = rid if rid in traces else rid.rsplit("_", 1)[0]
            if rid in traces:
                attach_configs([p], traces[rid])
        stages["+ task"], stages["+ launch files"] = with_task, pairs
        result[name] = {k: measure(v, builder) for k, v in stages.items()}
        result[name]["before"], result[name]["after"] = result[name]["own launch site"], result[name]["+ launch files"]
        after = result[name]["after"]
        print(f"{name}: {after['pairs']} ok pairs; configured " + ", ".join(
            f"{k} {result[name][k]['configured']}" for k in stages)
              + f" ({100 * after['configured'] / max(1, after['pairs']):.0f}%)")
        for folder, f in after["folders"].items():
            print(f"    {folder}/: {f['configured']} of {f['pairs']}")
        for why, n in after["reasons"].items():
            if why != "ok":
                print(f"    {n:3}  {why}")
        if args.pairs_out and name.startswith("ptx_external"):
            args.pairs_out.unlink(missing_ok=True)
            append_jsonl(args.pairs_out, pairs)
    print(f"traces: {len(rows)} candidates in {trace_s:.0f} s; failed runs: {len(result['trace_errors'])}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
