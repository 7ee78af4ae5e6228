"""Where do kernelmill's GPU speedups on external kernels go wrong? (issue 39, a diagnosis)

For each cuda-l1 candidate named, in a fresh process each:
  * do_bench (triton.testing, L2 flush, median), alternated rounds, under two flag sets:
    `default` (torch's own: cuDNN TF32 on, as KernelBench runs) and `strict` (TF32 off, as
    kernelmill's settle_process sets);
  * kernelmill's timing.compare with both sides in this process (strict flags), with and
    without the launch cover spin, and with the guarded run's refill between calls;
  * torch.profiler kernel time per call (CUPTI activity records), both sides, both flag sets.
Then `kernelmill verify` on the same set (default settings, and --guards off), and one table.

    python benchmarks/diag/speedup_errors.py --ids cudal1-a100-L2-12,... --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "external" / "cuda-l1" / "kernels.jsonl"


def _load(code: str, name: str):
    import types

    mod = types.ModuleType(name)
    mod.__file__ = f"<{name}>"
    sys.modules[name] = mod
    exec(compile(code, f"<{name}>", "exec"), mod.__dict__)
    return mod


def _prof_ms(fn, flush, n=20):
    """GPU kernel time per call from CUPTI activity records, the flush's kernels left out."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(n):
            flush.zero_()
            with record_function("km_call"):
                fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    flush_names = {"zero", "fill"}
    tot = 0.0
    names: dict[str, float] = {}
    for e in evs:
        nm = e.name
        if any(k in nm.lower() for k in flush_names) and "FillFunctor" in nm and e.device_time_total > 20:
            continue  # the 100 MB flush (a big fill kernel)
        if nm == "km_call":
            continue
        tot += e.device_time_total
        names[nm[:60]] = names.get(nm[:60], 0) + e.device_time_total
    return tot / n / 1e3, {k: round(v / n, 2) for k, v in sorted(names.items(), key=lambda kv: -kv[1])[:6]}


def one(row: dict) -> dict:
    import torch
    from triton.testing import do_bench

    out: dict = {"id": row["id"]}
    ref_mod = _load(row["ref_code"], "ref_task")
    cand_mod = _load(row["custom_code"], "cand_task")
    flush = torch.empty(int(2 * torch.cuda.get_device_properties(0).L2_cache_size) // 4, dtype=torch.int32, device="cuda")
    for mode in ("default", "strict"):
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = mode == "default"
        torch.backends.cudnn.benchmark = False
        torch.manual_seed(42)
        init = ref_mod.get_init_inputs()
        torch.manual_seed(42)
        ref = ref_mod.Model(*init).cuda()
        torch.manual_seed(42)
        try:
            cand = cand_mod.ModelNew(*init).cuda()
        except Exception as exc:  # noqa: BLE001
            out[mode] = {"error": f"ModelNew: {exc!r}"[:300]}
            continue
        torch.manual_seed(1234)
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ref_mod.get_inputs()]
        res: dict = {"cudnn_benchmark_after_init": torch.backends.cudnn.benchmark}
        with torch.no_grad():
            try:
                a, b = ref(*inputs), cand(*inputs)
                res["max_err"] = float((a.float() - b.float()).abs().max())
            except Exception as exc:  # noqa: BLE001
                res["error"] = f"call: {exc!r}"[:300]
                out[mode] = res
                continue
            r_t, c_t = [], []
            for _ in range(5):
                r_t.append(do_bench(lambda: ref(*inputs), warmup=25, rep=100, return_mode="median"))
                c_t.append(do_bench(lambda: cand(*inputs), warmup=25, rep=100, return_mode="median"))
            res["dobench"] = {"ref_ms": statistics.median(r_t), "cand_ms": statistics.median(c_t),
                              "speedup": statistics.median([r / c for r, c in zip(r_t, c_t)])}
            res["profiler"] = {}
            for side, m in (("ref", ref), ("cand", cand)):
                ms, names = _prof_ms(lambda: m(*inputs), flush)
                res["profiler"][side + "_ms"] = ms
                res["profiler"][side + "_kernels"] = names
            if mode == "strict":
                sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
                from kernelmill.verify.timing import Bench, TimingConfig, compare

                for label, cfg, refill in (("km_inproc", TimingConfig(), False),
                                           ("km_inproc_nospin", TimingConfig(launch_cover_us=0), False),
                                           ("km_inproc_refill", TimingConfig(), True)):
                    ref_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
                    src = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]

                    def prep(i, ref_in=ref_in, src=src):
                        for d, s in zip(ref_in, src):
                            if isinstance(d, torch.Tensor):
                                d.copy_(s)
                                if d.is_floating_point():
                                    d.mul_(1.0 + 0.01 * (i % 7))
                    comp = compare(Bench(lambda: ref(*ref_in), "cuda", cfg, prepare=prep if refill else None),
                                   Bench(lambda: cand(*ref_in), "cuda", cfg, prepare=prep if refill else None), cfg)
                    res[label] = {"ref_ms": comp.reference.median_ms, "cand_ms": comp.candidate.median_ms,
                                  "speedup": comp.speedup, "ci": comp.speedup_ci}
        out[mode] = res
        del ref, cand
        torch.cuda.empty_cache()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ids", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--one")
    ap.add_argument("--skip-verify", action="store_true")
    args = ap.parse_args()
    rows = {json.loads(line)["id"]: json.loads(line) for line in open(os.environ.get("CUDA_L1", CORPUS))}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.one:
        (out / f"one_{args.one}.json").write_text(json.dumps(one(rows[args.one]), indent=1))
        return 0
    ids = args.ids.split(",")
    for i in ids:
        t0 = time.time()
        p = subprocess.run([sys.executable, __file__, "--ids", i, "--out", str(out), "--one", i],
                           capture_output=True, text=True, timeout=300)
        print(f"{i}: exit {p.returncode} in {time.time() - t0:.0f}s {p.stderr[-400:] if p.returncode else ''}", flush=True)
    if not args.skip_verify:
        with tempfile.TemporaryDirectory() as tmp:
            tasks, samples = Path(tmp) / "tasks.jsonl", Path(tmp) / "samples.jsonl"
            with open(tasks, "w") as ft, open(samples, "w") as fs:
                for i in ids:
                    r = rows[i]
                    ft.write(json.dumps({"task_id": i, "code": r["ref_code"], "level": r["level"]}) + "\n")
                    lang = "cuda" if "load_inline" in r["custom_code"] else "torch"
                    fs.write(json.dumps({"sample_id": i, "task_id": i, "language": lang, "code": r["custom_code"]}) + "\n")
            for label, extra in (("km_default", []), ("km_guards_off", ["--guards", "off"])):
                t0 = time.time()
                cmd = [sys.executable, "-m", "kernelmill", "verify", str(tasks), str(samples), "-o",
                       str(out / f"{label}.jsonl"), "--device", "cuda", "--store", str(Path(tmp) / f"{label}.db"), *extra]
                p = subprocess.run(cmd, capture_output=True, text=True)
                print(f"{label}: exit {p.returncode} in {time.time() - t0:.0f}s", p.stderr[-1500:] if p.returncode else "",
                      flush=True)
    table(out, ids)
    return 0


def table(out: Path, ids: list[str]) -> None:
    def km(label):
        p = out / f"{label}.jsonl"
        return {json.loads(line)["sample_id"]: json.loads(line) for line in p.read_text().splitlines()} if p.exists() else {}

    kd, ko = km("km_default"), km("km_guards_off")
    f = lambda x: "-" if x is None else f"{x:.4f}"  # noqa: E731
    lines = ["| id | dobench default ref/cand/sp | dobench strict ref/cand/sp | prof default ref/cand | prof strict ref/cand "
             "| km inproc ref/cand/sp | nospin | refill | km verify ref/cand/sp | guards off |", "|" + "---|" * 10]
    for i in ids:
        p = out / f"one_{i}.json"
        o = json.loads(p.read_text()) if p.exists() else {}
        d, s = o.get("default", {}), o.get("strict", {})

        def t3(x):
            return "/".join(f(x.get(k)) for k in ("ref_ms", "cand_ms", "speedup")) if x else "-"

        def v3(v):
            return "/".join(f(v.get(k)) for k in ("ref_runtime_ms", "runtime_ms", "speedup")) + f" {v.get('status')}" if v else "-"

        pr = lambda x: f"{f(x.get('ref_ms'))}/{f(x.get('cand_ms'))}" if x else "-"  # noqa: E731
        lines.append(f"| {i} | {t3(d.get('dobench'))} | {t3(s.get('dobench'))} | {pr(d.get('profiler'))} | {pr(s.get('profiler'))} "
                     f"| {t3(s.get('km_inproc'))} | {t3(s.get('km_inproc_nospin'))} | {t3(s.get('km_inproc_refill'))} "
                     f"| {v3(kd.get(i))} | {v3(ko.get(i))} |")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
