// hand-written: int8 dot products with dp4a, and a shared-memory histogram
__global__ void dot_dp4a_x4(const int4* __restrict__ a, const int4* __restrict__ b, int* out, int n16) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 0;
  for (; i < n16; i += gridDim.x * blockDim.x) {
    int4 x = a[i], y = b[i];
    acc = __dp4a(x.x, y.x, acc);
    acc = __dp4a(x.y, y.y, acc);
    acc = __dp4a(x.z, y.z, acc);
    acc = __dp4a(x.w, y.w, acc);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

template <int K>
__global__ void gemm_int8_rowtile(const char4* __restrict__ A, const char4* __restrict__ B, int* __restrict__ C, int N) {
  int r = blockIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= N) return;
  int acc = 0;
#pragma unroll
  for (int k = 0; k < K / 4; ++k) {
    char4 x = A[r * (K / 4) + k], y = B[c * (K / 4) + k];
    acc = __dp4a(*reinterpret_cast<int*>(&x), *reinterpret_cast<int*>(&y), acc);
  }
  C[r * N + c] = acc;
}

__global__ void histogram256_smem(const unsigned char* __restrict__ x, unsigned* __restrict__ hist, int n) {
  __shared__ unsigned h[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
  __syncthreads();
  const uchar4* x4 = reinterpret_cast<const uchar4*>(x);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += gridDim.x * blockDim.x) {
    uchar4 v = x4[i];
    atomicAdd(&h[v.x], 1u);
    atomicAdd(&h[v.y], 1u);
    atomicAdd(&h[v.z], 1u);
    atomicAdd(&h[v.w], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&hist[i], h[i]);
}

template __global__ void gemm_int8_rowtile<64>(const char4*, const char4*, int*, int);
template __global__ void gemm_int8_rowtile<256>(const char4*, const char4*, int*, int);
