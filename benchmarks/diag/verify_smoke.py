"""Verify one builtin candidate per language on the device and print each verdict's
message: a quick check that the harness works on a machine before a long run.
Exits 1 when a verdict differs from the candidate's expected status.

    python benchmarks/diag/verify_smoke.py --device cuda --languages cuda,triton,torch
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from kernelmill.tasks import load_tasks  # noqa: E402
from kernelmill.tasks.builtin import builtin_samples  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--languages", default="cuda,triton,torch")
    a = ap.parse_args()
    tasks = load_tasks("builtin").by_id()
    picked = []
    for lang in a.languages.split(","):
        picked += [s for s in builtin_samples() if s.language == lang and s.meta.get("expect") == "ok"][:1]
    verdicts = verify_samples(tasks, picked, VerifyConfig(device=a.device, trials=3, cache_dir=tempfile.mkdtemp()),
                              store=None, progress=False)
    bad = 0
    for s, v in zip(picked, verdicts):
        print(f"{s.sample_id}: {v.status} speedup={v.speedup}\n  {(v.message or '')[:3000]}", flush=True)
        bad += v.status != s.meta.get("expect")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
