// origin: CUDA-L1 (cudal1-a100-L1-3, KernelBench level 1 task 3), MIT licence; device code of a string literal with __global__[0], torch host code removed
// nvcc flags: --expt-relaxed-constexpr
#include <cstdint>
#include <cstddef>
#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>
#include <algorithm>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>


                #include <cuda.h>
        #include <cuda_runtime.h>

        // CUDA kernel for batched matrix multiplication with optimized tiling and thread coarsening
        template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int THREAD_M, int THREAD_N>
        __global__ void batched_matmul_kernel(
            const float* __restrict__ A,
            const float* __restrict__ B,
            float* __restrict__ C,
            const int m,
            const int n,
            const int k) {
            
            // Block indices
            const int bx = blockIdx.x;
            const int by = blockIdx.y;
            const int batch_idx = blockIdx.z;
            
            // Thread indices
            const int tx = threadIdx.x;
            const int ty = threadIdx.y;
            
            // Calculate the row and column this thread is responsible for
            const int row_start = by * BLOCK_M + ty * THREAD_M;
            const int col_start = bx * BLOCK_N + tx * THREAD_N;
            
            // Batch offsets
            const int batch_offset_a = batch_idx * m * k;
            const int batch_offset_b = batch_idx * k * n;
            const int batch_offset_c = batch_idx * m * n;
            
            // Shared memory for double buffering with padding to avoid bank conflicts
            __shared__ float As[2][BLOCK_M][BLOCK_K + 2];
            __shared__ float Bs[2][BLOCK_K][BLOCK_N + 2];
            
            // Registers for accumulating results
            float C_local[THREAD_M][THREAD_N] = {{0.0f}};
            
            // Loop over k-dimension tiles
            const int num_k_tiles = (k + BLOCK_K - 1) / BLOCK_K;
            
            // Load first tile of A and B into shared memory (buffer 0)
            int buffer = 0;
            
            // Collaborative loading of A and B tiles into shared memory
            #pragma unroll
            for (int i = 0; i < THREAD_M; ++i) {
                const int row = row_start + i;
                if (row < m && tx < BLOCK_K && tx < k) {
                    As[buffer][ty * THREAD_M + i][tx] = A[batch_offset_a + row * k + tx];
                }
                else {
                    As[buffer][ty * THREAD_M + i][tx] = 0.0f;
                }
            }
            
            #pragma unroll
            for (int i = 0; i < THREAD_N; ++i) {
                const int col = col_start + i;
                if (ty < BLOCK_K && ty < k && col < n) {
                    Bs[buffer][ty][tx * THREAD_N + i] = B[batch_offset_b + ty * n + col];
                }
                else {
                    Bs[buffer][ty][tx * THREAD_N + i] = 0.0f;
                }
            }
            
            __syncthreads();
            
            // Main loop over k-dimension tiles
            for (int tile_idx = 0; tile_idx < num_k_tiles; ++tile_idx) {
                // Next buffer index
                const int next_buffer = 1 - buffer;
                
                // Prefetch next tile if not the last tile
                if (tile_idx < num_k_tiles - 1) {
                    const int next_tile_k = (tile_idx + 1) * BLOCK_K;
                    
                    #pragma unroll
                    for (int i = 0; i < THREAD_M; ++i) {
                        const int row = row_start + i;
                        if (row < m && tx + next_tile_k < k) {
                            As[next_buffer][ty * THREAD_M + i][tx] = A[batch_offset_a + row * k + next_tile_k + tx];
                        }
                        else {
                            As[next_buffer][ty * THREAD_M + i][tx] = 0.0f;
                        }
                    }
                    
                    #pragma unroll
                    for (int i = 0; i < THREAD_N; ++i) {
                        const int col = col_start + i;
                        if (ty + next_tile_k < k && col < n) {
                            Bs[next_buffer][ty][tx * THREAD_N + i] = B[batch_offset_b + (next_tile_k + ty) * n + col];
                        }
                        else {
                            Bs[next_buffer][ty][tx * THREAD_N + i] = 0.0f;
                        }
                    }
                }
                
                // Compute current tile
                #pragma unroll
                for (int k_idx = 0; k_idx < BLOCK_K; ++k_idx) {
                    // Load values from shared memory to registers for reuse
                    float a_vals[THREAD_M];
                    float b_vals[THREAD_N];
                    
                    #pragma unroll
                    for (int m_idx = 0; m_idx < THREAD_M; ++m_idx) {
                        a_vals[m_idx] = As[buffer][ty * THREAD_M + m_idx][k_idx];
                    }
                    
                    #pragma unroll
                    for (int n_idx = 0; n_idx < THREAD_N; ++n_idx) {
                        b_vals[n_idx] = Bs[buffer][k_idx][tx * THREAD_N + n_idx];
                    }
                    
                    // Compute outer product for each thread's block
                    #pragma unroll
                    for (int m_idx = 0; m_idx < THREAD_M; ++m_idx) {
                        #pragma unroll
                        for (int n_idx = 0; n_idx < THREAD_N; ++n_idx) {
                            C_local[m_idx][n_idx] += a_vals[m_idx] * b_vals[n_idx];
                        }
                    }
                }
                
                // Swap buffers
                buffer = next_buffer;
                
                // Synchronize before loading the next tile
                __syncthreads();
            }
            
            // Write results to global memory
            #pragma unroll
            for (int m_idx = 0; m_idx < THREAD_M; ++m_idx) {
                const int row = row_start + m_idx;
                if (row < m) {
                    #pragma unroll
                    for (int n_idx = 0; n_idx < THREAD_N; ++n_idx) {
                        const int col = col_start + n_idx;
                        if (col < n) {
                            C[batch_offset_c + row * n + col] = C_local[m_idx][n_idx];
                        }
                    }
                }
            }
        }

        // C++ wrapper for the CUDA kernel
        

        // Python bindings
        
        
static void* const __kernelmill_instance_0 = (void*)&batched_matmul_kernel<(64), (64), (16), (4), (4)>;
