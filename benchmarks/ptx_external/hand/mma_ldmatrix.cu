// hand-written: mma.sync m16n8k16 through inline PTX, fragments loaded with ldmatrix
#include <cuda_fp16.h>
#include <cstdint>

#define LDMATRIX_X4(R0, R1, R2, R3, addr) \
  asm volatile("ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\n" \
               : "=r"(R0), "=r"(R1), "=r"(R2), "=r"(R3) : "r"(addr))
#define LDMATRIX_X2(R0, R1, addr) \
  asm volatile("ldmatrix.sync.aligned.x2.m8n8.shared.b16 {%0, %1}, [%2];\n" : "=r"(R0), "=r"(R1) : "r"(addr))
#define HMMA16816(RD0, RD1, RA0, RA1, RA2, RA3, RB0, RB1, RC0, RC1) \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%8, %9};\n" \
               : "=r"(RD0), "=r"(RD1) : "r"(RA0), "r"(RA1), "r"(RA2), "r"(RA3), "r"(RB0), "r"(RB1), "r"(RC0), "r"(RC1))

template <int MMA_M_TILES = 2, int MMA_N_TILES = 4>
__global__ void hgemm_mma_m16n8k16_mma2x4(half* A, half* B, half* C, int M, int N, int K) {
  __shared__ half s_a[MMA_M_TILES * 16][16];
  __shared__ half s_b[MMA_N_TILES * 8][16];
  int lane = threadIdx.x % 32;
  int bm = blockIdx.y * MMA_M_TILES * 16, bn = blockIdx.x * MMA_N_TILES * 8;
  uint32_t RC[MMA_M_TILES][MMA_N_TILES][2];
#pragma unroll
  for (int i = 0; i < MMA_M_TILES; ++i)
#pragma unroll
    for (int j = 0; j < MMA_N_TILES; ++j) RC[i][j][0] = RC[i][j][1] = 0;
  for (int k = 0; k < K; k += 16) {
#pragma unroll
    for (int r = lane; r < MMA_M_TILES * 16; r += 32)
      *reinterpret_cast<float4*>(&s_a[r][0]) = *reinterpret_cast<float4*>(&A[(bm + r) * K + k]),
      *reinterpret_cast<float4*>(&s_a[r][8]) = *reinterpret_cast<float4*>(&A[(bm + r) * K + k + 8]);
#pragma unroll
    for (int r = lane; r < MMA_N_TILES * 8; r += 32)
      *reinterpret_cast<float4*>(&s_b[r][0]) = *reinterpret_cast<float4*>(&B[(bn + r) * K + k]),
      *reinterpret_cast<float4*>(&s_b[r][8]) = *reinterpret_cast<float4*>(&B[(bn + r) * K + k + 8]);
    __syncwarp();
    uint32_t RA[MMA_M_TILES][4], RB[MMA_N_TILES][2];
#pragma unroll
    for (int i = 0; i < MMA_M_TILES; ++i) {
      uint32_t addr = __cvta_generic_to_shared(&s_a[i * 16 + lane % 16][(lane / 16) * 8]);
      LDMATRIX_X4(RA[i][0], RA[i][1], RA[i][2], RA[i][3], addr);
    }
#pragma unroll
    for (int j = 0; j < MMA_N_TILES; ++j) {
      uint32_t addr = __cvta_generic_to_shared(&s_b[j * 8 + lane % 8][((lane / 8) % 2) * 8]);
      LDMATRIX_X2(RB[j][0], RB[j][1], addr);
    }
#pragma unroll
    for (int i = 0; i < MMA_M_TILES; ++i)
#pragma unroll
      for (int j = 0; j < MMA_N_TILES; ++j)
        HMMA16816(RC[i][j][0], RC[i][j][1], RA[i][0], RA[i][1], RA[i][2], RA[i][3], RB[j][0], RB[j][1],
                  RC[i][j][0], RC[i][j][1]);
    __syncwarp();
  }
#pragma unroll
  for (int i = 0; i < MMA_M_TILES; ++i)
#pragma unroll
    for (int j = 0; j < MMA_N_TILES; ++j) {
      int r = bm + i * 16 + lane / 4, c = bn + j * 8 + (lane % 4) * 2;
      *reinterpret_cast<uint32_t*>(&C[r * N + c]) = RC[i][j][0];
      *reinterpret_cast<uint32_t*>(&C[(r + 8) * N + c]) = RC[i][j][1];
    }
}

template __global__ void hgemm_mma_m16n8k16_mma2x4<2, 4>(half*, half*, half*, int, int, int);
template __global__ void hgemm_mma_m16n8k16_mma2x4<4, 4>(half*, half*, half*, int, int, int);
