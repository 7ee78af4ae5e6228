// written in the style of LLM answers: group norm, depthwise conv, avg pool with fixed windows
#define WARP_SIZE 32
#define BLOCK_SIZE 256

__inline__ __device__ float warpReduceSum(float val) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) val += __shfl_down_sync(0xffffffff, val, offset);
  return val;
}

__inline__ __device__ float blockReduceSum(float val) {
  static __shared__ float shared[32];
  int lane = threadIdx.x % WARP_SIZE;
  int wid = threadIdx.x / WARP_SIZE;
  val = warpReduceSum(val);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (threadIdx.x < blockDim.x / WARP_SIZE) ? shared[lane] : 0.0f;
  if (wid == 0) val = warpReduceSum(val);
  return val;
}

__global__ void group_norm_kernel(const float* __restrict__ x, float* __restrict__ y, const float* gamma, const float* beta,
                                  int C, int HW, int G, float eps) {
  int n = blockIdx.x / G, g = blockIdx.x % G;
  int cpg = C / G;
  const float* xp = x + ((size_t)n * C + g * cpg) * HW;
  float* yp = y + ((size_t)n * C + g * cpg) * HW;
  int cnt = cpg * HW;
  float s = 0.f, ss = 0.f;
  for (int i = threadIdx.x; i < cnt; i += BLOCK_SIZE) { float v = xp[i]; s += v; ss += v * v; }
  __shared__ float mean_s, var_s;
  s = blockReduceSum(s);
  __syncthreads();
  ss = blockReduceSum(ss);
  if (threadIdx.x == 0) { mean_s = s / cnt; var_s = ss / cnt - mean_s * mean_s; }
  __syncthreads();
  float inv = rsqrtf(var_s + eps);
  for (int i = threadIdx.x; i < cnt; i += BLOCK_SIZE) {
    int c = g * cpg + i / HW;
    yp[i] = (xp[i] - mean_s) * inv * gamma[c] + beta[c];
  }
}

template <int K>
__global__ void depthwise_conv2d_kernel(const float* __restrict__ in, const float* __restrict__ w, float* __restrict__ out,
                                        int C, int H, int W, int pad) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, yv = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.z;
  if (x >= W || yv >= H) return;
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < K; ++i) {
#pragma unroll
    for (int j = 0; j < K; ++j) {
      int iy = yv + i - pad, ix = x + j - pad;
      if (iy >= 0 && iy < H && ix >= 0 && ix < W) acc += in[(c * H + iy) * W + ix] * w[(c * K + i) * K + j];
    }
  }
  out[(c * H + yv) * W + x] = acc;
}

__global__ void avg_pool2d_4x4_kernel(const float* in, float* out, int H, int W) {
  int ox = blockIdx.x * blockDim.x + threadIdx.x, oy = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.z;
  int OH = H / 4, OW = W / 4;
  if (ox >= OW || oy >= OH) return;
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++) s += in[(c * H + oy * 4 + i) * W + ox * 4 + j];
  out[(c * OH + oy) * OW + ox] = s * 0.0625f;
}

template __global__ void depthwise_conv2d_kernel<3>(const float*, const float*, float*, int, int, int, int);
template __global__ void depthwise_conv2d_kernel<5>(const float*, const float*, float*, int, int, int, int);
template __global__ void depthwise_conv2d_kernel<7>(const float*, const float*, float*, int, int, int, int);
