// hand-written: layer norm and RMS norm, one block per row, float4 vector path
#include <cuda_fp16.h>

__device__ __forceinline__ float block_sum(float v, float* sh) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  int w = threadIdx.x >> 5, l = threadIdx.x & 31;
  if (l == 0) sh[w] = v;
  __syncthreads();
  v = (threadIdx.x < (blockDim.x >> 5)) ? sh[l] : 0.f;
  if (w == 0) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (l == 0) sh[0] = v;
  }
  __syncthreads();
  v = sh[0];
  __syncthreads();
  return v;
}

template <int VPT>
__global__ void layernorm_f32x4(const float* __restrict__ x, const float* __restrict__ g, const float* __restrict__ b,
                                float* __restrict__ y, int K, float eps) {
  __shared__ float sh[32];
  const float4* xr = reinterpret_cast<const float4*>(x + (size_t)blockIdx.x * K);
  float4 v[VPT];
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    v[k] = xr[threadIdx.x + k * blockDim.x];
    s += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  float mean = block_sum(s, sh) / K;
  float q = 0.f;
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    v[k].x -= mean; v[k].y -= mean; v[k].z -= mean; v[k].w -= mean;
    q += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
  }
  float rstd = rsqrtf(block_sum(q, sh) / K + eps);
  float4* yr = reinterpret_cast<float4*>(y + (size_t)blockIdx.x * K);
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    int e = threadIdx.x + k * blockDim.x;
    float4 gg = reinterpret_cast<const float4*>(g)[e], bb = reinterpret_cast<const float4*>(b)[e];
    yr[e] = make_float4(v[k].x * rstd * gg.x + bb.x, v[k].y * rstd * gg.y + bb.y,
                        v[k].z * rstd * gg.z + bb.z, v[k].w * rstd * gg.w + bb.w);
  }
}

__global__ void rmsnorm_f16x8(const half* __restrict__ x, const half* __restrict__ g, half* __restrict__ y, int K, float eps) {
  __shared__ float sh[32];
  const half* xr = x + (size_t)blockIdx.x * K;
  float ss = 0.f;
  for (int i = threadIdx.x * 8; i < K; i += blockDim.x * 8) {
    half p[8];
    *reinterpret_cast<float4*>(p) = *reinterpret_cast<const float4*>(xr + i);
#pragma unroll
    for (int k = 0; k < 8; ++k) { float f = __half2float(p[k]); ss += f * f; }
  }
  float r = rsqrtf(block_sum(ss, sh) / K + eps);
  for (int i = threadIdx.x * 8; i < K; i += blockDim.x * 8) {
    half p[8], gg[8], o[8];
    *reinterpret_cast<float4*>(p) = *reinterpret_cast<const float4*>(xr + i);
    *reinterpret_cast<float4*>(gg) = *reinterpret_cast<const float4*>(g + i);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = __float2half(__half2float(p[k]) * r * __half2float(gg[k]));
    *reinterpret_cast<float4*>(y + (size_t)blockIdx.x * K + i) = *reinterpret_cast<float4*>(o);
  }
}

template __global__ void layernorm_f32x4<1>(const float*, const float*, const float*, float*, int, float);
template __global__ void layernorm_f32x4<4>(const float*, const float*, const float*, float*, int, float);
