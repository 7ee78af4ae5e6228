"""Emulate fp32 GEMM summation orders over K on the CPU (numpy) and count the outputs that
two orders put outside the verifier's tolerance (|c - r| > atol + rtol * |r|, atol = rtol = 1e-4)
of each other: the numerical study behind the level1/13_TransposedMatmul seed (C = A.T @ B,
K = 4096; docs/results/benchmarks_history.md, issue 15).

Orders (each step one fp32 FMA: the exact product added, one rounding):
  seq       one chain over all of K (the first seed; cuBLAS for the other GEMM seeds' shapes,
            which matched it bitwise on the H100)
  splitS    K cut into S equal slices, each its own chain from zero, the slice sums added in
            order in fp32 (split-K; the seed now uses S = 16)
  fp64      the float64 product rounded once (a float64 accumulator)

    python benchmarks/diag/gemm_order_emulation.py --draws 4 --size 384      # about 1.5 min a draw
"""

from __future__ import annotations

import argparse

import numpy as np

K = 4096
ORDERS = ["seq", "split2", "split4", "split8", "split16", "fp64"]


def emulate(A: np.ndarray, B: np.ndarray) -> dict[str, np.ndarray]:
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    shape = (A.shape[1], B.shape[1])

    def chain(k0: int, k1: int) -> np.ndarray:
        acc = np.zeros(shape, np.float32)
        for k in range(k0, k1):  # acc + a*b exact in float64, then one rounding: an fp32 FMA
            acc = (acc.astype(np.float64) + np.outer(A64[k], B64[k])).astype(np.float32)
        return acc

    def add32(x, y):
        return (x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)

    out = {"seq": chain(0, K), "fp64": (A64.T @ B64).astype(np.float32)}
    for s in (2, 4, 8, 16):
        parts = [chain(i * K // s, (i + 1) * K // s) for i in range(s)]
        tot = parts[0]
        for p in parts[1:]:
            tot = add32(tot, p)
        out[f"split{s}"] = tot
    out["exact"] = A64.T @ B64
    return out


def outside(c: np.ndarray, r: np.ndarray, atol: float = 1e-4, rtol: float = 1e-4) -> int:
    return int((np.abs(c - r) > (np.float32(atol) + np.float32(rtol) * np.abs(r))).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=1)
    ap.add_argument("--size", type=int, default=256, help="outputs per draw: size x size (each a K-long sum)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    counts = {(c, r): 0 for c in ORDERS for r in ORDERS}
    sq = {o: 0.0 for o in ORDERS}
    n = 0
    for d in range(args.draws):
        rng = np.random.default_rng(args.seed + d)
        A = rng.standard_normal((K, args.size), dtype=np.float32)
        B = rng.standard_normal((K, args.size), dtype=np.float32)
        res = emulate(A, B)
        n += res["seq"].size
        for c in ORDERS:
            sq[c] += float(((res[c] - res["exact"]) ** 2).sum())
            for r in ORDERS:
                counts[c, r] += outside(res[c], res[r])
        print(f"draw {d + 1}/{args.draws} done", flush=True)
    scale = 4194304 / n
    print(f"\n{n} outputs (randn, K = {K}); outside atol = rtol = 1e-4 per 4,194,304 outputs; "
          f"rows: the kernel's order, columns: the reference's")
    print(" " * 9 + "".join(f"{r:>9s}" for r in ORDERS))
    for c in ORDERS:
        print(f"{c:9s}" + "".join(f"{counts[c, r] * scale:9.1f}" for r in ORDERS))
    print("rms error against the float64 product: "
          + ", ".join(f"{o} {np.sqrt(sq[o] / n):.2e}" for o in ORDERS))


if __name__ == "__main__":
    main()
