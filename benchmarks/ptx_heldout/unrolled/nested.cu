// Nested unrolled loops of different (also odd, non-power-of-two) factors.
#include <cuda_runtime.h>

template <int A, int B>
__global__ void outer_product(const float* __restrict__ u, const float* __restrict__ v, float* __restrict__ out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float a[A], b[B];
#pragma unroll
  for (int i = 0; i < A; ++i) a[i] = u[t * A + i];
#pragma unroll
  for (int j = 0; j < B; ++j) b[j] = v[t * B + j];
#pragma unroll
  for (int i = 0; i < A; ++i)
#pragma unroll
    for (int j = 0; j < B; ++j) out[(t * A + i) * B + j] = a[i] * b[j];
}

template <int KH, int KW>
__global__ void conv2d_window(const float* __restrict__ img, const float* __restrict__ w, float* __restrict__ out, int W) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < KH; ++i)
#pragma unroll
    for (int j = 0; j < KW; ++j) acc += img[(y + i) * W + x + j] * w[i * KW + j];
  out[y * W + x] = acc;
}

template <int P, int Q, int S>
__global__ void three_level(const float* __restrict__ x, float* __restrict__ y) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * P * Q * S;
  float acc = 0.f;
#pragma unroll
  for (int p = 0; p < P; ++p)
#pragma unroll
    for (int q = 0; q < Q; ++q)
#pragma unroll
      for (int s = 0; s < S; ++s) acc = fmaf(acc, 0.5f, x[base + (p * Q + q) * S + s]);
  y[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <int M, int N>
__global__ void small_matmul_regs(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float ra[M][N], rb[N];
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int k = 0; k < N; ++k) ra[i][k] = a[(t * M + i) * N + k];
#pragma unroll
  for (int k = 0; k < N; ++k) rb[k] = b[t * N + k];
#pragma unroll
  for (int i = 0; i < M; ++i) {
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < N; ++k) s += ra[i][k] * rb[k];
    c[t * M + i] = s;
  }
}

template __global__ void outer_product<3, 5>(const float*, const float*, float*);
template __global__ void outer_product<4, 6>(const float*, const float*, float*);
template __global__ void outer_product<7, 2>(const float*, const float*, float*);
template __global__ void conv2d_window<3, 3>(const float*, const float*, float*, int);
template __global__ void conv2d_window<5, 7>(const float*, const float*, float*, int);
template __global__ void three_level<2, 3, 4>(const float*, float*);
template __global__ void three_level<4, 2, 2>(const float*, float*);
template __global__ void small_matmul_regs<3, 3>(const float*, const float*, float*);
template __global__ void small_matmul_regs<4, 8>(const float*, const float*, float*);
