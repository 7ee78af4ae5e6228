"""Pairs per CPU second of a few `ptx augment` jobs run one after another in one
process (claims shared as in a run), with the settings given: what a change of the
sampler's settings buys, without an hour's run. CPU = this process's time plus its
nvcc children's; with --profile, cProfile's cumulative time of the named stages.

    python benchmarks/diag/augment_jobs.py --jobs resnet:0 transformer:0 --variants 8 --tiles 6
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import time

from kernelmill.ptx.augment.runner import Claims, Job, _set_claims, run_job

STAGES = {  # cProfile function name -> stage
    "random_variants": "sampling", "tile_variants": "sampling", "__init__ (schedules.py)": "space",
    "lower": "lowering", "nvcc_ptx": "nvcc", "batch_pairs": "pairs (nvcc, refactor, parse)",
    "build_model": "model", "relax_module": "import", "subgraphs": "partition",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", nargs="+", required=True, help="FAMILY:INDEX (both pipelines each)")
    ap.add_argument("--variants", type=int, default=8)
    ap.add_argument("--tiles", type=int, default=6)
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    _set_claims(Claims())
    prof = cProfile.Profile() if a.profile else None
    rows, t_cpu0, t0 = [], os.times(), time.monotonic()
    for spec in a.jobs:
        fam, idx = spec.split(":")
        for pipe in ("schedule", "subgraph"):
            job = Job(fam, int(idx), pipe, 0, a.variants if pipe == "schedule" else a.tiles, a.batch,
                      12000, True, False)
            c0 = os.times()
            if prof:
                prof.enable()
            _, pairs, _, stats = run_job(job)
            if prof:
                prof.disable()
            c1 = os.times()
            cpu = (c1.user + c1.system - c0.user - c0.system) + (c1.children_user + c1.children_system
                                                                 - c0.children_user - c0.children_system)
            ok = sum(p["meta"].get("status") == "ok" for p in pairs)
            rows.append({"job": f"{fam}#{idx}/{pipe}", "cpu_s": round(cpu, 1), "pairs": ok, **stats})
            print(json.dumps(rows[-1]), flush=True)
    c1 = os.times()
    cpu = sum((c1[i] - t_cpu0[i]) for i in range(4))
    total = sum(r["pairs"] for r in rows)
    print(json.dumps({"cpu_s": round(cpu, 1), "wall_s": round(time.monotonic() - t0, 1), "pairs": total,
                      "pairs_per_cpu_s": round(total / cpu, 3)}))
    if prof:
        st = pstats.Stats(prof)
        st.sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
