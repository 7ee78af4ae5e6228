// written in the style of LLM answers to KernelBench tasks: fused conv/matmul epilogues,
// TILE_SIZE macros, `#pragma unroll` on every inner loop
#define TILE_SIZE 16
#define KSIZE 3

__global__ void fused_conv3x3_bias_relu_kernel(const float* __restrict__ input, const float* __restrict__ weight,
                                               const float* __restrict__ bias, float* __restrict__ output,
                                               int batch, int in_ch, int out_ch, int H, int W) {
  int ow = blockIdx.x * blockDim.x + threadIdx.x;
  int oh = blockIdx.y * blockDim.y + threadIdx.y;
  int bo = blockIdx.z;
  int b = bo / out_ch, oc = bo % out_ch;
  int OH = H - KSIZE + 1, OW = W - KSIZE + 1;
  if (ow >= OW || oh >= OH) return;
  float sum = bias[oc];
  for (int ic = 0; ic < in_ch; ++ic) {
    const float* in_ptr = input + ((b * in_ch + ic) * H + oh) * W + ow;
    const float* w_ptr = weight + (oc * in_ch + ic) * KSIZE * KSIZE;
#pragma unroll
    for (int kh = 0; kh < KSIZE; ++kh) {
#pragma unroll
      for (int kw = 0; kw < KSIZE; ++kw) {
        sum += in_ptr[kh * W + kw] * w_ptr[kh * KSIZE + kw];
      }
    }
  }
  output[((b * out_ch + oc) * OH + oh) * OW + ow] = fmaxf(sum, 0.0f);
}

__global__ void matmul_tiled_gelu_kernel(const float* A, const float* B, const float* bias, float* C, int M, int N, int K) {
  __shared__ float As[TILE_SIZE][TILE_SIZE];
  __shared__ float Bs[TILE_SIZE][TILE_SIZE];
  int row = blockIdx.y * TILE_SIZE + threadIdx.y;
  int col = blockIdx.x * TILE_SIZE + threadIdx.x;
  float sum = 0.0f;
  for (int t = 0; t < (K + TILE_SIZE - 1) / TILE_SIZE; ++t) {
    int a_col = t * TILE_SIZE + threadIdx.x;
    int b_row = t * TILE_SIZE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE_SIZE; ++k) {
      sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    }
    __syncthreads();
  }
  if (row < M && col < N) {
    float x = sum + bias[col];
    C[row * N + col] = 0.5f * x * (1.0f + erff(x * 0.70710678f));
  }
}

// 2x2 outputs per thread: an LLM's "register tiling" of the same matmul
__global__ void matmul_tiled_2x2_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[2 * TILE_SIZE][TILE_SIZE];
  __shared__ float Bs[TILE_SIZE][2 * TILE_SIZE];
  int row = blockIdx.y * 2 * TILE_SIZE + threadIdx.y;
  int col = blockIdx.x * 2 * TILE_SIZE + threadIdx.x;
  float c00 = 0.f, c01 = 0.f, c10 = 0.f, c11 = 0.f;
  for (int t = 0; t < K; t += TILE_SIZE) {
    As[threadIdx.y][threadIdx.x] = A[row * K + t + threadIdx.x];
    As[threadIdx.y + TILE_SIZE][threadIdx.x] = A[(row + TILE_SIZE) * K + t + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * N + col];
    Bs[threadIdx.y][threadIdx.x + TILE_SIZE] = B[(t + threadIdx.y) * N + col + TILE_SIZE];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE_SIZE; ++k) {
      float a0 = As[threadIdx.y][k], a1 = As[threadIdx.y + TILE_SIZE][k];
      float b0 = Bs[k][threadIdx.x], b1 = Bs[k][threadIdx.x + TILE_SIZE];
      c00 += a0 * b0; c01 += a0 * b1; c10 += a1 * b0; c11 += a1 * b1;
    }
    __syncthreads();
  }
  C[row * N + col] = c00;
  C[row * N + col + TILE_SIZE] = c01;
  C[(row + TILE_SIZE) * N + col] = c10;
  C[(row + TILE_SIZE) * N + col + TILE_SIZE] = c11;
}

__global__ void cross_entropy_rows_kernel(const float* logits, const long* target, float* loss, int C) {
  extern __shared__ float sdata[];
  int row = blockIdx.x;
  const float* l = logits + (size_t)row * C;
  float mx = -INFINITY;
  for (int i = threadIdx.x; i < C; i += blockDim.x) mx = fmaxf(mx, l[i]);
  sdata[threadIdx.x] = mx;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sdata[threadIdx.x] = fmaxf(sdata[threadIdx.x], sdata[threadIdx.x + s]);
    __syncthreads();
  }
  mx = sdata[0];
  __syncthreads();
  float sum = 0.f;
  for (int i = threadIdx.x; i < C; i += blockDim.x) sum += expf(l[i] - mx);
  sdata[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) loss[row] = logf(sdata[0]) + mx - l[target[row]];
}
