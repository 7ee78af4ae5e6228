"""Kernels and pairs the `ptx evaluate` tests share (CPU and GPU)."""

from kernelmill.records import Pair

ADD = """extern "C" __global__ void add_k(const float* __restrict__ x, const float* __restrict__ y,
                                   float* __restrict__ out) {
  int idx = blockIdx.x * 128 + threadIdx.x;
  if (idx < 1000) {
    float a = x[idx];
    float b = y[idx];
    out[idx] = a + b;
  }
}
"""
SCALE = """#include <cuda_fp16.h>
extern "C" __global__ void scale_h(const __half* __restrict__ x, __half* __restrict__ out) {
  int i = blockIdx.x * 64 + threadIdx.x;
  if (i < 256) out[i] = __float2half(__half2float(x[i]) * 3.0f);
}
"""


def _cfg(params, grid, block, smem=0):
    return {"inputs": [], "outputs": [], "params": params, "grid": grid, "block": block, "shared_mem": smem}


def add_pair(pid="p_add") -> Pair:
    c = _cfg([{"name": "x", "shape": [1000], "dtype": "float32", "role": "in"},
              {"name": "y", "shape": [1000], "dtype": "float32", "role": "in"},
              {"name": "out", "shape": [1000], "dtype": "float32", "role": "out"}], [8, 1, 1], [128, 1, 1])
    return Pair(pid, "add_k", "cuda", ADD, ".visible .entry add_k() { ret; } // " + pid, None, "sm_90",
                ["-arch=sm_90"], None, "test", {"status": "ok", "config": c})


def scale_pair(pid="p_scale") -> Pair:
    c = _cfg([{"name": "x", "shape": [256], "dtype": "float16", "role": "in"},
              {"name": "out", "shape": [256], "dtype": "float16", "role": "out"}], [4], [64])
    return Pair(pid, "scale_h", "cuda", SCALE, ".visible .entry scale_h() { ret; } // " + pid, None, "sm_90",
                [], None, "test", {"status": "ok", "config": c})
