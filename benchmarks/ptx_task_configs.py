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

    python benchmarks/ptx_task_configs.py [--nvcc] [--json out.json] [--traces traces.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kernelmill.ptx.evaluate.config import ConfigError, pair_config
from kernelmill.ptx.evaluate.harness import Builder, harness_source
from kernelmill.ptx.evaluate.task_configs import attach_configs, trace_candidate
from kernelmill.ptx.pairs import PairConfig, build_pairs
from kernelmill.records import Pair, iter_jsonl

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
    return {"pairs": len(ok), "configured": sum(v == "ok" for v in verdicts), "reasons": dict(reasons.most_common()),
            "per_pair": [{"pair": p.pair_id, "kernel": p.kernel_name, "origin": p.origin, "status": v}
                         for p, v in zip(ok, verdicts)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=Path, default=L1)
    ap.add_argument("--nvcc", action="store_true", help="count a config only when its harness compiles")
    ap.add_argument("--build-dir", type=Path, default=Path("/tmp/kernelmill-task-configs-build"))
    ap.add_argument("--traces", type=Path, help="cache of trace results by row id (read and written)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = [json.loads(ln) for ln in args.rows.read_text().splitlines() if ln.strip()]
    inline = {r["id"] for r in rows if "load_inline" in r["custom_code"]}
    listed = {f.stem.rsplit("_", 1)[0] if f.stem.count("-") == 3 and "_" in f.stem else f.stem
              for f in (ROOT / "ptx_external" / "cudal1").glob("*.cu")}
    rows = {r["id"]: r for r in rows if r["id"] in inline | listed}
    builder = Builder(args.build_dir) if args.nvcc else None
    traces = json.loads(args.traces.read_text()) if args.traces and args.traces.exists() else {}
    t0 = time.perf_counter()
    for rid, r in rows.items():
        if rid not in traces:
            traces[rid] = trace_candidate(r["custom_code"], r["ref_code"])
    trace_s = time.perf_counter() - t0
    if args.traces:
        args.traces.write_text(json.dumps(traces))
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
        before = measure(pairs, builder)
        for p in pairs:
            rid = Path(p.origin.split("#")[0]).stem
            rid = rid if rid in traces else rid.rsplit("_", 1)[0]
            if rid in traces:
                attach_configs([p], traces[rid])
        after = measure(pairs, builder)
        result[name] = {"before": before, "after": after}
        print(f"{name}: {before['pairs']} ok pairs; configured before {before['configured']}, "
              f"after {after['configured']} ({100 * after['configured'] / max(1, after['pairs']):.0f}%)")
        for why, n in after["reasons"].items():
            if why != "ok":
                print(f"    {n:3}  {why}")
    print(f"traces: {len(rows)} candidates in {trace_s:.0f} s; failed runs: {len(result['trace_errors'])}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
