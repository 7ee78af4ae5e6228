"""TileLang seed for level1/23_GroupNorm: nn.GroupNorm(8, 64) on (16, 64, 128, 128).

PyTorch -> TileLang:
  statistics per (n, group)    -> a group's channels are contiguous in NCHW: its C/G planes are
                                  its segments (stride 1), statistic s = n * G + g
  mean and biased variance     -> segment_sums_kernel: one T.Kernel block per contiguous segment,
                                  two (1, BLK) T.alloc_fragment accumulators (x and x^2) filled in a
                                  T.serial loop of T.Parallel chunks, then T.reduce_sum
                                  finalize_kernel: a 32-thread block per statistic gathers its
                                  segments' sums, T.reduce_sum, mean = S1/n, var = S2/n - mean^2,
                                  T.rsqrt(var + eps)
  (x - mean) * rstd * w + b    -> apply_kernel: per (n, c) plane, the affine folded into one scale
                                  and shift per block, a T.Parallel multiply-add over the plane
No atomics: the same inputs give the same bits on every call. fp32 throughout.
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


BLK = 2048  # elements per step of a segment: 256 threads x 8


def segment_sums_kernel(segs: int, seg_len: int, target=None):
    """Sum and sum of squares of each contiguous segment of X (segs, seg_len)."""
    if seg_len % BLK:
        raise ValueError(f"segment_sums_kernel: {seg_len} is not a multiple of {BLK}")

    @T.prim_func
    def segment_sums(X: T.Tensor((segs, seg_len), "float32"), S: T.Tensor((segs, 2), "float32")):
        with T.Kernel(segs, threads=256) as g:
            a1 = T.alloc_fragment((1, BLK), "float32")
            a2 = T.alloc_fragment((1, BLK), "float32")
            s1 = T.alloc_fragment((1,), "float32")
            s2 = T.alloc_fragment((1,), "float32")
            T.clear(a1)
            T.clear(a2)
            for k in T.serial(seg_len // BLK):
                for i, j in T.Parallel(1, BLK):
                    v = X[g, k * BLK + j]
                    a1[i, j] += v
                    a2[i, j] += v * v
            T.reduce_sum(a1, s1, dim=1)
            T.reduce_sum(a2, s2, dim=1)
            S[g, 0] = s1[0]
            S[g, 1] = s2[0]

    return tilelang.compile(segment_sums, out_idx=[1], target=target)


def finalize_kernel(stats: int, parts: int, stride: int, count: int, eps: float, target=None):
    """Mean and 1/std of each statistic from its `parts` segment sums: statistic s owns segments
    s * parts + p * stride, p < parts (biased variance, as the reference)."""

    @T.prim_func
    def finalize(S: T.Tensor((stats * parts, 2), "float32"), MR: T.Tensor((stats, 2), "float32")):
        with T.Kernel(stats, threads=32) as s:
            f1 = T.alloc_fragment((1, parts), "float32")
            f2 = T.alloc_fragment((1, parts), "float32")
            t1 = T.alloc_fragment((1,), "float32")
            t2 = T.alloc_fragment((1,), "float32")
            for i, p in T.Parallel(1, parts):
                f1[i, p] = S[s * parts + p * stride, 0]
                f2[i, p] = S[s * parts + p * stride, 1]
            T.reduce_sum(f1, t1, dim=1)
            T.reduce_sum(f2, t2, dim=1)
            mean = t1[0] * (1.0 / count)
            MR[s, 0] = mean
            MR[s, 1] = T.rsqrt(T.max(t2[0] * (1.0 / count) - mean * mean, T.float32(0)) + eps)

    return tilelang.compile(finalize, out_idx=[1], target=target)


def apply_kernel(planes: int, hw: int, channels: int, stats: int, per_stat: int, target=None):
    """y = (x - mean) * rstd * w[c] + b[c] on each (n, c) plane of X (planes, hw)."""
    if hw % BLK:
        raise ValueError(f"apply_kernel: {hw} is not a multiple of {BLK}")

    @T.prim_func
    def norm_apply(X: T.Tensor((planes, hw), "float32"), MR: T.Tensor((stats, 2), "float32"),
                   Wt: T.Tensor((channels,), "float32"), Bs: T.Tensor((channels,), "float32"),
                   Y: T.Tensor((planes, hw), "float32")):
        with T.Kernel(hw // BLK, planes, threads=256) as (k, p):
            c = p % channels
            s = p // per_stat
            scale = MR[s, 1] * Wt[c]
            shift = Bs[c] - MR[s, 0] * scale
            for j in T.Parallel(BLK):
                Y[p, k * BLK + j] = X[p, k * BLK + j] * scale + shift

    return tilelang.compile(norm_apply, out_idx=[4], target=target)


CHECK = [(segment_sums_kernel, {"segs": 16 * 64, "seg_len": 128 * 128}),
         (finalize_kernel, {"stats": 16 * 8, "parts": 8, "stride": 1, "count": 8 * 128 * 128, "eps": 1e-5}),
         (apply_kernel, {"planes": 16 * 64, "hw": 128 * 128, "channels": 64, "stats": 16 * 8, "per_stat": 8})]


class ModelNew(nn.Module):
    def __init__(self, num_groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels, eps=1e-5)
        with torch.no_grad():  # as the reference
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        g = self.norm.num_groups
        key = (n, c, h * w)
        if key not in self._kernels:
            per = c // g
            self._kernels[key] = (segment_sums_kernel(n * c, h * w), finalize_kernel(n * g, per, 1, per * h * w, self.norm.eps),
                                  apply_kernel(n * c, h * w, c, n * g, per))
        sums, finalize, apply = self._kernels[key]
        xs = x.contiguous().view(n * c, h * w)
        mr = finalize(sums(xs))
        return apply(xs, mr, self.norm.weight.detach(), self.norm.bias.detach()).view(n, c, h, w)
