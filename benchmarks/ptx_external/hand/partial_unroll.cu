// hand-written: loops over runtime bounds unrolled by a factor below the trip count, with the
// remainder handled after the main loop (the shape nvcc emits for `#pragma unroll 4`)
__global__ void saxpy_unroll4(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
#pragma unroll 4
  for (; i < n; i += stride) y[i] = a * x[i] + y[i];
}

__global__ void dot_rows_unroll8(const float* __restrict__ A, const float* __restrict__ v, float* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* row = A + (size_t)r * cols;
  float s = 0.f;
  int k = 0;
#pragma unroll 8
  for (k = 0; k + 7 < cols; k += 8) {
    s += row[k] * v[k];
    s += row[k + 1] * v[k + 1];
    s += row[k + 2] * v[k + 2];
    s += row[k + 3] * v[k + 3];
    s += row[k + 4] * v[k + 4];
    s += row[k + 5] * v[k + 5];
    s += row[k + 6] * v[k + 6];
    s += row[k + 7] * v[k + 7];
  }
  for (; k < cols; ++k) s += row[k] * v[k];
  out[r] = s;
}

template <int U>
__global__ void scale_partial(float* x, float s, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * U;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    int i = base + u;
    if (i < n) x[i] *= s;
  }
}

// a constant trip count of 30 unrolled by 4: seven copies plus two left over
__global__ void poly_eval_unroll4(const float* c, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float xv = x[i], acc = 0.f;
#pragma unroll 4
  for (int k = 0; k < 30; ++k) acc = acc * xv + c[k];
  y[i] = acc;
}

// column sums with the loop over rows unrolled by 2 (runtime row count)
__global__ void col_sum_unroll2(const float* m, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0.f;
#pragma unroll 2
  for (int r = 0; r < rows; ++r) s += m[(size_t)r * cols + c];
  out[c] = s;
}

template __global__ void scale_partial<4>(float*, float, int);
template __global__ void scale_partial<16>(float*, float, int);
