// hand-written: dot products with several independent accumulators (ILP), the way hand-tuned
// code breaks a dependency chain
__global__ void dot_ilp4(const float* __restrict__ a, const float* __restrict__ b, float* out, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
  int i = tid * 4;
  for (; i + 3 < n; i += stride * 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  float s = (s0 + s1) + (s2 + s3);
#pragma unroll
  for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

template <int NACC>
__global__ void sum_interleaved(const float4* __restrict__ x, float* out, int n4) {
  float acc[NACC];
#pragma unroll
  for (int k = 0; k < NACC; ++k) acc[k] = 0.f;
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * NACC;
  int stride = gridDim.x * blockDim.x * NACC;
  for (; i + NACC <= n4; i += stride) {
#pragma unroll
    for (int k = 0; k < NACC; ++k) {
      float4 v = x[i + k];
      acc[k] += (v.x + v.y) + (v.z + v.w);
    }
  }
#pragma unroll
  for (int k = 1; k < NACC; ++k) acc[0] += acc[k];
  atomicAdd(out, acc[0]);
}

// complex multiply-accumulate, real and imaginary chains interleaved, 8 taps unrolled
__global__ void cmac8(const float2* __restrict__ x, const float2* __restrict__ h, float2* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 8 > n) return;
  float re = 0.f, im = 0.f;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    float2 a = x[i + k], c = h[k];
    re = fmaf(a.x, c.x, re);
    re = fmaf(-a.y, c.y, re);
    im = fmaf(a.x, c.y, im);
    im = fmaf(a.y, c.x, im);
  }
  y[i] = make_float2(re, im);
}

template __global__ void sum_interleaved<4>(const float4*, float*, int);
template __global__ void sum_interleaved<8>(const float4*, float*, int);
