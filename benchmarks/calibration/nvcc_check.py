"""Compile every CUDA candidate of the calibration suite with nvcc (no GPU needed): the
``cuda_sources`` of each, with the flags torch's ``load_inline`` uses, as one translation
unit (kernelmill.tasks.builtin.nvcc_check: one namespace per candidate, errors point at
the candidate). Every one must compile: a CUDA control that fails to build would count
as a false flag on the device, a wrong kernel that fails would test nothing.

    python benchmarks/calibration/nvcc_check.py [--arch sm_90] [--separate]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import suite  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    from kernelmill.tasks.builtin.nvcc_check import CudaSource, extract_cuda_source, run_checks

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--separate", action="store_true", help="one nvcc per candidate (slow: torch's headers each time)")
    args = ap.parse_args(argv)
    sources = []
    for k in suite.all_kernels():
        if k.language == "cuda":
            code, funcs = extract_cuda_source(k.code, k.kernel_id)
            sources.append(CudaSource(k.kernel_id, k.kernel_id, "ok", code, funcs))
    results = run_checks(sources, arch=args.arch, separate=args.separate)
    bad = [r for r in results if not r.ok]
    for r in results:
        print(f"{'ok' if r.ok else 'FAILED'}: {len(r.sample_ids)} candidate(s) in {r.seconds:.0f} s")
    for r in bad:
        print(r.log[-4000:])
    print(f"{len(sources)} CUDA candidates: {'all compile' if not bad else 'compile errors above'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
