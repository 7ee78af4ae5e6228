// Unrolled loop bodies with predicates: bounds checks, masks, clamps per iteration.
#include <cuda_runtime.h>

template <int V>
__global__ void bounded_axpy(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  int base = blockIdx.x * blockDim.x * V + threadIdx.x;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    int i = base + k * blockDim.x;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}

template <int V>
__global__ void masked_copy(const int* __restrict__ x, int* __restrict__ y, const unsigned* __restrict__ masks) {
  unsigned m = masks[blockIdx.x * blockDim.x + threadIdx.x];
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * V;
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (m & (1u << k)) y[base + k] = x[base + k];
}

template <int V>
__global__ void clamp_count(const float* __restrict__ x, float* __restrict__ y, int* __restrict__ hits,
                            float lo, float hi) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  int c = 0;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    float v = x[base + k];
    if (v < lo) { v = lo; ++c; }
    if (v > hi) { v = hi; ++c; }
    y[base + k] = v;
  }
  if (c) atomicAdd(hits, c);
}

template <int R>
__global__ void padded_stencil(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
#pragma unroll
  for (int d = -R; d <= R; ++d) {
    int j = i + d;
    acc += (j >= 0 && j < n) ? x[j] * (1.0f / (2 * R + 1)) : 0.f;
  }
  if (i < n) y[i] = acc;
}

template __global__ void bounded_axpy<4>(const float*, float*, float, int);
template __global__ void bounded_axpy<8>(const float*, float*, float, int);
template __global__ void bounded_axpy<16>(const float*, float*, float, int);
template __global__ void masked_copy<8>(const int*, int*, const unsigned*);
template __global__ void masked_copy<32>(const int*, int*, const unsigned*);
template __global__ void clamp_count<4>(const float*, float*, int*, float, float);
template __global__ void clamp_count<12>(const float*, float*, int*, float, float);
template __global__ void padded_stencil<2>(const float*, float*, int);
template __global__ void padded_stencil<5>(const float*, float*, int);
