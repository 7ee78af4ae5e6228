// Kernels without unrolled loops: straight-line code, data-dependent branches,
// loops with a runtime trip count kept rolled (`#pragma unroll 1`).
#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void relu(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

__global__ void leaky_select(const float* __restrict__ x, float* __restrict__ y, float slope, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  y[i] = v > 0.f ? v : (v > -4.f ? v * slope : -4.f * slope);
}

__global__ void grid_stride_scale(const float* __restrict__ x, float* __restrict__ y, float s, int n) {
#pragma unroll 1
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = x[i] * s;
}

__global__ void atomic_hist(const int* __restrict__ x, int* __restrict__ hist, int bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int b = x[i] % bins;
    atomicAdd(&hist[b < 0 ? b + bins : b], 1);
  }
}

__global__ void naive_matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float acc = 0.f;
#pragma unroll 1
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}

__global__ void layer_norm_naive(const float* __restrict__ x, float* __restrict__ y, int d) {
  const float* r = x + blockIdx.x * d;
  float mean = 0.f, var = 0.f;
#pragma unroll 1
  for (int i = 0; i < d; ++i) mean += r[i];
  mean /= d;
#pragma unroll 1
  for (int i = 0; i < d; ++i) { float t = r[i] - mean; var += t * t; }
  float inv = rsqrtf(var / d + 1e-5f);
#pragma unroll 1
  for (int i = threadIdx.x; i < d; i += blockDim.x) y[blockIdx.x * d + i] = (r[i] - mean) * inv;
}

__global__ void gather_rows(const float* __restrict__ table, const long long* __restrict__ idx,
                            float* __restrict__ out, int d) {
  long long r = idx[blockIdx.x];
  if (threadIdx.x < d) out[blockIdx.x * d + threadIdx.x] = table[r * d + threadIdx.x];
}

__global__ void half_sigmoid(const __half* __restrict__ x, __half* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = __half2float(x[i]);
    y[i] = __float2half(1.f / (1.f + __expf(-v)));
  }
}

__global__ void block_sum_dynamic(const float* __restrict__ x, float* __restrict__ out, int n) {
  extern __shared__ float s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
#pragma unroll 1
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

__global__ void clamp_index(const int* __restrict__ x, int* __restrict__ y, int lo, int hi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = min(max(x[i], lo), hi);
}

__global__ void bitonic_step(float* __restrict__ x, int j, int k) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, l = i ^ j;
  if (l > i) {
    float a = x[i], b = x[l];
    bool up = (i & k) == 0;
    if ((up && a > b) || (!up && a < b)) { x[i] = b; x[l] = a; }
  }
}

__global__ void csr_spmv(const int* __restrict__ rowptr, const int* __restrict__ col, const float* __restrict__ val,
                         const float* __restrict__ x, float* __restrict__ y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0.f;
#pragma unroll 1
  for (int p = rowptr[r]; p < rowptr[r + 1]; ++p) acc += val[p] * x[col[p]];
  y[r] = acc;
}
