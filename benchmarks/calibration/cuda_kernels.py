"""CUDA candidates of the calibration suite (device run only): ``load_inline`` with
``cuda_sources``, written as LLMs write them (THREADS/TILE constants, shared memory,
``__syncthreads``, warp shuffles, atomics). Each module is standalone: the block-reduce
helpers are pasted into every source, as a candidate would carry them."""

from __future__ import annotations

from families import Kernel

_MODULE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <math.h>

#define THREADS 256
#define TILE 16

__device__ __forceinline__ float block_sum(float v, float* sh) {{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : 0.f;
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) sh[0] = v;
    __syncthreads();
    float r = sh[0];
    __syncthreads();
    return r;
}}

__device__ __forceinline__ float block_max(float v, float* sh) {{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? sh[threadIdx.x] : -INFINITY;
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, o));
    if (threadIdx.x == 0) sh[0] = v;
    __syncthreads();
    float r = sh[0];
    __syncthreads();
    return r;
}}

{kernel}

{host}
"""

cpp_source = "{decl}"

ext = load_inline(name="cal_cuda_{ident}", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["run"],
                  verbose=False)


class ModelNew(nn.Module):
    def forward(self, {args}):
        return ext.run({call})
'''

_STREAM = "c10::cuda::getCurrentCUDAStream()"

# one block of THREADS per row: kernel(const float* x, float* y, int cols)
_ROW_HOST = '''torch::Tensor run(torch::Tensor x) {{
    auto xc = x.contiguous();
    int cols = xc.size(-1);
    int rows = xc.numel() / cols;
    auto y = {alloc};
    row_kernel<<<rows, THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    return y;
}}'''

_ELEM_HOST = '''torch::Tensor run(torch::Tensor x) {{
    auto xc = x.contiguous();
    int n = xc.numel();
    auto y = torch::empty_like(xc);
    elem_kernel<<<{blocks}, THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}}'''

# C[M, N] = A[M, K] @ B[K, N] (+ bias, ReLU); grid (N/TILE, M/TILE, SPLITS), block (TILE, TILE)
_GEMM_HOST = '''torch::Tensor run(torch::Tensor a, torch::Tensor b{bias_arg}) {{
    auto ac = a.contiguous(), bc = b.contiguous();
    int M = ac.size(0), K = ac.size(1), N = bc.size(1);
    auto c = torch::{alloc}({{M, N}}, ac.options());
    dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE, {splits});
    gemm_kernel<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), {bias_ptr},
                                               c.data_ptr<float>(), M, N, K);
    return c;
}}'''


def _k(task, name, kind, style, why, kernel, host, args="x", call="x", decl="torch::Tensor run(torch::Tensor x);"):
    code = _MODULE.format(kernel=kernel.strip(), host=host.strip(), decl=decl, ident=f"{task}_{name}", args=args,
                          call=call)
    return Kernel(task, name, kind, "cuda", style, why, code, devices=("cuda",))


def _row(task, name, kind, style, why, body, per_row=False):
    kernel = ("__global__ void row_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {\n"
              "    const float* row = x + (size_t)blockIdx.x * cols;\n    int tid = threadIdx.x;\n"
              + body.strip("\n") + "\n}")
    alloc = "torch::empty({rows}, xc.options())" if per_row else "torch::empty_like(xc)"
    return _k(task, name, kind, style, why, kernel, _ROW_HOST.format(alloc=alloc))


def _elem(task, name, kind, style, why, body, blocks="(n + THREADS - 1) / THREADS"):
    kernel = ("__global__ void elem_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
              + body.strip("\n") + "\n}")
    return _k(task, name, kind, style, why, kernel, _ELEM_HOST.format(blocks=blocks))


_GEMM_TILED = '''__global__ void gemm_kernel(const float* A, const float* B, const float* bias, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < %(tiles)s; ++t) {
        int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
        %(load)s
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        %(inner)s
        %(sync2)s
    }
    if (row < M && col < N) %(store)s
}'''
_LOAD_OK = ("As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.f;\n"
            "        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.f;")
_LOAD_NO_FILL = ("if (row < M && ak < K) As[threadIdx.y][threadIdx.x] = A[row * K + ak];\n"
                 "        if (bk < K && col < N) Bs[threadIdx.y][threadIdx.x] = B[bk * N + col];")


def _gemm(task, name, kind, style, why, tiles="(K + TILE - 1) / TILE", load=_LOAD_OK, inner="",
          sync2="__syncthreads();", store="C[row * N + col] = acc;", kernel=None, splits="1", alloc="empty"):
    linear = task == "linear_relu"
    kernel = kernel or _GEMM_TILED % {"tiles": tiles, "load": load, "inner": inner, "sync2": sync2, "store": store}
    host = _GEMM_HOST.format(bias_arg=", torch::Tensor bias" if linear else "",
                             bias_ptr="bias.contiguous().data_ptr<float>()" if linear else "nullptr",
                             splits=splits, alloc=alloc)
    decl = ("torch::Tensor run(torch::Tensor a, torch::Tensor b, torch::Tensor bias);" if linear
            else "torch::Tensor run(torch::Tensor a, torch::Tensor b);")
    return _k(task, name, kind, style, why, kernel, host, args="x, w, b" if linear else "x, w",
              call="x, w, b" if linear else "x, w", decl=decl)


def kernels() -> list[Kernel]:
    out = [
        # --- elementwise
        _elem("silu", "grid_floor", "wrong", "missed_tail",
              "n / THREADS blocks (floor): the last 99900 % 256 = 60 outputs never written (torch::empty)",
              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) { float v = x[i]; y[i] = v / (1.f + expf(-v)); }",
              blocks="n / THREADS"),
        _elem("silu", "grid_stride", "control", "other_formula", "a grid-stride loop over 120 blocks",
              "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {\n"
              "        float v = x[i];\n        y[i] = v * (1.f / (1.f + expf(-v)));\n    }", blocks="120"),
        _elem("gelu", "tanh_approximation", "wrong", "approximation", "GELU's tanh form with tanhf",
              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) {\n        float v = x[i];\n"
              "        y[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));\n    }"),
        _elem("gelu", "erff", "control", "other_formula", "0.5 x (1 + erff(x / sqrt 2))",
              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "    if (i < n) { float v = x[i]; y[i] = 0.5f * v * (1.f + erff(v * 0.70710678118654752f)); }"),
        _k("bias_relu", "bias_row_index", "wrong", "wrong_broadcast", "the bias indexed by i / cols (the row), not i % cols",
           "__global__ void br_kernel(const float* x, const float* b, float* y, int n, int cols) {\n"
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = fmaxf(x[i] + b[i / cols], 0.f);\n}",
           f"torch::Tensor run(torch::Tensor x, torch::Tensor b) {{\n    auto xc = x.contiguous();\n    int n = xc.numel();\n"
           f"    auto y = torch::empty_like(xc);\n    br_kernel<<<(n + THREADS - 1) / THREADS, THREADS, 0, {_STREAM}>>>("
           f"xc.data_ptr<float>(), b.contiguous().data_ptr<float>(), y.data_ptr<float>(), n, xc.size(-1));\n    return y;\n}}",
           args="x, w", call="x, w", decl="torch::Tensor run(torch::Tensor x, torch::Tensor b);"),
        # --- reductions (rowsum: 4096 columns; rowmax: 1000)
        _row("rowsum", "block_sum", "control", "summation_order", "per-thread strided sums, then warp shuffles",
             "    __shared__ float sh[32];\n    float s = 0.f;\n    for (int j = tid; j < cols; j += THREADS) s += row[j];\n"
             "    s = block_sum(s, sh);\n    if (tid == 0) y[blockIdx.x] = s;", per_row=True),
        _row("rowsum", "warp_sync_no_volatile", "wrong", "race",
             "the classic unrolled last warp without volatile or __syncwarp: stale shared values under "
             "independent thread scheduling",
             "    __shared__ float sdata[THREADS];\n    float s = 0.f;\n    for (int j = tid; j < cols; j += THREADS) s += row[j];\n"
             "    sdata[tid] = s;\n    __syncthreads();\n"
             "    for (int st = THREADS / 2; st > 32; st >>= 1) { if (tid < st) sdata[tid] += sdata[tid + st]; __syncthreads(); }\n"
             "    if (tid < 32) {\n        float* sm = sdata;\n        sm[tid] += sm[tid + 32]; sm[tid] += sm[tid + 16];\n"
             "        sm[tid] += sm[tid + 8]; sm[tid] += sm[tid + 4]; sm[tid] += sm[tid + 2]; sm[tid] += sm[tid + 1];\n    }\n"
             "    if (tid == 0) y[blockIdx.x] = sdata[0];", per_row=True),
        _row("rowsum", "smem_512_uninitialised", "wrong", "uninitialised_memory",
             "a tree written for 512 threads, launched with 256: sdata[256..511] are read but never written",
             "    __shared__ float sdata[512];\n    float s = 0.f;\n    for (int j = tid; j < cols; j += THREADS) s += row[j];\n"
             "    sdata[tid] = s;\n    __syncthreads();\n"
             "    for (int st = 256; st > 0; st >>= 1) { if (tid < st) sdata[tid] += sdata[tid + st]; __syncthreads(); }\n"
             "    if (tid == 0) y[blockIdx.x] = sdata[0];", per_row=True),
        _row("rowsum", "kahan", "control", "kahan", "Kahan-compensated per-thread sums, then a tree",
             "    __shared__ float sh[32];\n    float s = 0.f, c = 0.f;\n"
             "    for (int j = tid; j < cols; j += THREADS) { float v = row[j] - c; float t = s + v; c = (t - s) - v; s = t; }\n"
             "    s = block_sum(s, sh);\n    if (tid == 0) y[blockIdx.x] = s;", per_row=True),
        _row("rowsum", "double_accumulate", "control", "fp64_accumulate", "per-thread sums in double, tree in float",
             "    __shared__ float sh[32];\n    double s = 0.0;\n    for (int j = tid; j < cols; j += THREADS) s += row[j];\n"
             "    float r = block_sum((float)s, sh);\n    if (tid == 0) y[blockIdx.x] = r;", per_row=True),
        _k("rowsum", "atomic_quarters", "control", "atomic_order",
           "4 blocks per row, each adds its quarter with atomicAdd: the order of the 4 adds varies",
           "__global__ void q_kernel(const float* x, float* y, int cols) {\n    __shared__ float sh[32];\n"
           "    const float* row = x + (size_t)blockIdx.x * cols;\n    int q = cols / 4, start = blockIdx.y * q;\n"
           "    float s = 0.f;\n    for (int j = start + threadIdx.x; j < start + q; j += THREADS) s += row[j];\n"
           "    s = block_sum(s, sh);\n    if (threadIdx.x == 0) atomicAdd(&y[blockIdx.x], s);\n}",
           f"torch::Tensor run(torch::Tensor x) {{\n    auto xc = x.contiguous();\n    int cols = xc.size(-1), rows = xc.numel() / cols;\n"
           f"    TORCH_CHECK(cols % 4 == 0, \"cols must be a multiple of 4\");\n"
           f"    auto y = torch::zeros({{rows}}, xc.options());\n"
           f"    q_kernel<<<dim3(rows, 4), THREADS, 0, {_STREAM}>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);\n"
           f"    return y;\n}}"),
        _row("rowmax", "init_zero", "wrong", "uninitialised_init",
             "the running max starts at 0.f, not -INFINITY: wrong only for a row with no positive value",
             "    __shared__ float sh[32];\n    float m = 0.f;\n    for (int j = tid; j < cols; j += THREADS) m = fmaxf(m, row[j]);\n"
             "    m = block_max(m, sh);\n    if (tid == 0) y[blockIdx.x] = m;", per_row=True),
        _row("rowmax", "tile_tail_missed", "wrong", "missed_tail",
             "the loop bound cols / THREADS * THREADS: columns 768-999 never read",
             "    __shared__ float sh[32];\n    float m = -INFINITY;\n"
             "    for (int j = tid; j < cols / THREADS * THREADS; j += THREADS) m = fmaxf(m, row[j]);\n"
             "    m = block_max(m, sh);\n    if (tid == 0) y[blockIdx.x] = m;", per_row=True),
        # --- softmax (1000 columns)
        _row("softmax", "no_max_subtraction", "wrong", "numerical_instability",
             "expf(x) without the max shift: inf/inf = NaN on a wide range",
             "    __shared__ float sh[32];\n    float* out = y + (size_t)blockIdx.x * cols;\n    float s = 0.f;\n"
             "    for (int j = tid; j < cols; j += THREADS) s += expf(row[j]);\n    s = block_sum(s, sh);\n"
             "    for (int j = tid; j < cols; j += THREADS) out[j] = expf(row[j]) / s;"),
        _row("softmax", "online", "control", "online_softmax",
             "per-thread running (max, sum) merged across the block with rescaling",
             "    __shared__ float sh[32];\n    float* out = y + (size_t)blockIdx.x * cols;\n    float m = -INFINITY, s = 0.f;\n"
             "    for (int j = tid; j < cols; j += THREADS) {\n        float v = row[j], mn = fmaxf(m, v);\n"
             "        s = s * expf(m - mn) + expf(v - mn);\n        m = mn;\n    }\n"
             "    float gm = block_max(m, sh);\n    float gs = block_sum(m == -INFINITY ? 0.f : s * expf(m - gm), sh);\n"
             "    for (int j = tid; j < cols; j += THREADS) out[j] = expf(row[j] - gm) / gs;"),
        _row("softmax", "smem_reuse_race", "wrong", "race",
             "the max is read from sdata[0] while thread 0 already writes its partial sum there (no barrier between)",
             "    __shared__ float sdata[THREADS];\n    float* out = y + (size_t)blockIdx.x * cols;\n    float m = -INFINITY;\n"
             "    for (int j = tid; j < cols; j += THREADS) m = fmaxf(m, row[j]);\n    sdata[tid] = m;\n    __syncthreads();\n"
             "    for (int st = THREADS / 2; st > 0; st >>= 1) { if (tid < st) sdata[tid] = fmaxf(sdata[tid], sdata[tid + st]); __syncthreads(); }\n"
             "    float mx = sdata[0];\n    float s = 0.f;\n    for (int j = tid; j < cols; j += THREADS) s += expf(row[j] - mx);\n"
             "    sdata[tid] = s;\n    __syncthreads();\n"
             "    for (int st = THREADS / 2; st > 0; st >>= 1) { if (tid < st) sdata[tid] += sdata[tid + st]; __syncthreads(); }\n"
             "    float inv = 1.f / sdata[0];\n"
             "    for (int j = tid; j < cols; j += THREADS) out[j] = expf(row[j] - mx) * inv;"),
        # --- norms
        _row("layernorm", "welford", "control", "welford",
             "per-thread Welford (mean, M2), merged by Chan's formula through shared memory",
             "    __shared__ float sm[THREADS], sq[THREADS];\n    __shared__ float bmean, binv;\n"
             "    float* out = y + (size_t)blockIdx.x * cols;\n    float mean = 0.f, m2 = 0.f;\n    int cnt = 0;\n"
             "    for (int j = tid; j < cols; j += THREADS) { ++cnt; float d = row[j] - mean; mean += d / cnt; m2 += d * (row[j] - mean); }\n"
             "    sm[tid] = mean;\n    sq[tid] = m2;\n    __syncthreads();\n    if (tid == 0) {\n"
             "        float n = 0.f, mu = 0.f, M2 = 0.f;\n        for (int t = 0; t < THREADS; ++t) {\n"
             "            float nb = (float)((cols - t + THREADS - 1) / THREADS);\n            if (nb <= 0.f) continue;\n"
             "            float d = sm[t] - mu, tot = n + nb;\n            mu += d * nb / tot;\n"
             "            M2 += sq[t] + d * d * n * nb / tot;\n            n = tot;\n        }\n"
             "        bmean = mu;\n        binv = rsqrtf(M2 / cols + 1e-5f);\n    }\n    __syncthreads();\n"
             "    for (int j = tid; j < cols; j += THREADS) out[j] = (row[j] - bmean) * binv;"),
        _row("layernorm", "divide_by_threads", "wrong", "wrong_formula",
             "the variance divided by blockDim.x (256), not by cols (1024)",
             "    __shared__ float sh[32];\n    float* out = y + (size_t)blockIdx.x * cols;\n    float s = 0.f;\n"
             "    for (int j = tid; j < cols; j += THREADS) s += row[j];\n    float mean = block_sum(s, sh) / cols;\n"
             "    float q = 0.f;\n    for (int j = tid; j < cols; j += THREADS) { float d = row[j] - mean; q += d * d; }\n"
             "    float var = block_sum(q, sh) / blockDim.x;\n    float inv = rsqrtf(var + 1e-5f);\n"
             "    for (int j = tid; j < cols; j += THREADS) out[j] = (row[j] - mean) * inv;"),
        _row("rmsnorm", "rsqrtf", "control", "other_formula", "a block sum of squares and the rsqrtf intrinsic",
             "    __shared__ float sh[32];\n    float* out = y + (size_t)blockIdx.x * cols;\n    float q = 0.f;\n"
             "    for (int j = tid; j < cols; j += THREADS) q += row[j] * row[j];\n"
             "    float inv = rsqrtf(block_sum(q, sh) / cols + 1e-6f);\n"
             "    for (int j = tid; j < cols; j += THREADS) out[j] = row[j] * inv;"),
    ]
    # --- scan (1000 columns, one block of 1024 threads per row)
    scan = ('__global__ void scan_kernel(const float* x, float* y, int cols) {{\n    __shared__ float buf[{bufs}][1024];\n'
            '    int tid = threadIdx.x;\n    const float* row = x + (size_t)blockIdx.x * cols;\n'
            '    buf[0][tid] = tid < cols ? row[tid] : 0.f;\n    __syncthreads();\n{loop}\n'
            '    if (tid < cols) y[(size_t)blockIdx.x * cols + tid] = buf[{res}][tid];\n}}')
    scan_host = (f"torch::Tensor run(torch::Tensor x) {{\n    auto xc = x.contiguous();\n    int cols = xc.size(-1), rows = xc.numel() / cols;\n"
                 f"    TORCH_CHECK(cols <= 1024, \"one block per row\");\n    auto y = torch::empty_like(xc);\n"
                 f"    scan_kernel<<<rows, 1024, 0, {_STREAM}>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);\n    return y;\n}}")
    double_buf = ("    int in = 0;\n    for (int off = 1; off < 1024; off <<= 1) {\n"
                  "        buf[1 - in][tid] = buf[in][tid] + (tid >= off ? buf[in][tid - off] : 0.f);\n"
                  "        __syncthreads();\n        in = 1 - in;\n    }\n    __shared__ int fin;\n"
                  "    if (tid == 0) fin = in;\n    __syncthreads();\n    if (fin != 0) buf[0][tid] = buf[1][tid];\n    __syncthreads();")
    in_place = ("    for (int off = 1; off < 1024; off <<= 1) {\n        if (tid >= off) buf[0][tid] += buf[0][tid - off];\n"
                "        __syncthreads();\n    }")
    out += [
        _k("cumsum", "hillis_steele", "control", "summation_order", "Hillis-Steele scan, double-buffered in shared memory",
           scan.format(bufs=2, loop=double_buf, res=0), scan_host),
        _k("cumsum", "hillis_steele_in_place", "wrong", "race",
           "Hillis-Steele in one buffer: a thread may read buf[tid - off] after its owner already added in this step",
           scan.format(bufs=1, loop=in_place, res=0), scan_host),
        # --- GEMM (matmul: 128 x 1000 x 96; linear_relu: 100 x 500 x 72)
        _gemm("matmul", "tiled", "control", "summation_order", "16x16 shared-memory tiles, zero-filled edges, two barriers"),
        _gemm("matmul", "k_tail_missed", "wrong", "missed_tail", "tile loop K / TILE: the last 1000 % 16 = 8 of K dropped",
              tiles="K / TILE"),
        _gemm("matmul", "edge_not_zero_filled", "wrong", "uninitialised_memory",
              "edge tiles load only in-range elements: the K tail multiplies stale shared memory of the previous tile",
              load=_LOAD_NO_FILL),
        _gemm("matmul", "missing_second_sync", "wrong", "race",
              "no barrier after the inner product: a fast warp overwrites a tile others still read", sync2=""),
        _gemm("matmul", "split_k_atomic", "control", "split_k",
              "K split over 4 blocks (gridDim.z), partial products added with atomicAdd into zeros",
              kernel='''__global__ void gemm_kernel(const float* A, const float* B, const float* bias, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    int tiles = (K + TILE - 1) / TILE, per = (tiles + gridDim.z - 1) / gridDim.z;
    int t0 = blockIdx.z * per, t1 = min(tiles, t0 + per);
    float acc = 0.f;
    for (int t = t0; t < t1; ++t) {
        int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) atomicAdd(&C[row * N + col], acc);
}''', splits="4", alloc="zeros"),
        _gemm("matmul", "naive_double_k_reversed", "control", "fp64_accumulate",
              "one thread per output, K summed from the end in double",
              kernel='''__global__ void gemm_kernel(const float* A, const float* B, const float* bias, float* C, int M, int N, int K) {
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    if (row >= M || col >= N) return;
    double acc = 0.0;
    for (int k = K - 1; k >= 0; --k) acc += (double)A[row * K + k] * B[k * N + col];
    C[row * N + col] = (float)acc;
}'''),
        _gemm("linear_relu", "fused_epilogue", "control", "fused_epilogue",
              "tiled GEMM with bias and ReLU applied to the accumulator before the store",
              store="C[row * N + col] = fmaxf(acc + bias[col], 0.f);"),
        _gemm("linear_relu", "bias_in_k_loop", "wrong", "wrong_formula",
              "the bias added inside the tile loop: once per K tile (32 times), not once",
              inner="acc += (col < N) ? bias[col] : 0.f;",
              store="C[row * N + col] = fmaxf(acc, 0.f);"),
    ]
    # --- conv2d (4, 8, 30, 30) * (16, 8, 3, 3), padding 1; maxpool2d 3/2/1 on (8, 16, 33, 33)
    conv = '''__global__ void conv_kernel(const float* x, const float* w, float* y, int B, int C, int H, int W, int O) {{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * O * H * W) return;
    int ow = idx % W, oh = (idx / W) % H, o = (idx / (W * H)) % O, b = idx / (W * H * O);
    float acc = 0.f;
    for (int c = 0; c < C; ++c)
        for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {{
                int ih = oh + kh - 1, iw = ow + kw - 1;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                    acc += x[{xidx}] * w[((o * C + c) * 3 + kh) * 3 + kw];
            }}
    y[idx] = acc;
}}'''
    conv_host = (f"torch::Tensor run(torch::Tensor x, torch::Tensor w) {{\n    auto xc = x.contiguous(), wc = w.contiguous();\n"
                 f"    int B = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3), O = wc.size(0);\n"
                 f"    auto y = torch::empty({{B, O, H, W}}, xc.options());\n    int n = B * O * H * W;\n"
                 f"    conv_kernel<<<(n + THREADS - 1) / THREADS, THREADS, 0, {_STREAM}>>>(xc.data_ptr<float>(), wc.data_ptr<float>(), "
                 f"y.data_ptr<float>(), B, C, H, W, O);\n    return y;\n}}")
    cdecl = "torch::Tensor run(torch::Tensor x, torch::Tensor w);"
    pool = '''__global__ void pool_kernel(const float* x, float* y, int BC, int H, int W, int OH, int OW) {{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= BC * OH * OW) return;
    int ow = idx % OW, oh = (idx / OW) % OH, bc = idx / (OW * OH);
    float m = {init};
    for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {{
            int ih = oh * 2 + kh - 1, iw = ow * 2 + kw - 1;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) m = fmaxf(m, x[(bc * H + ih) * W + iw]);
        }}
    y[idx] = m;
}}'''
    pool_host = (f"torch::Tensor run(torch::Tensor x) {{\n    auto xc = x.contiguous();\n"
                 f"    int B = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);\n"
                 f"    int OH = (H + 2 - 3) / 2 + 1, OW = (W + 2 - 3) / 2 + 1;\n"
                 f"    auto y = torch::empty({{B, C, OH, OW}}, xc.options());\n    int n = B * C * OH * OW;\n"
                 f"    pool_kernel<<<(n + THREADS - 1) / THREADS, THREADS, 0, {_STREAM}>>>(xc.data_ptr<float>(), y.data_ptr<float>(), "
                 f"B * C, H, W, OH, OW);\n    return y;\n}}")
    out += [
        _k("conv2d", "direct", "control", "other_formula", "one thread per output, bounds-checked 3x3 window",
           conv.format(xidx="((b * C + c) * H + ih) * W + iw"), conv_host, args="x, w", call="x, w", decl=cdecl),
        _k("conv2d", "height_width_swapped", "wrong", "shape_specialised",
           "the input indexed with W as the row stride and H as the plane size: right only for square images",
           conv.format(xidx="((b * C + c) * W + ih) * H + iw"), conv_host, args="x, w", call="x, w", decl=cdecl),
        _k("maxpool2d", "direct", "control", "other_formula", "one thread per output, -INFINITY start, bounds-checked",
           pool.format(init="-INFINITY"), pool_host),
        _k("maxpool2d", "init_zero", "wrong", "uninitialised_init",
           "the window max starts at 0.f: a border window of only negative values gives 0", pool.format(init="0.f"), pool_host),
    ]
    # --- attention (4, 100, 64): one block of 128 threads per query
    attn = '''__global__ void attn_kernel(const float* q, const float* k, const float* v, float* o, int L, float scale) {{
    __shared__ float p[128];
    __shared__ float red[128];
    int b = blockIdx.y, i = blockIdx.x, t = threadIdx.x;
    const float* qi = q + ((size_t)b * L + i) * 64;
    if (t < L) {{
        const float* kj = k + ((size_t)b * L + t) * 64;
        float s = 0.f;
        for (int d = 0; d < 64; ++d) s += qi[d] * kj[d];
        p[t] = s * scale;
    }}{pad}
    __syncthreads();
    red[t] = p[t];
    __syncthreads();
    for (int st = 64; st > 0; st >>= 1) {{ if (t < st) red[t] = fmaxf(red[t], red[t + st]); __syncthreads(); }}
    float m = red[0];
    __syncthreads();
    float e = {expo};
    p[t] = e;
    red[t] = e;
    __syncthreads();
    for (int st = 64; st > 0; st >>= 1) {{ if (t < st) red[t] += red[t + st]; __syncthreads(); }}
    float inv = 1.f / red[0];
    if (t < 64) {{
        float acc = 0.f;
        for (int j = 0; j < L; ++j) acc += p[j] * v[((size_t)b * L + j) * 64 + t];
        o[((size_t)b * L + i) * 64 + t] = acc * inv;
    }}
}}'''
    attn_host = (f"torch::Tensor run(torch::Tensor q, torch::Tensor k, torch::Tensor v) {{\n"
                 f"    auto qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();\n    int B = qc.size(0), L = qc.size(1);\n"
                 f"    TORCH_CHECK(L <= 128 && qc.size(2) == 64, \"L <= 128, head dim 64\");\n    auto o = torch::empty_like(qc);\n"
                 f"    attn_kernel<<<dim3(L, B), 128, 0, {_STREAM}>>>(qc.data_ptr<float>(), kc.data_ptr<float>(), vc.data_ptr<float>(), "
                 f"o.data_ptr<float>(), L, 0.125f);\n    return o;\n}}")
    adecl = "torch::Tensor run(torch::Tensor q, torch::Tensor k, torch::Tensor v);"
    out += [
        _k("attention", "rowwise", "control", "other_formula",
           "one block per query: scores in shared memory, padded slots -INFINITY, tree max and sum",
           attn.format(pad=" else {\n        p[t] = -INFINITY;\n    }", expo="t < L ? expf(p[t] - m) : 0.f"),
           attn_host, args="q, k, v", call="q, k, v", decl=adecl),
        _k("attention", "padded_scores_uninitialised", "wrong", "uninitialised_memory",
           "score slots L..127 never written, yet they enter the max and the sum",
           attn.format(pad="", expo="expf(p[t] - m)"), attn_host, args="q, k, v", call="q, k, v", decl=adecl),
    ]
    # --- indexing: index_add (2000 x 64 into 100 rows), embedding (1000 x 64, 4096 indices)
    scatter = '''__global__ void scatter_kernel(const float* x, const int64_t* idx, float* out, int R, int D) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= R * D) return;
    int r = i / D, d = i % D;
    {update}
}}'''
    scatter_host = (f"torch::Tensor run(torch::Tensor x, torch::Tensor idx) {{\n    auto xc = x.contiguous();\n"
                    f"    int R = xc.size(0), D = xc.size(1);\n    auto out = torch::zeros({{100, D}}, xc.options());\n"
                    f"    scatter_kernel<<<(R * D + THREADS - 1) / THREADS, THREADS, 0, {_STREAM}>>>(xc.data_ptr<float>(), "
                    f"idx.contiguous().data_ptr<int64_t>(), out.data_ptr<float>(), R, D);\n    return out;\n}}")
    sdecl = "torch::Tensor run(torch::Tensor x, torch::Tensor idx);"
    out += [
        _k("index_add", "atomic_add", "control", "atomic_order", "atomicAdd per element: the order of the adds varies",
           scatter.format(update="atomicAdd(&out[idx[r] * D + d], x[i]);"), scatter_host, args="x, idx", call="x, idx",
           decl=sdecl),
        _k("index_add", "plain_add", "wrong", "race", "out[idx] += x without an atomic: concurrent updates are lost",
           scatter.format(update="out[idx[r] * D + d] += x[i];"), scatter_host, args="x, idx", call="x, idx", decl=sdecl),
        _k("embedding", "gather_rows", "control", "other_formula", "one thread per output element copies w[idx[r], d]",
           "__global__ void gather_kernel(const float* w, const int64_t* idx, float* out, int R, int D) {\n"
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < R * D) out[i] = w[idx[i / D] * D + i % D];\n}",
           f"torch::Tensor run(torch::Tensor w, torch::Tensor idx) {{\n    auto wc = w.contiguous();\n"
           f"    int R = idx.numel(), D = wc.size(1);\n    auto out = torch::empty({{R, D}}, wc.options());\n"
           f"    gather_kernel<<<(R * D + THREADS - 1) / THREADS, THREADS, 0, {_STREAM}>>>(wc.data_ptr<float>(), "
           f"idx.contiguous().data_ptr<int64_t>(), out.data_ptr<float>(), R, D);\n    return out;\n}}",
           args="w, idx", call="w, idx", decl="torch::Tensor run(torch::Tensor w, torch::Tensor idx);"),
        # --- loss: cross entropy (128 x 1000)
        _k("cross_entropy", "row_lse_atomic", "control", "atomic_order",
           "one block per row: max, sum of exp, (lse - x[t]) / N added to the loss with atomicAdd",
           "__global__ void ce_kernel(const float* x, const int64_t* t, float* loss, int cols, int rows) {\n"
           "    __shared__ float sh[32];\n    const float* row = x + (size_t)blockIdx.x * cols;\n    int tid = threadIdx.x;\n"
           "    float m = -INFINITY;\n    for (int j = tid; j < cols; j += THREADS) m = fmaxf(m, row[j]);\n    m = block_max(m, sh);\n"
           "    float s = 0.f;\n    for (int j = tid; j < cols; j += THREADS) s += expf(row[j] - m);\n    s = block_sum(s, sh);\n"
           "    if (tid == 0) atomicAdd(loss, (m + logf(s) - row[t[blockIdx.x]]) / rows);\n}",
           f"torch::Tensor run(torch::Tensor x, torch::Tensor t) {{\n    auto xc = x.contiguous();\n"
           f"    int cols = xc.size(1), rows = xc.size(0);\n    auto loss = torch::zeros({{}}, xc.options());\n"
           f"    ce_kernel<<<rows, THREADS, 0, {_STREAM}>>>(xc.data_ptr<float>(), t.contiguous().data_ptr<int64_t>(), "
           f"loss.data_ptr<float>(), cols, rows);\n    return loss;\n}}",
           args="x, t", call="x, t", decl="torch::Tensor run(torch::Tensor x, torch::Tensor t);"),
    ]
    return out
