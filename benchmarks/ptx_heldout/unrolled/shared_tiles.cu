// Shared-memory tiles with unrolled loads, transposes and inner products.
#include <cuda_runtime.h>

template <int T, int R>
__global__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  __shared__ float tile[T][T + 1];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
#pragma unroll
  for (int j = 0; j < T; j += T / R) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
#pragma unroll
  for (int j = 0; j < T; j += T / R) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

template <int T, int TM>
__global__ void smem_gemv(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float xs[T];
  float acc[TM];
#pragma unroll
  for (int m = 0; m < TM; ++m) acc[m] = 0.f;
  int row = (blockIdx.x * blockDim.x + threadIdx.x) * TM;
  for (int k0 = 0; k0 < n; k0 += T) {
    xs[threadIdx.x % T] = x[k0 + threadIdx.x % T];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k)
#pragma unroll
      for (int m = 0; m < TM; ++m) acc[m] += A[(row + m) * n + k0 + k] * xs[k];
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m) y[row + m] = acc[m];
}

template <int T>
__global__ void tile_sum_rows(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s[T][T];
  s[threadIdx.y][threadIdx.x] = in[(blockIdx.x * T + threadIdx.y) * T + threadIdx.x];
  __syncthreads();
  if (threadIdx.y == 0) {
    float acc = 0.f;
#pragma unroll
    for (int r = 0; r < T; ++r) acc += s[r][threadIdx.x];
    out[blockIdx.x * T + threadIdx.x] = acc;
  }
}

template <int T>
__global__ void smem_vec4_gemm(const float4* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
  __shared__ float4 as[T][T / 4];
  __shared__ float bs[T][T];
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += T) {
    if (threadIdx.x < T / 4) as[threadIdx.y][threadIdx.x] = A[(blockIdx.y * T + threadIdx.y) * (n / 4) + k0 / 4 + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + blockIdx.x * T + threadIdx.x];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T / 4; ++k) {
      float4 a = as[threadIdx.y][k];
      acc += a.x * bs[4 * k][threadIdx.x] + a.y * bs[4 * k + 1][threadIdx.x]
           + a.z * bs[4 * k + 2][threadIdx.x] + a.w * bs[4 * k + 3][threadIdx.x];
    }
    __syncthreads();
  }
  C[(blockIdx.y * T + threadIdx.y) * n + blockIdx.x * T + threadIdx.x] = acc;
}

template __global__ void transpose_tile<32, 4>(const float*, float*, int, int);
template __global__ void transpose_tile<32, 8>(const float*, float*, int, int);
template __global__ void transpose_tile<16, 2>(const float*, float*, int, int);
template __global__ void smem_gemv<32, 2>(const float*, const float*, float*, int);
template __global__ void smem_gemv<16, 4>(const float*, const float*, float*, int);
template __global__ void tile_sum_rows<16>(const float*, float*);
template __global__ void tile_sum_rows<32>(const float*, float*);
template __global__ void smem_vec4_gemm<16>(const float4*, const float*, float*, int);
template __global__ void smem_vec4_gemm<32>(const float4*, const float*, float*, int);
