// hand-written: tensor-core GEMM with the WMMA API, each warp owning a 2x4 grid of 16x16 tiles
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

template <int WARP_M = 2, int WARP_N = 4>
__global__ void hgemm_wmma_m16n16k16_warp2x4(const half* A, const half* B, float* C, int M, int N, int K) {
  constexpr int WM = 16, WN = 16, WK = 16;
  int warp = threadIdx.x / 32;
  int wr = warp / 2, wc = warp % 2;
  int row0 = (blockIdx.y * 4 + wr) * WARP_M * WM;
  int col0 = (blockIdx.x * 2 + wc) * WARP_N * WN;
  wmma::fragment<wmma::accumulator, WM, WN, WK, float> acc[WARP_M][WARP_N];
#pragma unroll
  for (int i = 0; i < WARP_M; ++i)
#pragma unroll
    for (int j = 0; j < WARP_N; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k = 0; k < K; k += WK) {
    wmma::fragment<wmma::matrix_a, WM, WN, WK, half, wmma::row_major> fa[WARP_M];
    wmma::fragment<wmma::matrix_b, WM, WN, WK, half, wmma::row_major> fb[WARP_N];
#pragma unroll
    for (int i = 0; i < WARP_M; ++i) wmma::load_matrix_sync(fa[i], A + (row0 + i * WM) * K + k, K);
#pragma unroll
    for (int j = 0; j < WARP_N; ++j) wmma::load_matrix_sync(fb[j], B + k * N + col0 + j * WN, N);
#pragma unroll
    for (int i = 0; i < WARP_M; ++i)
#pragma unroll
      for (int j = 0; j < WARP_N; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
  }
#pragma unroll
  for (int i = 0; i < WARP_M; ++i)
#pragma unroll
    for (int j = 0; j < WARP_N; ++j)
      wmma::store_matrix_sync(C + (row0 + i * WM) * N + col0 + j * WN, acc[i][j], N, wmma::mem_row_major);
}

// shared-memory staged WMMA: tiles of 64x64 copied with 128-bit loads, k-loop of 2 sub-steps unrolled
__global__ void hgemm_wmma_smem_64x64(const half* __restrict__ A, const half* __restrict__ B, half* C, int M, int N, int K) {
  __shared__ half sa[64][32 + 8];
  __shared__ half sb[32][64 + 8];
  int warp = threadIdx.x / 32;  // 4 warps, 2x2, each 32x32
  int wr = warp >> 1, wc = warp & 1;
  wmma::fragment<wmma::accumulator, 16, 16, 16, half> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], __float2half(0.f));
  const half* Ab = A + blockIdx.y * 64 * K;
  const half* Bb = B + blockIdx.x * 64;
  for (int k0 = 0; k0 < K; k0 += 32) {
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      int e = (threadIdx.x + t * 128) * 8;
      int r = e / 32, c = e % 32;
      *reinterpret_cast<float4*>(&sa[r][c]) = *reinterpret_cast<const float4*>(Ab + r * K + k0 + c);
      int rb = e / 64, cb = e % 64;
      *reinterpret_cast<float4*>(&sb[rb][cb]) = *reinterpret_cast<const float4*>(Bb + (k0 + rb) * N + cb);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 32; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &sa[wr * 32 + i * 16][kk], 40);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &sb[kk][wc * 32 + j * 16], 72);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(C + (blockIdx.y * 64 + wr * 32 + i * 16) * N + blockIdx.x * 64 + wc * 32 + j * 16,
                              acc[i][j], N, wmma::mem_row_major);
}

template __global__ void hgemm_wmma_m16n16k16_warp2x4<2, 4>(const half*, const half*, float*, int, int, int);
template __global__ void hgemm_wmma_m16n16k16_warp2x4<4, 2>(const half*, const half*, float*, int, int, int);
