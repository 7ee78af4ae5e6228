"""Rolled-PTX on external-style CUDA (issue 44 item 1): the issue's table, tuning and held-out apart.

The set is benchmarks/ptx_external/ (manifest.json names each file's origin, style and
split; the held-out files were chosen by a seeded hash rule before any tuning, see
make_manifest.py): `cudal1/` holds the device code of CUDA-L1's LLM-written `load_inline`
kernels (extract_cudal1.py), `hand/` kernels written for this benchmark the way people and
LLMs write them (warp shuffles, register-blocked GEMM, partial unrolls, WMMA/mma fragments,
pipelined loads, ...).

Each file is compiled alone with nvcc -O3 -ptx for one arch (flags named in a `// nvcc
flags:` line of the file are added); the PTX is cached by a hash of nvcc's version, the flags
and the source in --cache. Per kernel entry (debug info stripped, the entry and the .funcs it
calls) the plain PTX is rerolled through kernelmill.ptx.batch.reroll_texts, the function
`kernelmill ptx stats` calls, with the default RerollConfig, and the round trip is checked on
text: expand_text(rolled) == plain.

Rows of the table (per split): mean token reduction over all kernels; share of kernels with
no reduction (rolled length == plain length); mean on kernels whose CUDA source has a loop
(`for`, `while` or `do` in the kernel or the helpers it calls); mean on LLM-written kernels
(CUDA-L1) with unrolled loops (benchmarks/ptx_public_reroll.py's source rule: a `#pragma
unroll` other than 1, or a `for` over compile-time constant bounds); the same on every
kernel with unrolled loops; kernels of >= 10k plain tokens; lossless round trips. Speed
(MB of plain PTX per wall second of the reroll call, parse + reroll + check + print) is
printed with the machine's load average before and after.

    python benchmarks/ptx_external.py --split tuning            # while tuning: held-out not computed
    python benchmarks/ptx_external.py --json out.json           # both parts, reported apart
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ptx_public_reroll import classify, constant_names, for_headers, kernel_text  # noqa: E402

from kernelmill.ptx import (CompileFailed, NvccOptions, RerollConfig, count_tokens, expand_text,  # noqa: E402
                            fmt_module, nvcc_ptx, parse_module, split_kernels, strip_debug)
from kernelmill.ptx.batch import reroll_texts  # noqa: E402
from kernelmill.ptx.nvcc import bare_name, demangle_full, find_nvcc  # noqa: E402

ROOT = Path(__file__).resolve().parent / "ptx_external"
_FLAGS = re.compile(r"^//\s*nvcc flags:\s*(.*)$", re.M)
BIG = 10_000


def nvcc_version() -> str:
    return subprocess.run([find_nvcc(), "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]


def compile_cached(src: str, arch: str, cache: Path, version: str) -> str:
    """PTX of one source; raises CompileFailed. Cached by (nvcc version, flags, source)."""
    m = _FLAGS.search(src)
    opts = NvccOptions(arch=arch, extra=tuple(m.group(1).split()) if m else ())
    key = hashlib.sha256("\0".join([version, *opts.flags(), src]).encode()).hexdigest()[:24]
    hit = cache / f"{key}.ptx"
    if hit.exists():
        return hit.read_text()
    ptx = nvcc_ptx(src, opts)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = hit.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(ptx)
    tmp.replace(hit)  # atomic: a concurrent run never reads half a file
    return ptx


def has_loop(text: str) -> bool:
    return bool(for_headers(text)) or re.search(r"\bwhile\s*\(|\bdo\s*\{", text) is not None


def kernels_of(entry: dict, arch: str, cache: Path, version: str) -> list[dict]:
    """One row per kernel entry of a file: its plain PTX and what its source says."""
    path = ROOT / entry["file"]
    src = path.read_text()
    kernels = split_kernels(strip_debug(parse_module(compile_cached(src, arch, cache, version), str(path))))
    names = demangle_full(list(kernels))
    rows = []
    for e, mod in kernels.items():
        text, attribution = kernel_text(src, bare_name(names[e]))
        unrolled, why = classify(text, constant_names(src, text if attribution == "kernel" else None))
        rows.append({"file": entry["file"], "split": entry["split"], "llm_written": entry["llm_written"],
                     "kernel": names[e], "plain": fmt_module(mod), "unrolled": unrolled, "unrolled_reason": why,
                     "has_loop": has_loop(text), "attribution": attribution})
    return rows


def measure(rows: list[dict], cfg: RerollConfig, jobs: int) -> dict:
    """Reroll every row's PTX in one reroll_texts call (as `ptx stats` does); fill in the figures."""
    load0 = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    done = reroll_texts([(r["plain"], r["kernel"]) for r in rows], cfg, jobs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    load1 = os.getloadavg()
    for r, d in zip(rows, done):
        a, b = count_tokens(r["plain"]), count_tokens(d.text)
        r.update(tokens=a, rolled=b, reduction=1 - b / a, loops=d.stats.loops, bytes=len(r["plain"].encode()),
                 roundtrip_ok=d.stats.failed == 0 and expand_text(d.text) == r["plain"])
        r["rolled_text"] = d.text
    mb = sum(r["bytes"] for r in rows) / 1e6
    return {"mb": round(mb, 4), "wall_s": round(wall, 2), "mb_per_s": round(mb / wall, 4), "jobs": jobs,
            "main_process_cpu_s": round(cpu, 2), "loadavg_before": load0, "loadavg_after": load1}


def _mean(sel: list[dict]) -> dict:
    if not sel:
        return {"n": 0}
    red = [r["reduction"] for r in sel]
    return {"n": len(sel), "mean": round(statistics.mean(red), 4), "median": round(statistics.median(red), 4)}


def summary(rows: list[dict]) -> dict:
    return {
        "all kernels": _mean(rows),
        "no reduction (share)": {"n": sum(r["rolled"] >= r["tokens"] for r in rows), "of": len(rows)},
        "kernels with a loop": _mean([r for r in rows if r["has_loop"]]),
        "LLM-written with unrolled loops": _mean([r for r in rows if r["llm_written"] and r["unrolled"]]),
        "any origin with unrolled loops": _mean([r for r in rows if r["unrolled"]]),
        f"kernels >= {BIG // 1000}k tokens": _mean([r for r in rows if r["tokens"] >= BIG]),
        "lossless round trips": {"n": sum(r["roundtrip_ok"] for r in rows), "of": len(rows)},
    }


def fmt_cell(v: dict) -> str:
    if "of" in v:
        return f"{v['n']}/{v['of']}" + (f" ({100 * v['n'] / v['of']:.0f}%)" if v["of"] else "")
    return "-" if not v["n"] else f"{100 * v['mean']:.1f}% ({v['n']})"


def print_table(sums: dict[str, dict]) -> None:
    parts = list(sums)
    print("| measure | " + " | ".join(parts) + " |")
    print("|---|" + "---|" * len(parts))
    for key in next(iter(sums.values())):
        print(f"| {key} | " + " | ".join(fmt_cell(sums[p][key]) for p in parts) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("tuning", "heldout", "all"), default="all",
                    help="which part to compile and measure (tune with 'tuning' only)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/kernelmill-ptx-external"),
                    help="folder for PTX cached by content hash")
    ap.add_argument("--jobs", type=int, default=1, help="reroll worker processes (as `ptx stats --jobs`)")
    ap.add_argument("--json", type=Path, help="write per-kernel rows, summaries, speed and load here")
    ap.add_argument("--per-kernel", action="store_true", help="print one line per kernel")
    args = ap.parse_args()
    manifest = json.loads((ROOT / "manifest.json").read_text())
    entries = [f for f in manifest["files"] if args.split in ("all", f["split"])]
    version, rows, skipped = nvcc_version(), [], []
    for e in entries:
        try:
            rows += kernels_of(e, args.arch, args.cache, version)
        except CompileFailed as exc:
            msg = next((ln.strip() for ln in (exc.stderr or str(exc)).splitlines() if "error" in ln), str(exc)[:200])
            skipped.append({"file": e["file"], "split": e["split"], "reason": re.sub(r"^\S*kernel\.cu", "<file>", msg)})
    speed = measure(rows, RerollConfig(), args.jobs)
    parts = [p for p in ("tuning", "heldout") if any(r["split"] == p for r in rows)]
    sums = {p: summary([r for r in rows if r["split"] == p]) for p in parts}
    print(f"{len(entries)} files ({len(skipped)} skipped: nvcc failed), {len(rows)} kernels; {version}; {args.arch}")
    for s in skipped:
        print(f"  skipped {s['file']}: {s['reason'][:160]}")
    print_table(sums)
    if args.per_kernel:
        for r in sorted(rows, key=lambda r: (r["split"], r["file"])):
            print(f"  {r['split']:7} {r['file']:34} {r['kernel'][:60]:60} {r['tokens']:6} -> {r['rolled']:6} "
                  f"{100 * r['reduction']:5.1f}% loop={int(r['has_loop'])} unr={int(r['unrolled'])}")
    print(f"reroll (reroll_texts, jobs={args.jobs}): {speed['mb']:.3f} MB in {speed['wall_s']:.1f} s wall "
          f"= {speed['mb_per_s']:.3f} MB/s; load average before {speed['loadavg_before'][0]:.2f}, "
          f"after {speed['loadavg_after'][0]:.2f} (1 min; {os.cpu_count()} CPUs)")
    if args.json:
        keep = ("file", "split", "llm_written", "kernel", "tokens", "rolled", "reduction", "loops", "unrolled",
                "unrolled_reason", "has_loop", "attribution", "roundtrip_ok", "bytes")
        out = {"arch": args.arch, "nvcc": version, "config": "RerollConfig()", "split_rule": manifest["rule"],
               "seed": manifest["seed"], "speed": speed, "summary": sums, "skipped": skipped,
               "kernels": [{k: round(r[k], 4) if isinstance(r[k], float) else r[k] for k in keep} for r in rows]}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
