"""The calibration table (issue 42): which check catches which plausible wrong kernel, and
which honest control a check flags by mistake, by op family, language and bug style.

Checks, each on every kernel of the suite (`suite.all_kernels()`) meant for the device:
- ``kb_allclose``: KernelBench's own rule, written here with nothing of kernelmill's checks:
  5 trials of the task's `get_inputs()` (seeds 0-4), ``torch.allclose(atol=rtol=1e-2)``, in
  worker processes of this script (extensions are built through kernelmill's cached
  builder when it is there, torch's ``load_inline`` otherwise: the same module either way);
- ``kernelmill``: `verify` with its defaults (guards standard: trials over several input
  distributions, float32 tolerance 1e-4, the guards' flags);
- ``kernelmill_fp64``: the same with the float64 error budget (``--fp64-k 8``);
- ``strict_fp64``: and ``--guards strict`` (structure-aware trials: a wide dynamic range,
  all non-negative).

    python benchmarks/calibration/run.py --device cpu --out /tmp/cal      # torch, C++, Triton (interpreter)
    python benchmarks/calibration/run.py --device cuda --out $OUT/cal --gpus 0,1,2,3   # everything

Writes ``calibration_<device>.json`` (every row, every verdict's message) and
``calibration_<device>.md`` (the tables) to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import families as F  # noqa: E402
import suite  # noqa: E402

from kernelmill.records import HARNESS_VERSION  # noqa: E402

CHECKS = ("kb_allclose", "kernelmill", "kernelmill_fp64", "strict_fp64")
PARTIAL_EVERY_S = 5.0  # the partial file is written at most this often, as verdicts land
KM_CHECKS = {"kernelmill": {}, "kernelmill_fp64": {"fp64_k": None}, "strict_fp64": {"fp64_k": None, "guards": "strict"}}


# ---------------------------------------------------------------- KernelBench's rule
def kb_worker() -> int:
    """``run.py --kb-worker``: read [{id, task, code}] as JSON on stdin, print one JSON line
    per kernel ({id, passed, why}); exits after a CUDA error (its context is then unusable)."""
    items = json.loads(sys.stdin.read())
    device = os.environ["CAL_DEVICE"]
    cache = os.environ.get("CAL_BUILD_CACHE")
    if cache:
        try:
            from kernelmill.verify.build.inline_build import install
            install(cache)
        except Exception as exc:  # noqa: BLE001 - torch's own load_inline then builds
            print(f"kb worker: torch's load_inline ({exc})", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="cal-kb-src-") as src:
        return _kb_items(items, device, Path(src))


def _kb_items(items: list, device: str, src_dir: Path) -> int:
    """KernelBench's rule on each item in turn, their sources written under `src_dir`."""
    import torch

    for n, it in enumerate(items):
        passed, why = True, "5 trials within atol=rtol=1e-2"
        try:
            # each source from a file of its own, as KernelBench loads a candidate: Triton's @jit
            # reads its function's source back (exec of a string: "@jit functions should be
            # defined in a Python file", every Triton kernel on the GPU, session_2026-11-30c)
            ns_t, ns_k = _module(src_dir / f"task_{n}.py", it["task"]), _module(src_dir / f"cand_{n}.py", it["code"])
            ref, cand = ns_t["Model"]().to(device), ns_k["ModelNew"]().to(device)
            with torch.no_grad():
                for seed in range(5):
                    torch.manual_seed(seed)
                    inputs = [x.to(device) for x in ns_t["get_inputs"]()]
                    r, c = ref(*[x.clone() for x in inputs]), cand(*[x.clone() for x in inputs])
                    if not isinstance(c, torch.Tensor) or c.shape != r.shape:
                        passed, why = False, f"seed {seed}: output shape {getattr(c, 'shape', type(c))} != {r.shape}"
                        break
                    if not torch.allclose(c.float(), r.float(), atol=1e-2, rtol=1e-2):
                        err = (c.float() - r.float()).abs()
                        passed, why = False, f"seed {seed}: allclose fails (max abs err {float(err.nan_to_num(float('inf')).max()):.3g})"
                        break
        except Exception as exc:  # noqa: BLE001 - an exception is a failed check
            passed, why = False, f"error: {type(exc).__name__}: {str(exc)[:200]}"
            if device == "cuda" and ("CUDA" in str(exc) or "cuda" in type(exc).__name__.lower()):
                print(json.dumps({"id": it["id"], "passed": passed, "why": why}), flush=True)
                return 3
        print(json.dumps({"id": it["id"], "passed": passed, "why": why}), flush=True)
    return 0


def _module(path: Path, code: str) -> dict:
    """`code` run as the module `path` (written first): its namespace."""
    import importlib.util

    path.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod  # dataclasses and pickling look a class's module up here
    spec.loader.exec_module(mod)
    return vars(mod)


def kb_allclose(kernels: list, device: str, jobs: int, gpus: list[int] | None, build_cache: str | None) -> dict:
    """{kernel_id: (passed, why)} from `jobs` worker processes (restarted after a crash)."""
    pending = [{"id": k.kernel_id, "task": F.task_code(k.task), "code": k.code} for k in kernels]
    chunks = [pending[i::jobs] for i in range(jobs)]
    results: dict[str, tuple[bool, str]] = {}
    with tempfile.TemporaryDirectory(prefix="cal-kb-") as tmp:
        procs = []

        def start(i: int, items: list):
            env = dict(os.environ, CAL_DEVICE=device, TORCH_EXTENSIONS_DIR=str(Path(tmp) / f"ext{i}"),
                       MAX_JOBS=os.environ.get("MAX_JOBS", "4"))
            if build_cache:
                env["CAL_BUILD_CACHE"] = build_cache
            if device == "cpu":
                env["TRITON_INTERPRET"] = "1"
            elif gpus:
                env["CUDA_VISIBLE_DEVICES"] = str(gpus[i % len(gpus)])
            p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--kb-worker"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
            p.stdin.write(json.dumps(items))
            p.stdin.close()
            return p

        for i, items in enumerate(chunks):
            if items:
                procs.append((i, items, start(i, items)))
        while procs:
            i, items, p = procs.pop(0)
            for line in p.stdout:
                if line.startswith("{"):
                    d = json.loads(line)
                    results[d["id"]] = (d["passed"], d["why"])
            p.wait()
            rest = [it for it in items if it["id"] not in results]
            if rest:  # the worker died (or stopped after a CUDA error) on rest[0]
                results[rest[0]["id"]] = (False, f"error: the KernelBench worker died (exit {p.returncode})")
                if rest[1:]:
                    procs.append((i, rest[1:], start(i, rest[1:])))
    return results


# ---------------------------------------------------------------- kernelmill's checks
def caught_by(status: str, flags: list, message: str) -> str:
    """What decided a verdict that is not ok: a guard flag, the float64 budget, or the
    distribution of the trial that failed."""
    if status == "ok":
        return ""
    real = [f for f in flags if f not in ("weak_task", "timing_skipped")]
    if real:
        return f"flag:{real[0]}"
    if "float64 error budget" in message:
        return "fp64_budget"
    m = re.search(r"trial \d+/\d+ \((\w+) inputs\)", message)
    if m:
        return f"trial:{m.group(1)}"
    if "shape variant" in message:
        return "shape_variant"
    return status


def evidence(v) -> dict:
    """What a miss is explained with (session_2026-11-30d's strict misses could not be: a race
    passed with no word of whether racecheck ran): the sanitizer's state per tool, strict's
    shared-memory fill, and the verdict's wall time and sanitizer seconds (strict's cost)."""
    m, ph = v.measurement or {}, v.phases or {}
    out = {k: m[k] for k in ("sanitizer", "sanitizer_s", "sanitizer_summary", "sanitizer_unattributed", "smem_poison") if m.get(k)}
    out["seconds"] = {k: round(float(ph[k]), 2) for k in ("run_wall_s", "sanitize_s", "build_wall_s")
                      if isinstance(ph.get(k), (int, float))}
    return out


def kernelmill_checks(kernels: list, device: str, cache_dir: str, fp64_k: float, gpus, cpu_runners: int,
                      check: str, record) -> None:
    """`record(kernel id, result)` for each kernel as `verify` decides it under one check (as
    it lands: `verify_samples` returns its list only at the end, and a device call cut in the
    middle of a check kept none of it, session_2026-11-30c)."""
    from kernelmill.records import Sample, Task
    from kernelmill.verify import VerifyConfig, verify_samples

    tasks = {f"cal/{t}": Task(task_id=f"cal/{t}", code=F.task_code(t), name=t, level=1)
             for t in sorted({k.task for k in kernels})}
    samples = [Sample(k.kernel_id, f"cal/{k.task}", k.language, k.code, meta={"kind": k.kind}) for k in kernels]
    extra = {key: (fp64_k if val is None else val) for key, val in KM_CHECKS[check].items()}
    cfg = VerifyConfig(device=device, time=False, cache_dir=cache_dir, gpus=gpus, cpu_runners=cpu_runners, **extra)
    t0 = time.perf_counter()
    verify_samples(tasks, samples, cfg, on_verdict=lambda v: record(v.sample_id, {
        "passed": v.status == "ok", "status": v.status, "flags": list(v.flags),
        "caught_by": caught_by(v.status, v.flags, v.message or ""), "why": (v.message or "")[:300],
        **evidence(v)}))
    print(f"{check}: {len(samples)} kernels in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- tables
def summarise(rows: list[dict], checks: list[str]) -> dict:
    s = {"wrong": sum(r["kind"] == "wrong" for r in rows), "controls": sum(r["kind"] == "control" for r in rows)}
    for c in checks:
        s[f"{c}_caught"] = sum(r["kind"] == "wrong" and not r[c]["passed"] for r in rows)
        s[f"{c}_false_flags"] = sum(r["kind"] == "control" and not r[c]["passed"] for r in rows)
    return s


def _header(summary: dict, checks: list[str]) -> str:
    checks = [c for c in CHECKS if c in checks]
    made = f"; kernelmill {summary['harness_version']}" if summary.get("harness_version") else ""
    return (f"## Calibration on {summary['device']}: {summary['wrong']} wrong kernels, {summary['controls']} controls, "
            f"{summary['families']} op families ({summary['seconds']:.0f} s{made})\n\n"
            f"wrong kernels caught, of {summary['wrong']}: "
            + ", ".join(f"{c} {summary[c + '_caught']}" for c in checks)
            + f"  \ncontrols flagged, of {summary['controls']}: "
            + ", ".join(f"{c} {summary[c + '_false_flags']}" for c in checks))


def render(path: Path, out: Path | None) -> int:
    """The tables of a finished run, from its JSON (`--render`)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        summary, checks, rows = data["summary"], data["checks"], data["rows"]
    except (OSError, ValueError, KeyError) as exc:
        raise SystemExit(f"--render {path}: not a calibration run's JSON ({exc})")
    text = markdown(rows, checks, _header(summary, checks))
    print(text)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"calibration_{summary['device']}.md").write_text(text, encoding="utf-8")
    return 0


def markdown(rows: list[dict], checks: list[str], header: str) -> str:
    # the weakest check first, whatever order --checks named them in: "first caught by" credits
    # the first of these to catch a kernel (run as strict_fp64,kb_allclose,kernelmill, session 23's
    # table credited strict with all 72)
    checks = [c for c in CHECKS if c in checks]
    L = [header, ""]

    def grouped(key: str, title: str):
        L.extend([f"### By {title}", "", f"| {title} | wrong | " + " | ".join(f"{c} caught" for c in checks)
                  + " | controls | " + " | ".join(f"{c} false flags" for c in checks) + " |",
                  "|" + " --- |" * (3 + 2 * len(checks))])
        groups = defaultdict(list)
        for r in rows:
            groups[r[key]].append(r)
        for name in sorted(groups) + ["**all**"]:
            g = rows if name == "**all**" else groups[name]
            s = summarise(g, checks)
            L.append(f"| {name} | {s['wrong']} | " + " | ".join(str(s[f'{c}_caught']) for c in checks)
                     + f" | {s['controls']} | " + " | ".join(str(s[f'{c}_false_flags']) for c in checks) + " |")
        L.append("")

    grouped("family", "family")
    grouped("language", "language")
    wrong = [r for r in rows if r["kind"] == "wrong"]
    # by bug style: wrong kernels only
    L.extend(["### Wrong kernels by bug style", "", "| style | wrong | " + " | ".join(f"{c} caught" for c in checks) + " |",
              "|" + " --- |" * (2 + len(checks))])
    styles = defaultdict(list)
    for r in wrong:
        styles[r["style"]].append(r)
    for st in sorted(styles):
        L.append(f"| {st} | {len(styles[st])} | " + " | ".join(str(sum(not r[c]['passed'] for r in styles[st])) for c in checks) + " |")
    L.append("")
    # which check caught it: the first check (in the order above) to catch each wrong kernel,
    # and what decided kernelmill's verdicts
    first = Counter()
    for r in wrong:
        first[next((c for c in checks if not r[c]["passed"]), "missed by every check")] += 1
    L.extend(["### Which check caught it", "", f"First check (in the order {', '.join(checks)}) to catch "
              "each wrong kernel:", "", "| first caught by | wrong kernels |", "| --- | --- |"]
             + [f"| {c} | {first[c]} |" for c in [*checks, "missed by every check"] if first[c]] + [""])
    km = [c for c in checks if c != "kb_allclose"]
    if km:
        reasons = sorted({r[c]["caught_by"] for r in wrong for c in km if not r[c]["passed"]})
        L.extend(["What decided kernelmill's verdict on the wrong kernels it caught (a guard's flag, the float64 budget, "
                  "or the input distribution of the first failing trial):", "",
                  "| decided by | " + " | ".join(km) + " |", "|" + " --- |" * (1 + len(km))])
        for reason in reasons:
            L.append(f"| {reason} | " + " | ".join(str(sum(r[c]['caught_by'] == reason for r in wrong)) for c in km) + " |")
        L.append("")
    # misses and false flags
    L.extend(["### Misses (wrong kernels a check passed)", ""])
    for c in checks:
        missed = [r for r in wrong if r[c]["passed"]]
        L.append(f"- **{c}**: {len(missed)} of {len(wrong)}" + (": " + ", ".join(f"`{r['kernel']}`" for r in missed) if missed else ""))
    L.append("")
    last = checks[-1]
    for r in wrong:
        if r[last]["passed"]:
            L.append(f"- missed by {last}: `{r['kernel']}` ({r['style']}): {r['why']}")
    L.extend(["", "### False flags (honest controls a check failed)", ""])
    flagged = [(r, c) for r in rows if r["kind"] == "control" for c in checks if not r[c]["passed"]]
    L.extend([f"- `{r['kernel']}` by {c}: {r[c]['why'][:240]}" for r, c in flagged] or ["- none"])
    L.extend(["", "### Every kernel", "", "| kernel | family | kind | style | " + " | ".join(checks) + " |",
              "|" + " --- |" * (4 + len(checks))])
    for r in rows:
        cells = []
        for c in checks:
            ok = r[c]["passed"]
            tag = r[c].get("caught_by") or ""
            if r["kind"] == "wrong":
                cells.append("passes" if ok else f"**caught**{' (' + tag + ')' if tag else ''}")
            else:
                cells.append("ok" if ok else f"**false flag**{' (' + tag + ')' if tag else ''}")
        L.append(f"| {r['kernel']} | {r['family']} | {r['kind']} | {r['style']} | " + " | ".join(cells) + " |")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--out", type=Path, required=False, help="directory for calibration_<device>.json and .md")
    ap.add_argument("--fp64-k", type=float, default=8.0)
    ap.add_argument("--gpus", help="GPU indices for verify and the KernelBench workers, e.g. 0,1,2,3 (default all)")
    ap.add_argument("--checks", default=",".join(CHECKS), help="a subset of " + ",".join(CHECKS))
    ap.add_argument("--languages", default="torch,cpp,triton,cuda")
    ap.add_argument("--only", default="", help="only kernels whose id contains one of these comma-separated strings")
    ap.add_argument("--cache-dir", help="kernelmill's cache (builds are reused between runs); default: a temporary one")
    ap.add_argument("--kb-jobs", type=int, default=0, help="KernelBench worker processes (0: 2 on a CPU, 2 per GPU)")
    ap.add_argument("--cpu-runners", type=int, default=2, help="verify's candidates at once on a CPU (correctness only)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the results of OUT's calibration_<device>.partial.json (a run cut short) and "
                         "decide only what it lacks")
    ap.add_argument("--render", type=Path, metavar="JSON",
                    help="print (and with --out write) the tables of a finished run's calibration_<device>.json; "
                         "verifies nothing")
    ap.add_argument("--kb-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.kb_worker:
        return kb_worker()

    if args.render:
        return render(args.render, args.out)
    checks = [c for c in args.checks.split(",") if c]
    if any(c not in CHECKS for c in checks):
        ap.error(f"--checks: one of {', '.join(CHECKS)}")
    gpus = [int(g) for g in args.gpus.split(",")] if args.gpus else None
    langs = set(args.languages.split(","))
    only = [o for o in args.only.split(",") if o]
    kernels = [k for k in suite.all_kernels() if args.device in k.devices and k.language in langs
               and (not only or any(o in k.kernel_id for o in only))]
    if not kernels:
        ap.error("no kernels selected")
    t0 = time.perf_counter()
    tmp = tempfile.TemporaryDirectory(prefix="calibration-")
    cache_dir = args.cache_dir or tmp.name
    rows = {k.kernel_id: {"kernel": k.kernel_id, "task": k.task, "family": k.family, "language": k.language,
                          "kind": k.kind, "style": k.style, "why": k.why} for k in kernels}
    km = [c for c in checks if c != "kb_allclose"]
    seconds: dict[str, float] = {}
    part = args.out / f"calibration_{args.device}.partial.json" if args.out else None
    if args.resume:
        if part is None or not part.exists():
            ap.error(f"--resume: no {part or 'OUT/calibration_<device>.partial.json'} to resume")
        done = json.loads(part.read_text(encoding="utf-8"))
        seconds.update(done.get("seconds", {}))
        t0 -= sum(seconds.values())  # the run's time counts the cut run's phases too
        for old in done.get("rows", []):
            if old.get("kernel") in rows:
                rows[old["kernel"]].update({c: old[c] for c in CHECKS if c in old})

    def partial():  # what is done so far, in case the device's time limit ends the run
        if part is not None:
            args.out.mkdir(parents=True, exist_ok=True)
            tmp_part = part.with_suffix(".tmp")
            tmp_part.write_text(json.dumps({"seconds": seconds, "rows": list(rows.values())}, indent=1),
                                encoding="utf-8")
            tmp_part.replace(part)

    for check in km:
        todo = [k for k in kernels if check not in rows[k.kernel_id]]
        if not todo:
            continue
        clock = {"t": time.perf_counter()}

        def record(kid: str, res: dict, check: str = check, clock: dict = clock) -> None:
            rows[kid][check] = res
            if time.perf_counter() - clock["t"] > PARTIAL_EVERY_S:  # a cut run loses little
                seconds[check] = round(seconds.get(check, 0.0) + time.perf_counter() - clock["t"], 1)
                clock["t"] = time.perf_counter()
                partial()

        kernelmill_checks(todo, args.device, cache_dir, args.fp64_k, gpus, args.cpu_runners, check, record)
        seconds[check] = round(seconds.get(check, 0.0) + time.perf_counter() - clock["t"], 1)
        partial()
    if "kb_allclose" in checks and any("kb_allclose" not in r for r in rows.values()):
        t = time.perf_counter()
        n_gpu = len(gpus) if gpus else (_gpu_count() if args.device == "cuda" else 0)
        jobs = args.kb_jobs or (2 * max(1, n_gpu) if args.device == "cuda" else 2)
        todo = [k for k in kernels if "kb_allclose" not in rows[k.kernel_id]]
        for kid, (passed, why) in kb_allclose(todo, args.device, jobs, gpus, str(Path(cache_dir) / "build")).items():
            rows[kid]["kb_allclose"] = {"passed": passed, "why": why, "caught_by": "" if passed else "allclose"}
        seconds["kb_allclose"] = round(time.perf_counter() - t, 1)
    partial()
    table = list(rows.values())
    summary = {"device": args.device, "harness_version": HARNESS_VERSION, "seconds": round(time.perf_counter() - t0, 1), "phase_seconds": seconds,
               "families": len({r["family"] for r in table}), "fp64_k": args.fp64_k,
               "by_language": dict(Counter(f"{r['language']}/{r['kind']}" for r in table)), **summarise(table, checks)}
    header = _header(summary, checks)
    text = markdown(table, checks, header)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"calibration_{args.device}.md").write_text(text, encoding="utf-8")
        (args.out / f"calibration_{args.device}.json").write_text(
            json.dumps({"summary": summary, "checks": checks, "rows": table}, indent=1), encoding="utf-8")
        (args.out / f"calibration_{args.device}.partial.json").unlink(missing_ok=True)
    tmp.cleanup()
    return 0


def _gpu_count() -> int:
    try:
        import torch
        return torch.cuda.device_count()
    except Exception:  # noqa: BLE001
        return 1


if __name__ == "__main__":
    sys.exit(main())
