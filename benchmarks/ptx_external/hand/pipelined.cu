// hand-written: software-pipelined loops (the next tile's loads issued before this tile's math)
#include <cuda_pipeline.h>
#include <cstdint>

// register double buffering: prefetch the next float4 while consuming the current one
__global__ void pipelined_stream_sum(const float4* __restrict__ x, float* out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  float s = 0.f;
  if (i < n4) {
    float4 cur = x[i];
    for (int j = i + stride; j < n4; j += stride) {
      float4 nxt = x[j];
      s += cur.x * cur.x + cur.y * cur.y + cur.z * cur.z + cur.w * cur.w;
      cur = nxt;
    }
    s += cur.x * cur.x + cur.y * cur.y + cur.z * cur.z + cur.w * cur.w;
  }
  atomicAdd(out, s);
}

// cp.async multi-stage pipeline over a K loop: STAGES tiles in flight
template <int STAGES, int TILE>
__global__ void cp_async_stage_dot(const float* __restrict__ a, const float* __restrict__ b, float* out, int K) {
  __shared__ __align__(16) float sa[STAGES][TILE];
  __shared__ __align__(16) float sb[STAGES][TILE];
  int tid = threadIdx.x;  // TILE / 4 threads
  int ntiles = K / TILE;
  const float* ab = a + (size_t)blockIdx.x * K;
  const float* bb = b + (size_t)blockIdx.x * K;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    __pipeline_memcpy_async(&sa[s][tid * 4], ab + s * TILE + tid * 4, 16);
    __pipeline_memcpy_async(&sb[s][tid * 4], bb + s * TILE + tid * 4, 16);
    __pipeline_commit();
  }
  float acc = 0.f;
  for (int t = 0; t < ntiles; ++t) {
    int nt = t + STAGES - 1;
    if (nt < ntiles) {
      __pipeline_memcpy_async(&sa[nt % STAGES][tid * 4], ab + nt * TILE + tid * 4, 16);
      __pipeline_memcpy_async(&sb[nt % STAGES][tid * 4], bb + nt * TILE + tid * 4, 16);
    }
    __pipeline_commit();
    __pipeline_wait_prior(STAGES - 1);
    __syncthreads();
    int st = t % STAGES;
#pragma unroll
    for (int e = 0; e < 4; ++e) acc += sa[st][tid * 4 + e] * sb[st][tid * 4 + e];
    __syncthreads();
  }
  atomicAdd(out + blockIdx.x, acc);
}

// a fully unrolled pipeline: 8 steps, each step's load feeds the step after next
__global__ void unrolled_pipeline8(const float* __restrict__ x, const float* __restrict__ w, float* y, int ld) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  const float* xr = x + (size_t)r * ld;
  float l0 = xr[0], l1 = xr[1];
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    float cur = l0;
    l0 = l1;
    if (k + 2 < 8) l1 = xr[k + 2];
    acc = fmaf(cur, w[k], acc);
  }
  y[r] = acc;
}

template __global__ void cp_async_stage_dot<2, 512>(const float*, const float*, float*, int);
template __global__ void cp_async_stage_dot<3, 512>(const float*, const float*, float*, int);
template __global__ void cp_async_stage_dot<4, 256>(const float*, const float*, float*, int);
