// Warp-shuffle trees: butterflies over several values, scans, arg-reductions.
#include <cuda_runtime.h>

template <int NV>
__global__ void multi_butterfly(const float* __restrict__ x, float* __restrict__ out) {
  float v[NV];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < NV; ++k) v[k] = x[t * NV + k];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
#pragma unroll
    for (int k = 0; k < NV; ++k) v[k] += __shfl_xor_sync(0xffffffffu, v[k], off);
  if ((threadIdx.x & 31) == 0)
#pragma unroll
    for (int k = 0; k < NV; ++k) out[(t >> 5) * NV + k] = v[k];
}

__global__ void warp_inclusive_scan(const int* __restrict__ x, int* __restrict__ y) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int v = x[t];
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    int n = __shfl_up_sync(0xffffffffu, v, off);
    if (lane >= off) v += n;
  }
  y[t] = v;
}

__global__ void warp_argmax(const float* __restrict__ x, int* __restrict__ idx) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float best = x[t];
  int arg = t;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    float ob = __shfl_down_sync(0xffffffffu, best, off);
    int oa = __shfl_down_sync(0xffffffffu, arg, off);
    if (ob > best || (ob == best && oa < arg)) { best = ob; arg = oa; }
  }
  if ((threadIdx.x & 31) == 0) idx[t >> 5] = arg;
}

__global__ void softmax_row32(const float* __restrict__ x, float* __restrict__ y) {
  int row = blockIdx.x, lane = threadIdx.x;
  float v = x[row * 32 + lane], m = v;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  float e = __expf(v - m), s = e;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  y[row * 32 + lane] = e / s;
}

template <int W>
__global__ void subwarp_sum(const double* __restrict__ x, double* __restrict__ out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  double v = x[t];
#pragma unroll
  for (int off = W / 2; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off, W);
  if ((threadIdx.x % W) == 0) out[t / W] = v;
}

template __global__ void multi_butterfly<2>(const float*, float*);
template __global__ void multi_butterfly<4>(const float*, float*);
template __global__ void multi_butterfly<8>(const float*, float*);
template __global__ void subwarp_sum<8>(const double*, double*);
template __global__ void subwarp_sum<32>(const double*, double*);
