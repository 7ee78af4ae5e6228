// hand-written: unrolled loops whose copies differ only in a bound check (predicates) or a constant
template <int VEC>
__global__ void relu_vec_guarded(const float* __restrict__ x, float* __restrict__ y, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
  for (int k = 0; k < VEC; ++k)
    if (base + k < n) y[base + k] = fmaxf(x[base + k], 0.f);
}

// masks per lane group: each copy compares against a different constant
__global__ void bucketize8(const float* __restrict__ x, int* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  int b = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) b += v > (k * 0.25f - 1.0f) ? 1 : 0;
  out[i] = b;
}

// clamp ladder: alternating min/max with per-step immediates
__global__ void bit_unpack32(const unsigned* __restrict__ w, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = w[i];
#pragma unroll
  for (int k = 0; k < 32; ++k) out[(size_t)i * 32 + k] = (v >> k) & 1u ? 1.f : -1.f;
}

// int4 dequantisation: eight nibbles per word, scale per group
__global__ void dequant_int4(const unsigned* __restrict__ q, const float* __restrict__ s, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = q[i];
  float sc = s[i / 16];
#pragma unroll
  for (int k = 0; k < 8; ++k) out[(size_t)i * 8 + k] = (float)((int)((v >> (4 * k)) & 0xF) - 8) * sc;
}

// row-wise top-1 over a strip of 16 columns with index tracking (selects on each copy)
__global__ void argmax16(const float* __restrict__ x, int* __restrict__ idx, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* p = x + (size_t)r * 16;
  float best = p[0];
  int bi = 0;
#pragma unroll
  for (int k = 1; k < 16; ++k) {
    float v = p[k];
    if (v > best) { best = v; bi = k; }
  }
  idx[r] = bi;
}

template __global__ void relu_vec_guarded<4>(const float*, float*, int);
template __global__ void relu_vec_guarded<8>(const float*, float*, int);
