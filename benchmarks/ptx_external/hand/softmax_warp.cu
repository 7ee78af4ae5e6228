// hand-written: row softmax with one warp per row, each lane holding NCOLS/32 values in registers
#include <cfloat>

template <int NCOLS>
__global__ void softmax_warp_row(const float* __restrict__ x, float* __restrict__ y, int rows) {
  constexpr int PER_LANE = NCOLS / 32;
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * NCOLS;
  float v[PER_LANE];
  float m = -FLT_MAX;
#pragma unroll
  for (int k = 0; k < PER_LANE; ++k) {
    v[k] = xr[lane + k * 32];
    m = fmaxf(m, v[k]);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < PER_LANE; ++k) {
    v[k] = __expf(v[k] - m);
    s += v[k];
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  float inv = 1.f / s;
  float* yr = y + (size_t)row * NCOLS;
#pragma unroll
  for (int k = 0; k < PER_LANE; ++k) yr[lane + k * 32] = v[k] * inv;
}

// online softmax (running max and sum merged per step), float4 loads, runtime columns
__global__ void online_softmax_f32x4(const float* x, float* y, int cols) {
  int row = blockIdx.x;
  const float4* xr = reinterpret_cast<const float4*>(x + (size_t)row * cols);
  float4* yr = reinterpret_cast<float4*>(y + (size_t)row * cols);
  float m = -FLT_MAX, d = 0.f;
  for (int i = threadIdx.x; i < cols / 4; i += blockDim.x) {
    float4 a = xr[i];
    float mx = fmaxf(fmaxf(a.x, a.y), fmaxf(a.z, a.w));
    float nm = fmaxf(m, mx);
    d = d * __expf(m - nm) + __expf(a.x - nm) + __expf(a.y - nm) + __expf(a.z - nm) + __expf(a.w - nm);
    m = nm;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float om = __shfl_xor_sync(0xffffffffu, m, o);
    float od = __shfl_xor_sync(0xffffffffu, d, o);
    float nm = fmaxf(m, om);
    d = d * __expf(m - nm) + od * __expf(om - nm);
    m = nm;
  }
  __shared__ float sm[32], sd[32];
  int w = threadIdx.x >> 5, l = threadIdx.x & 31;
  if (l == 0) { sm[w] = m; sd[w] = d; }
  __syncthreads();
  if (w == 0) {
    m = l < blockDim.x / 32 ? sm[l] : -FLT_MAX;
    d = l < blockDim.x / 32 ? sd[l] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      float om = __shfl_xor_sync(0xffffffffu, m, o);
      float od = __shfl_xor_sync(0xffffffffu, d, o);
      float nm = fmaxf(m, om);
      d = d * __expf(m - nm) + od * __expf(om - nm);
      m = nm;
    }
    if (l == 0) { sm[0] = m; sd[0] = d; }
  }
  __syncthreads();
  m = sm[0];
  float inv = 1.f / sd[0];
  for (int i = threadIdx.x; i < cols / 4; i += blockDim.x) {
    float4 a = xr[i];
    yr[i] = make_float4(__expf(a.x - m) * inv, __expf(a.y - m) * inv, __expf(a.z - m) * inv, __expf(a.w - m) * inv);
  }
}

template __global__ void softmax_warp_row<128>(const float*, float*, int);
template __global__ void softmax_warp_row<512>(const float*, float*, int);
template __global__ void softmax_warp_row<1024>(const float*, float*, int);
