// origin: CUDA-L1 (cudal1-a100-L1-35, KernelBench level 1 task 35), MIT licence; device code of a string literal with __global__[0], torch host code removed
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
        #include <vector>

        // Constants for optimization
        #define WARP_SIZE 32
        #define BLOCK_SIZE 256
        #define ELEMENTS_PER_THREAD 4

        // Optimized CUDA kernel for computing mean and variance using Welford's algorithm
        template <typename scalar_t>
        __global__ void group_norm_stats_kernel(
            const scalar_t* __restrict__ input,
            scalar_t* __restrict__ mean,
            scalar_t* __restrict__ var,
            int N, int C, int HW,
            int num_groups, int channels_per_group) {
            
            // Each block handles one group from one batch element
            const int batch_idx = blockIdx.x;
            const int group_idx = blockIdx.y;
            
            // Calculate starting point for this group
            const int group_size = channels_per_group * HW;
            const int group_offset = batch_idx * C * HW + group_idx * channels_per_group * HW;
            
            // Shared memory for partial sums
            extern __shared__ float shared_mem[];
            float* shared_mean = shared_mem;
            float* shared_m2 = shared_mem + blockDim.x;
            float* shared_count = shared_mem + 2 * blockDim.x;
            
            // Initialize thread accumulators (Welford's algorithm)
            float thread_mean = 0.0f;
            float thread_m2 = 0.0f;
            int thread_count = 0;
            
            // Each thread processes multiple elements with stride
            // Process ELEMENTS_PER_THREAD elements at a time for better memory coalescing
            int i = threadIdx.x * ELEMENTS_PER_THREAD;
            const int stride = blockDim.x * ELEMENTS_PER_THREAD;
            
            for (; i + ELEMENTS_PER_THREAD - 1 < group_size; i += stride) {
                float vals[ELEMENTS_PER_THREAD];
                
                #pragma unroll
                for (int j = 0; j < ELEMENTS_PER_THREAD; j++) {
                    vals[j] = static_cast<float>(input[group_offset + i + j]);
                    thread_count++;
                    
                    // Welford's online algorithm for mean and variance
                    float delta = vals[j] - thread_mean;
                    thread_mean += delta / thread_count;
                    float delta2 = vals[j] - thread_mean;
                    thread_m2 += delta * delta2;
                }
            }
            
            // Process remaining elements individually
            for (; i < group_size; i += blockDim.x) {
                if (i < group_size) {
                    const scalar_t val = input[group_offset + i];
                    thread_count++;
                    
                    // Welford's online algorithm for mean and variance
                    float delta = static_cast<float>(val) - thread_mean;
                    thread_mean += delta / thread_count;
                    float delta2 = static_cast<float>(val) - thread_mean;
                    thread_m2 += delta * delta2;
                }
            }
            
            // Store in shared memory
            shared_mean[threadIdx.x] = thread_mean;
            shared_m2[threadIdx.x] = thread_m2;
            shared_count[threadIdx.x] = thread_count;
            __syncthreads();
            
            // Warp-level reduction
            if (threadIdx.x < WARP_SIZE) {
                float warp_mean = 0.0f;
                float warp_m2 = 0.0f;
                int warp_count = 0;
                
                // Each thread in the first warp reduces data from multiple threads
                for (int i = threadIdx.x; i < blockDim.x; i += WARP_SIZE) {
                    float other_mean = shared_mean[i];
                    float other_m2 = shared_m2[i];
                    int other_count = shared_count[i];
                    
                    if (other_count > 0) {
                        // Combine using Welford's parallel algorithm
                        int combined_count = warp_count + other_count;
                        if (combined_count > 0) {  // Avoid division by zero
                            float delta = other_mean - warp_mean;
                            warp_mean += delta * (other_count / static_cast<float>(combined_count));
                            warp_m2 += other_m2 + delta * delta * warp_count * other_count / combined_count;
                            warp_count = combined_count;
                        }
                    }
                }
                
                // Store back to shared memory
                shared_mean[threadIdx.x] = warp_mean;
                shared_m2[threadIdx.x] = warp_m2;
                shared_count[threadIdx.x] = warp_count;
            }
            __syncthreads();
            
            // Final reduction using warp shuffle operations
            if (threadIdx.x == 0) {
                float final_mean = 0.0f;
                float final_m2 = 0.0f;
                int final_count = 0;
                
                // Combine results from all warps
                for (int i = 0; i < min(WARP_SIZE, blockDim.x); i++) {
                    float other_mean = shared_mean[i];
                    float other_m2 = shared_m2[i];
                    int other_count = shared_count[i];
                    
                    if (other_count > 0) {
                        // Combine using Welford's parallel algorithm
                        int combined_count = final_count + other_count;
                        if (combined_count > 0) {  // Avoid division by zero
                            float delta = other_mean - final_mean;
                            final_mean += delta * (other_count / static_cast<float>(combined_count));
                            final_m2 += other_m2 + delta * delta * final_count * other_count / combined_count;
                            final_count = combined_count;
                        }
                    }
                }
                
                // Write results to global memory
                mean[batch_idx * num_groups + group_idx] = final_mean;
                var[batch_idx * num_groups + group_idx] = final_count > 0 ? final_m2 / final_count : 0.0f;
            }
        }

        // Optimized CUDA kernel for normalization with vectorized memory access
        template <typename scalar_t>
        __global__ void group_norm_kernel(
            const scalar_t* __restrict__ input,
            scalar_t* __restrict__ output,
            const scalar_t* __restrict__ mean,
            const scalar_t* __restrict__ var,
            const scalar_t* __restrict__ weight,
            const scalar_t* __restrict__ bias,
            int N, int C, int HW,
            int num_groups, int channels_per_group,
            float eps) {
            
            // Use 2D grid for batch and channel dimensions
            const int batch_idx = blockIdx.x;
            const int c = blockIdx.y * blockDim.y + threadIdx.y;
            
            // Early exit if channel is out of bounds
            if (c >= C) return;
            
            // Determine which group this channel belongs to
            const int group_idx = c / channels_per_group;
            
            // Get mean and variance for this batch and group
            const float group_mean = static_cast<float>(mean[batch_idx * num_groups + group_idx]);
            const float group_var = static_cast<float>(var[batch_idx * num_groups + group_idx]);
            const float inv_std = rsqrtf(group_var + eps);
            
            // Get weight and bias for this channel
            const float gamma = static_cast<float>(weight[c]);
            const float beta = static_cast<float>(bias[c]);
            
            // Process spatial locations with vectorized access where possible
            const int base_idx = batch_idx * C * HW + c * HW;
            
            // Process ELEMENTS_PER_THREAD elements at a time when possible
            int hw = threadIdx.x * ELEMENTS_PER_THREAD;
            const int hw_step = blockDim.x * ELEMENTS_PER_THREAD;
            
            // Vector processing
            for (; hw + ELEMENTS_PER_THREAD - 1 < HW; hw += hw_step) {
                float vals[ELEMENTS_PER_THREAD];
                
                #pragma unroll
                for (int i = 0; i < ELEMENTS_PER_THREAD; i++) {
                    vals[i] = static_cast<float>(input[base_idx + hw + i]);
                    vals[i] = (vals[i] - group_mean) * inv_std;
                    vals[i] = vals[i] * gamma + beta;
                    output[base_idx + hw + i] = static_cast<scalar_t>(vals[i]);
                }
            }
            
            // Process remaining elements individually
            for (; hw < HW; hw += blockDim.x) {
                if (hw < HW) {
                    const int idx = base_idx + hw;
                    float val = static_cast<float>(input[idx]);
                    val = (val - group_mean) * inv_std;
                    output[idx] = static_cast<scalar_t>(val * gamma + beta);
                }
            }
        }

        // C++ interface
        

        
        
static void* const __kernelmill_instance_0 = (void*)&group_norm_stats_kernel<float>;
static void* const __kernelmill_instance_1 = (void*)&group_norm_stats_kernel<double>;
static void* const __kernelmill_instance_2 = (void*)&group_norm_kernel<float>;
static void* const __kernelmill_instance_3 = (void*)&group_norm_kernel<double>;
