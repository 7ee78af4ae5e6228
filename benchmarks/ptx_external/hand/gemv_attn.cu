// hand-written: GEMV (warp per row) and a decode-step attention score kernel
#include <cuda_fp16.h>

__global__ void sgemv_k128_f32x4(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y, int M, int K) {
  int lane = threadIdx.x % 32;
  int m = blockIdx.x * blockDim.y + threadIdx.y;
  if (m >= M) return;
  float sum = 0.f;
  int NUM_WARPS = ((K + 3) / 4 + 31) / 32;
#pragma unroll 4
  for (int w = 0; w < NUM_WARPS; ++w) {
    int k = (w * 32 + lane) * 4;
    float4 av = reinterpret_cast<const float4*>(&a[m * K + k])[0];
    float4 xv = reinterpret_cast<const float4*>(&x[k])[0];
    sum += av.x * xv.x + av.y * xv.y + av.z * xv.z + av.w * xv.w;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (lane == 0) y[m] = sum;
}

template <int HEAD_DIM>
__global__ void decode_scores(const half* __restrict__ q, const half* __restrict__ kcache, float* __restrict__ s,
                              int T, float scale) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int h = blockIdx.y;
  if (t >= T) return;
  const half2* qh = reinterpret_cast<const half2*>(q + h * HEAD_DIM);
  const half2* kh = reinterpret_cast<const half2*>(kcache + ((size_t)h * T + t) * HEAD_DIM);
  float acc = 0.f;
#pragma unroll
  for (int d = 0; d < HEAD_DIM / 2; ++d) {
    float2 a = __half22float2(qh[d]), b = __half22float2(kh[d]);
    acc += a.x * b.x + a.y * b.y;
  }
  s[(size_t)h * T + t] = acc * scale;
}

// per-thread online-softmax weighted sum over V rows (head dim held in registers)
template <int D>
__global__ void attn_pv_online(const float* __restrict__ sc, const float* __restrict__ v, float* __restrict__ out, int T) {
  int h = blockIdx.x;
  float o[D];
#pragma unroll
  for (int d = 0; d < D; ++d) o[d] = 0.f;
  float m = -1e30f, l = 0.f;
  for (int t = 0; t < T; ++t) {
    float x = sc[h * T + t];
    float nm = fmaxf(m, x), c = __expf(m - nm), p = __expf(x - nm);
    l = l * c + p;
    const float* vr = v + ((size_t)h * T + t) * D;
#pragma unroll
    for (int d = 0; d < D; ++d) o[d] = o[d] * c + p * vr[d];
    m = nm;
  }
#pragma unroll
  for (int d = 0; d < D; ++d) out[h * D + d] = o[d] / l;
}

template __global__ void decode_scores<64>(const half*, const half*, float*, int, float);
template __global__ void decode_scores<128>(const half*, const half*, float*, int, float);
template __global__ void attn_pv_online<16>(const float*, const float*, float*, int);
template __global__ void attn_pv_online<32>(const float*, const float*, float*, int);
