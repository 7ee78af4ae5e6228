// Unrolled loops over vector loads and stores (float4, float2, int4, double2).
#include <cuda_runtime.h>

template <int V>
__global__ void scale4(const float4* __restrict__ x, float4* __restrict__ y, float s) {
  int base = blockIdx.x * blockDim.x * V + threadIdx.x;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    float4 v = x[base + k * blockDim.x];
    v.x *= s; v.y *= s; v.z *= s; v.w *= s;
    y[base + k * blockDim.x] = v;
  }
}

template <int V>
__global__ void dot4(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out) {
  const float4* a4 = reinterpret_cast<const float4*>(a) + (blockIdx.x * blockDim.x + threadIdx.x) * V;
  const float4* b4 = reinterpret_cast<const float4*>(b) + (blockIdx.x * blockDim.x + threadIdx.x) * V;
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    float4 p = a4[k], q = b4[k];
    acc += p.x * q.x + p.y * q.y + p.z * q.z + p.w * q.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <int V>
__global__ void complex_mul(const float2* __restrict__ a, const float2* __restrict__ b, float2* __restrict__ c) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * V;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    float2 p = a[base + k], q = b[base + k];
    c[base + k] = make_float2(p.x * q.x - p.y * q.y, p.x * q.y + p.y * q.x);
  }
}

template <int V>
__global__ void int4_xor(const int4* __restrict__ x, int4* __restrict__ y, int key) {
  int base = blockIdx.x * blockDim.x * V + threadIdx.x;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    int4 v = x[base + k * blockDim.x];
    y[base + k * blockDim.x] = make_int4(v.x ^ key, v.y ^ (key << 1), v.z ^ (key << 2), v.w ^ (key << 3));
  }
}

template <int V>
__global__ void double2_add(const double2* __restrict__ x, double2* __restrict__ y) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * V;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    double2 v = x[base + k];
    y[base + k] = make_double2(v.x + v.y, v.x - v.y);
  }
}

template __global__ void scale4<2>(const float4*, float4*, float);
template __global__ void scale4<8>(const float4*, float4*, float);
template __global__ void dot4<4>(const float*, const float*, float*);
template __global__ void dot4<16>(const float*, const float*, float*);
template __global__ void complex_mul<4>(const float2*, const float2*, float2*);
template __global__ void complex_mul<10>(const float2*, const float2*, float2*);
template __global__ void int4_xor<6>(const int4*, int4*, int);
template __global__ void double2_add<8>(const double2*, double2*);
