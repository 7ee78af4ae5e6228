// hand-written: a small flash-attention forward, Br x Bc tiles in shared memory, head dim D
template <int Br, int Bc, int D>
__global__ void flash_fwd_tile(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                               float* __restrict__ O, int N, float scale) {
  __shared__ float Ks[Bc][D];
  __shared__ float Vs[Bc][D];
  int bh = blockIdx.y;
  int qi = blockIdx.x * Br + threadIdx.x;  // one query row per thread
  const float* q = Q + ((size_t)bh * N + qi) * D;
  float qr[D], o[D];
#pragma unroll
  for (int d = 0; d < D; ++d) { qr[d] = q[d] * scale; o[d] = 0.f; }
  float m = -1e30f, l = 0.f;
  for (int j0 = 0; j0 < N; j0 += Bc) {
    for (int e = threadIdx.x; e < Bc * D; e += Br) {
      Ks[e / D][e % D] = K[((size_t)bh * N + j0) * D + e];
      Vs[e / D][e % D] = V[((size_t)bh * N + j0) * D + e];
    }
    __syncthreads();
    float s[Bc];
    float mt = m;
#pragma unroll
    for (int j = 0; j < Bc; ++j) {
      float a = 0.f;
#pragma unroll
      for (int d = 0; d < D; ++d) a += qr[d] * Ks[j][d];
      s[j] = a;
      mt = fmaxf(mt, a);
    }
    float c = __expf(m - mt);
    l *= c;
#pragma unroll
    for (int d = 0; d < D; ++d) o[d] *= c;
#pragma unroll
    for (int j = 0; j < Bc; ++j) {
      float p = __expf(s[j] - mt);
      l += p;
#pragma unroll
      for (int d = 0; d < D; ++d) o[d] += p * Vs[j][d];
    }
    m = mt;
    __syncthreads();
  }
  float* out = O + ((size_t)bh * N + qi) * D;
#pragma unroll
  for (int d = 0; d < D; ++d) out[d] = o[d] / l;
}

template __global__ void flash_fwd_tile<32, 8, 16>(const float*, const float*, const float*, float*, int, float);
template __global__ void flash_fwd_tile<64, 16, 32>(const float*, const float*, const float*, float*, int, float);
