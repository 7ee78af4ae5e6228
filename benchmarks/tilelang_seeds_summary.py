"""Summarise the TileLang seed run (benchmarks/tilelang_seeds_device.sh): one row per seed with
its verdict, speedup, times and the seconds its kernels took to compile.

    python benchmarks/tilelang_seeds_summary.py --verdicts v.jsonl --compile compile.jsonl \
        --samples seeds.jsonl --out DIR        # writes DIR/summary.json and DIR/summary.md
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def read_jsonl(path: str) -> list[dict]:
    p = Path(path)
    if not p.exists():
        return []
    out = []
    for n, line in enumerate(p.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                print(f"{path}:{n}: not JSON, skipped")
    return out


def summarise(verdicts: list[dict], compiles: list[dict], samples: list[dict]) -> dict:
    by_sample = {v["sample_id"]: v for v in verdicts}
    comp: dict[str, list[dict]] = {}
    for c in compiles:
        comp.setdefault(c["task"], []).append(c)
    rows = []
    for s in samples:
        v = by_sample.get(s["sample_id"], {})
        cs = comp.get(s["task_id"], [])
        rows.append({
            "task": s["task_id"], "sample_id": s["sample_id"], "status": v.get("status", "not run"),
            "speedup": v.get("speedup"), "runtime_ms": v.get("runtime_ms"), "ref_runtime_ms": v.get("ref_runtime_ms"),
            "max_abs_err": v.get("max_abs_err"), "flags": v.get("flags", []),
            "kernels": len(cs), "compile_s": round(sum(c.get("compile_s", 0.0) for c in cs), 2),
            "compile_ok": all(c.get("ok") for c in cs) if cs else None,
            "run_wall_s": (v.get("phases") or {}).get("run_wall_s"),
            "message": (v.get("message") or "")[:300],
        })
    ok = [r for r in rows if r["status"] == "ok"]
    sp = [r["speedup"] for r in ok if r["speedup"]]
    by_status: dict[str, int] = {}
    for r in rows:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    return {
        "seeds": len(rows), "by_status": by_status,
        "geomean_speedup_ok": math.exp(sum(math.log(x) for x in sp) / len(sp)) if sp else None,
        "faster_than_reference": sum(1 for x in sp if x > 1.0),
        "kernels_compiled": sum(1 for c in compiles if c.get("ok")), "kernels": len(compiles),
        "compile_s_total": round(sum(c.get("compile_s", 0.0) for c in compiles), 1),
        "rows": rows,
    }


def markdown(summary: dict) -> str:
    fmt = lambda x, f: "-" if x is None else format(x, f)  # noqa: E731
    lines = [f"{summary['seeds']} seeds: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["by_status"].items()))
             + f"; geomean speedup of the ok ones {fmt(summary['geomean_speedup_ok'], '.3f')}, "
             f"{summary['faster_than_reference']} faster than the reference; "
             f"{summary['kernels_compiled']}/{summary['kernels']} kernels compiled in {summary['compile_s_total']} s",
             "", "| task | status | speedup | ms | ref ms | kernels | compile s | flags |", "|---|---|---|---|---|---|---|---|"]
    for r in summary["rows"]:
        lines.append(f"| {r['task']} | {r['status']} | {fmt(r['speedup'], '.3f')} | {fmt(r['runtime_ms'], '.4f')} | "
                     f"{fmt(r['ref_runtime_ms'], '.4f')} | {r['kernels']} | {r['compile_s']} | {' '.join(r['flags'])} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verdicts", required=True)
    ap.add_argument("--compile", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--cache-before", type=int, default=None, help="TileLang kernel cache entries before verify")
    ap.add_argument("--cache-after", type=int, default=None, help="... and after it")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    summary = summarise(read_jsonl(a.verdicts), read_jsonl(a.compile), read_jsonl(a.samples))
    if a.cache_before is not None and a.cache_after is not None:
        summary["cache_entries_before_verify"] = a.cache_before
        summary["cache_entries_added_by_verify"] = a.cache_after - a.cache_before
    out = Path(a.out)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    md = markdown(summary)
    (out / "summary.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
