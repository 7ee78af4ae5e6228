"""Reroll and parse throughput in MB/s of input PTX, in process and through the CLI (issue 44).

Corpus: the CUDA this repository measures Rolled-PTX on, compiled with nvcc -O3 for sm_90
(unrolling on), one PTX file per compile unit, as nvcc wrote it (the CLI's input):
benchmarks/ptx_lengths.py's six generated families and the builtin suite's `cuda__ok.py`
candidates, and benchmarks/ptx_heldout/*/*.cu. `--big` adds the ~2 MB file of
benchmarks/ptx_parse_speed.py (one unit of large unrolled kernels). The files are cached in
--cache, so later runs measure the same bytes.

Measured, each over the whole corpus:
- parse: `parse_module` on each file, best of --repeat, MB/s of input;
- reroll: `reroll_text` (parse, reroll, the round-trip check, print) on each file in this
  process, one core, wall and CPU seconds;
- CLI: `kernelmill ptx stats FILES` as a user runs it (a fresh process: imports, reading,
  the rerolls, token counts, the table), wall seconds, for each --jobs value given
  (none given: the command's default).

Every figure is input bytes over seconds. The 1- and 5-minute load averages are printed before
and after, since the machine may be shared.

    python benchmarks/ptx_reroll_speed.py [--cache DIR] [--big] [--jobs 1 --jobs 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from kernelmill.ptx import NvccOptions, RerollStats, nvcc_ptx, parse_module, reroll_text

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))


def units() -> dict[str, str]:
    """unit name -> CUDA source."""
    import ptx_lengths
    out = {f"own_{k}": v for k, v in ptx_lengths.corpus().items()}
    for k, v in ptx_lengths.builtin_sources().items():
        out[k.replace(":", "_")] = v
    for f in sorted((BENCH / "ptx_heldout").glob("*/*.cu")):
        out[f"heldout_{f.parent.name}_{f.stem}"] = f.read_text()
    return out


def build(cache: Path, big: bool) -> list[Path]:
    cache.mkdir(parents=True, exist_ok=True)
    files = []
    for name, src in units().items():
        f = cache / f"{name}.ptx"
        if not f.exists():
            f.write_text(nvcc_ptx(src, NvccOptions(arch="sm_90", opt=3, unroll=True)))
        files.append(f)
    if big:
        import ptx_parse_speed
        files.append(ptx_parse_speed.make(cache, 2.0, lineinfo=False))
    return files


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/kernelmill-ptx-reroll-speed"))
    ap.add_argument("--big", action="store_true", help="add the ~2 MB unit of ptx_parse_speed.py")
    ap.add_argument("--repeat", type=int, default=3, help="parse: best of this many")
    ap.add_argument("--jobs", type=int, action="append", default=[],
                    help="CLI runs with `--jobs N` (repeatable); none: one run with the default")
    ap.add_argument("--no-inprocess", action="store_true", help="skip the in-process reroll (CLI only)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    files = build(args.cache, args.big)
    texts = [f.read_text() for f in files]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    result: dict = {"files": len(files), "mb": round(mb, 3), "cpus": os.cpu_count(), "load_before": load()}
    print(f"corpus: {len(files)} PTX files, {mb:.3f} MB (largest {max(len(t) for t in texts) / 1e6:.3f} MB); "
          f"{result['load_before']}")

    best, best_cpu = float("inf"), float("inf")
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        for t, f in zip(texts, files):
            parse_module(t, str(f))
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    result["parse"] = {"seconds": round(best, 3), "mb_per_s": round(mb / best, 2),
                       "cpu_s": round(best_cpu, 3), "mb_per_cpu_s": round(mb / best_cpu, 2)}
    print(f"parse: {best:.2f} s, {mb / best:.2f} MB/s wall; {best_cpu:.2f} s CPU, {mb / best_cpu:.2f} MB per CPU "
          f"second (best of {args.repeat})")

    if not args.no_inprocess:
        st = RerollStats()
        w0, c0 = time.perf_counter(), time.process_time()
        for t, f in zip(texts, files):
            reroll_text(t, str(f), stats=st)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        result["reroll_inprocess"] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                                      "mb_per_s_wall": round(mb / wall, 3), "mb_per_s_cpu": round(mb / cpu, 3),
                                      "functions": st.functions, "checked": st.checked, "failed": st.failed,
                                      "loops": st.loops}
        print(f"reroll in process (1 core): {wall:.2f} s wall, {cpu:.2f} s CPU: {mb / wall:.3f} MB/s wall, "
              f"{mb / cpu:.3f} MB/s CPU; {st.functions} functions, round trip {st.checked} checked, "
              f"{st.failed} failed, {st.loops} loops")

    result["cli"] = []
    for jobs in args.jobs or [None]:
        cmd = [sys.executable, "-m", "kernelmill", "ptx", "stats", *map(str, files)]
        if jobs is not None:
            cmd += ["--jobs", str(jobs)]
        t0, c0 = time.perf_counter(), _children_cpu()
        r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
        wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd[:6])} ... failed ({r.returncode}):\n{r.stderr[-2000:]}")
        total = next((ln for ln in r.stdout.splitlines() if "total" in ln), "").strip()
        last = r.stdout.strip().splitlines()[-1]
        result["cli"].append({"jobs": jobs, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                              "mb_per_s": round(mb / wall, 3), "mb_per_cpu_s": round(mb / cpu, 3),
                              "total_row": total, "cli_says": last})
        print(f"CLI `kernelmill ptx stats` ({len(files)} files{'' if jobs is None else f', --jobs {jobs}'}): "
              f"{wall:.2f} s wall, {mb / wall:.3f} MB/s; {cpu:.2f} s CPU (all its processes), "
              f"{mb / cpu:.3f} MB per CPU second\n  {total}\n  {last}")
    result["load_after"] = load()
    print(result["load_after"])
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
