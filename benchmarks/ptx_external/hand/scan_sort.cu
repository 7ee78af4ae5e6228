// hand-written: warp scans and register bitonic sorts (strides that halve/double per step)
__device__ __forceinline__ float warp_inclusive_scan(float v) {
  int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    float t = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += t;
  }
  return v;
}

__global__ void block_scan(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float ws[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  v = warp_inclusive_scan(v);
  int w = threadIdx.x >> 5, l = threadIdx.x & 31;
  if (l == 31) ws[w] = v;
  __syncthreads();
  if (w == 0) ws[l] = warp_inclusive_scan(l < (blockDim.x >> 5) ? ws[l] : 0.f);
  __syncthreads();
  if (w > 0) v += ws[w - 1];
  if (i < n) y[i] = v;
}

// bitonic sort of 16 keys held in registers by one thread
__global__ void bitonic16_regs(float* data, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if ((t + 1) * 16 > n) return;
  float k[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) k[i] = data[t * 16 + i];
#pragma unroll
  for (int size = 2; size <= 16; size <<= 1)
#pragma unroll
    for (int stride = size >> 1; stride > 0; stride >>= 1)
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        int j = i ^ stride;
        if (j > i) {
          bool up = (i & size) == 0;
          float a = k[i], b = k[j];
          if ((a > b) == up) { k[i] = b; k[j] = a; }
        }
      }
#pragma unroll
  for (int i = 0; i < 16; ++i) data[t * 16 + i] = k[i];
}

// warp bitonic across lanes with shuffles
__global__ void bitonic_warp(float* data) {
  int lane = threadIdx.x & 31;
  float v = data[blockIdx.x * 32 + lane];
#pragma unroll
  for (int size = 2; size <= 32; size <<= 1)
#pragma unroll
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      float o = __shfl_xor_sync(0xffffffffu, v, stride);
      bool up = ((lane & size) == 0) == ((lane & stride) == 0);
      v = up ? fminf(v, o) : fmaxf(v, o);
    }
  data[blockIdx.x * 32 + lane] = v;
}
