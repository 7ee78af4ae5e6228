// origin: CUDA-L1 (cudal1-a100-L1-37, KernelBench level 1 task 37), MIT licence; device code of cuda_sources[0], torch host code removed
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
                #include <cooperative_groups.h>

        template <typename scalar_t>
        __global__ void fused_frobenius_norm_kernel(
            const scalar_t* __restrict__ input,
            scalar_t* __restrict__ output,
            const int numel,
            const scalar_t epsilon) {
            
            extern __shared__ scalar_t sdata[];
            
            const int tid = threadIdx.x;
            const int bid = blockIdx.x;
            const int block_size = blockDim.x;
            const int grid_size = gridDim.x * block_size;
            
            // Phase 1: Compute partial sum of squares
            scalar_t thread_sum = 0;
            
            // Grid-stride loop for better memory coalescing
            for (int idx = bid * block_size + tid; idx < numel; idx += grid_size) {
                scalar_t val = input[idx];
                thread_sum += val * val;
            }
            
            // Store partial sum in shared memory
            sdata[tid] = thread_sum;
            __syncthreads();
            
            // Phase 2: Block-level reduction using shared memory
            for (int s = block_size / 2; s > 32; s >>= 1) {
                if (tid < s) {
                    sdata[tid] += sdata[tid + s];
                }
                __syncthreads();
            }
            
            // Final warp reduction using shuffle operations
            if (tid < 32) {
                scalar_t warp_sum = sdata[tid];
                if (block_size >= 64) warp_sum += sdata[tid + 32];
                
                // Warp-level reduction
                for (int offset = 16; offset > 0; offset /= 2) {
                    warp_sum += __shfl_down_sync(0xffffffff, warp_sum, offset);
                }
                
                // Store block result
                if (tid == 0) {
                    sdata[0] = warp_sum;
                }
            }
            __syncthreads();
            
            // Phase 3: Compute inverse norm and normalize
            scalar_t inv_norm;
            if (tid == 0) {
                // Simple sum across blocks (works for single block or small number of blocks)
                scalar_t total_sum = sdata[0];
                
                // Add contributions from other blocks if needed
                // For this implementation, we'll use a single large block
                inv_norm = rsqrt(total_sum + epsilon);
                sdata[0] = inv_norm;  // Store for other threads
            }
            __syncthreads();
            
            // All threads read the computed inverse norm
            inv_norm = sdata[0];
            
            // Phase 4: Normalize the tensor elements
            for (int idx = bid * block_size + tid; idx < numel; idx += grid_size) {
                output[idx] = input[idx] * inv_norm;
            }
        }

        
        
        
        
static void* const __kernelmill_instance_0 = (void*)&fused_frobenius_norm_kernel<float>;
static void* const __kernelmill_instance_1 = (void*)&fused_frobenius_norm_kernel<double>;
