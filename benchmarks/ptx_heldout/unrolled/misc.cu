// Other unrolled shapes: Horner polynomials, FIR with constant memory, reversed
// loops, bit loops, register histograms, double precision.
#include <cuda_runtime.h>

__constant__ float fir_taps[32];

template <int D>
__global__ void horner(const float* __restrict__ x, const float* __restrict__ c, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i], acc = c[D];
#pragma unroll
  for (int k = D - 1; k >= 0; --k) acc = fmaf(acc, v, c[k]);
  y[i] = acc;
}

template <int TAPS>
__global__ void fir(const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < TAPS; ++k) acc += fir_taps[k] * x[i + TAPS - 1 - k];
  y[i] = acc;
}

template <int V>
__global__ void reverse_copy(const int* __restrict__ x, int* __restrict__ y) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * V;
#pragma unroll
  for (int k = V - 1; k >= 0; --k) y[base + V - 1 - k] = x[base + k];
}

__global__ void popcount_bits(const unsigned* __restrict__ x, int* __restrict__ y) {
  unsigned v = x[blockIdx.x * blockDim.x + threadIdx.x];
  int c = 0;
#pragma unroll
  for (int b = 0; b < 32; ++b) c += (v >> b) & 1u;
  y[blockIdx.x * blockDim.x + threadIdx.x] = c;
}

template <int BINS>
__global__ void reg_histogram(const unsigned char* __restrict__ x, int* __restrict__ hist, int per) {
  int h[BINS];
#pragma unroll
  for (int b = 0; b < BINS; ++b) h[b] = 0;
  const unsigned char* p = x + (blockIdx.x * blockDim.x + threadIdx.x) * per;
  for (int i = 0; i < per; ++i) {
    int v = p[i] % BINS;
#pragma unroll
    for (int b = 0; b < BINS; ++b) h[b] += (v == b);
  }
#pragma unroll
  for (int b = 0; b < BINS; ++b) atomicAdd(&hist[b], h[b]);
}

template <int V>
__global__ void daxpy_unrolled(const double* __restrict__ x, double* __restrict__ y, double a) {
  int base = blockIdx.x * blockDim.x * V + threadIdx.x;
#pragma unroll
  for (int k = 0; k < V; ++k) y[base + k * blockDim.x] += a * x[base + k * blockDim.x];
}

template __global__ void horner<6>(const float*, const float*, float*);
template __global__ void horner<12>(const float*, const float*, float*);
template __global__ void fir<9>(const float*, float*);
template __global__ void fir<31>(const float*, float*);
template __global__ void reverse_copy<8>(const int*, int*);
template __global__ void reverse_copy<20>(const int*, int*);
template __global__ void reg_histogram<8>(const unsigned char*, int*, int);
template __global__ void reg_histogram<16>(const unsigned char*, int*, int);
template __global__ void daxpy_unrolled<4>(const double*, double*, double);
template __global__ void daxpy_unrolled<12>(const double*, double*, double);
