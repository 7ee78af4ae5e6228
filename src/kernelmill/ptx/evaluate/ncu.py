"""Global-load efficiency from Nsight Compute (`ncu`), for `evaluate --ncu`.

The paper's "Gld Efficiency" is nvprof's ``gld_efficiency``; its Nsight Compute
counterpart (NVIDIA's nvprof-to-ncu metric table) is
``smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct``: the bytes a
global load instruction asked for per 32-byte sector it moved, as a
percentage. The name is the same in CUDA 12 and 13; `--ncu-metric` takes
another where a toolkit differs (`ncu --query-metrics` lists them).

The worker runs in ncu mode under ``ncu --csv --page raw``, restricted to the
kernel names of its batch: it launches each job's reference kernel, then its
candidate kernel, once each, and records the order; ncu's rows (in launch
order, `ID`) are matched to those launches by kernel name, in order.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

DEFAULT_METRIC = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"


def find_ncu() -> str | None:
    exe = shutil.which("ncu")
    if exe:
        return exe
    for cand in ("/usr/local/cuda/bin/ncu",):
        if Path(cand).exists():
            return cand
    return None


def ncu_command(exe: str, metric: str, kernels: list[str], log_file: str) -> list[str]:
    names = "|".join(re.escape(k) for k in sorted(set(kernels)))
    return [exe, "--metrics", metric, "--csv", "--page", "raw", "--print-units", "base",
            "--kernel-name-base", "function", "--kernel-name", f"regex:^({names})$",
            "--target-processes", "all", "--log-file", log_file]


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def parse_csv(text: str, metric: str) -> list[tuple[str, float | None]]:
    """(kernel name, metric value) per profiled launch, in launch order."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    head = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if head is None:
        return []
    rows = list(csv.reader(lines[head:]))
    cols = rows[0]
    try:
        i_id, i_name, i_val = cols.index("ID"), cols.index("Kernel Name"), cols.index(metric)
    except ValueError:
        return []
    out = []
    for r in rows[1:]:
        if len(r) <= max(i_id, i_name, i_val) or not r[i_id].strip().isdigit():
            continue  # the units row
        out.append((int(r[i_id]), r[i_name].split("(")[0].strip(), _number(r[i_val])))
    return [(name, val) for _, name, val in sorted(out)]


def match_launches(launches: list[dict], rows: list[tuple[str, float | None]]) -> dict[str, dict[str, float | None]]:
    """{job id: {"ref": value, "cand": value}} from the worker's launch events and ncu's rows."""
    out: dict[str, dict[str, float | None]] = {}
    pos = 0
    for ev in launches:
        k = next((i for i in range(pos, len(rows)) if rows[i][0] == ev["kernel"]), None)
        if k is None:
            continue
        out.setdefault(ev["id"], {})[ev["side"]] = rows[k][1]
        pos = k + 1
    return out
