// Half and bfloat16 kernels with unrolled loops (half2 arithmetic, conversions).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <int V>
__global__ void half2_fma(const __half2* __restrict__ x, const __half2* __restrict__ w, __half2* __restrict__ y) {
  int base = blockIdx.x * blockDim.x * V + threadIdx.x;
  __half2 acc = __float2half2_rn(0.f);
#pragma unroll
  for (int k = 0; k < V; ++k) acc = __hfma2(x[base + k * blockDim.x], w[k], acc);
  y[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <int V>
__global__ void half_to_float_scale(const __half* __restrict__ x, float* __restrict__ y, float s) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * V;
#pragma unroll
  for (int k = 0; k < V; ++k) y[base + k] = __half2float(x[base + k]) * s;
}

template <int V>
__global__ void bf16_gelu(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y) {
  int base = blockIdx.x * blockDim.x * V + threadIdx.x;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    float v = __bfloat162float(x[base + k * blockDim.x]);
    v = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    y[base + k * blockDim.x] = __float2bfloat16(v);
  }
}

template <int V>
__global__ void half_rowmax(const __half* __restrict__ x, __half* __restrict__ out) {
  const __half* row = x + (blockIdx.x * blockDim.x + threadIdx.x) * V;
  __half m = row[0];
#pragma unroll
  for (int k = 1; k < V; ++k) m = __hmax(m, row[k]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = m;
}

template __global__ void half2_fma<4>(const __half2*, const __half2*, __half2*);
template __global__ void half2_fma<16>(const __half2*, const __half2*, __half2*);
template __global__ void half_to_float_scale<8>(const __half*, float*, float);
template __global__ void half_to_float_scale<24>(const __half*, float*, float);
template __global__ void bf16_gelu<2>(const __nv_bfloat16*, __nv_bfloat16*);
template __global__ void bf16_gelu<6>(const __nv_bfloat16*, __nv_bfloat16*);
template __global__ void half_rowmax<16>(const __half*, __half*);
template __global__ void half_rowmax<64>(const __half*, __half*);
