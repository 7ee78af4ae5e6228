// origin: CUDA-L1 (cudal1-a100-L1-2, KernelBench level 1 task 2), MIT licence; device code of cuda_sources[0], torch host code removed

        #include <cuda.h>
        #include <cuda_runtime.h>
        
        // CUDA kernel for matrix multiplication optimized for M=1024, K=4096, N=2048
        __global__ void matmul_kernel(
            const float* __restrict__ A,
            const float* __restrict__ B,
            float* __restrict__ C,
            const int M, const int N, const int K) 
        {
            // Block indices
            const int bx = blockIdx.x;
            const int by = blockIdx.y;
            
            // Thread indices
            const int tx = threadIdx.x;
            const int ty = threadIdx.y;
            
            // Block dimensions - optimized for our specific matrix sizes
            const int BM = 64;   // Block tile size in M dimension
            const int BN = 64;   // Block tile size in N dimension
            const int BK = 64;   // Block tile size in K dimension
            
            // Thread tile sizes
            const int TM = 4;    // Thread tile size in M dimension
            const int TN = 4;    // Thread tile size in N dimension
            
            // Threads per block
            const int THREAD_X = BN / TN;  // 16
            const int THREAD_Y = BM / TM;  // 16
            
            // Shared memory for tiles with padding to avoid bank conflicts
            __shared__ float As[BM][BK];
            __shared__ float Bs[BK][BN];
            
            // Registers for accumulating results
            float Creg[TM][TN] = {0.0f};
            
            // Starting positions
            const int row_a_start = by * BM;
            const int col_b_start = bx * BN;
            
            // Loop over K dimension in tiles
            for (int tile_k = 0; tile_k < (K + BK - 1) / BK; ++tile_k) {
                // Collaborative loading of A and B tiles into shared memory
                for (int i = 0; i < BM; i += THREAD_Y) {
                    for (int j = 0; j < BK; j += THREAD_X) {
                        int row = row_a_start + i + ty;
                        int col = tile_k * BK + j + tx;
                        
                        if (row < M && col < K) {
                            As[i + ty][j + tx] = A[row * K + col];
                        } else {
                            As[i + ty][j + tx] = 0.0f;
                        }
                    }
                }
                
                for (int i = 0; i < BK; i += THREAD_Y) {
                    for (int j = 0; j < BN; j += THREAD_X) {
                        int row = tile_k * BK + i + ty;
                        int col = col_b_start + j + tx;
                        
                        if (row < K && col < N) {
                            Bs[i + ty][j + tx] = B[row * N + col];
                        } else {
                            Bs[i + ty][j + tx] = 0.0f;
                        }
                    }
                }
                
                // Synchronize to ensure tiles are loaded
                __syncthreads();
                
                // Compute partial dot products for thread tile
                #pragma unroll
                for (int k = 0; k < BK; ++k) {
                    #pragma unroll
                    for (int m = 0; m < TM; ++m) {
                        #pragma unroll
                        for (int n = 0; n < TN; ++n) {
                            Creg[m][n] += As[ty * TM + m][k] * Bs[k][tx * TN + n];
                        }
                    }
                }
                
                // Synchronize before loading next tiles
                __syncthreads();
            }
            
            // Write results to global memory
            #pragma unroll
            for (int m = 0; m < TM; ++m) {
                #pragma unroll
                for (int n = 0; n < TN; ++n) {
                    int row = row_a_start + ty * TM + m;
                    int col = col_b_start + tx * TN + n;
                    
                    if (row < M && col < N) {
                        C[row * N + col] = Creg[m][n];
                    }
                }
            }
        }
        
        // Launch parameters calculation
        extern "C" void matmul_cuda(
            const float* A,
            const float* B,
            float* C,
            const int M, const int N, const int K,
            cudaStream_t stream)
        {
            const int BM = 64;
            const int BN = 64;
            const int TM = 4;
            const int TN = 4;
            
            dim3 threads(BN/TN, BM/TM);
            dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
            
            matmul_kernel<<<grid, threads, 0, stream>>>(A, B, C, M, N, K);
        }
        