// origin: CUDA-L1 (cudal1-3090-L3-45, KernelBench level 3 task 45), MIT licence; device code of cuda_sources[0], torch host code removed
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

template <typename scalar_t>
__inline__ __device__ scalar_t warpReduceMax(scalar_t val) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        val = max(val, __shfl_down_sync(0xffffffff, val, offset));
    return val;
}

template <typename scalar_t>
__inline__ __device__ scalar_t warpReduceSum(scalar_t val) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

template <typename scalar_t>
__global__ void fused_batchnorm_softmax_kernel(
    const scalar_t* __restrict__ input,
    scalar_t* __restrict__ output,
    const scalar_t* __restrict__ weight,
    const scalar_t* __restrict__ bias,
    const scalar_t* __restrict__ running_mean,
    const scalar_t* __restrict__ running_var,
    const scalar_t epsilon,
    const int batch_size,
    const int channels,
    const int height,
    const int width) {
    
    // Each block processes one row in one channel of one batch item
    const int b = blockIdx.z / channels;
    const int c = blockIdx.z % channels;
    const int h = blockIdx.y;
    
    if (b >= batch_size || c >= channels || h >= height) return;
    
    // Get BatchNorm parameters for this channel
    const scalar_t gamma = weight[c];
    const scalar_t beta = bias[c];
    const scalar_t mean = running_mean[c];
    const scalar_t var = running_var[c];
    const scalar_t inv_std = rsqrt(var + epsilon);
    
    // Input/output pointers for this row
    const scalar_t* row_input = input + ((b * channels + c) * height + h) * width;
    scalar_t* row_output = output + ((b * channels + c) * height + h) * width;
    
    // Thread ID and warp ID
    const int tid = threadIdx.x;
    const int warp_id = tid / 32;
    const int lane_id = tid % 32;
    const int warps_per_block = (blockDim.x + 31) / 32;
    
    // Shared memory for reductions
    __shared__ scalar_t shared_data[32]; // For max and sum values from each warp
    
    // Step 1: Apply BatchNorm and find max value for softmax
    scalar_t thread_max = -INFINITY;
    
    // Each thread processes multiple elements with stride equal to block size
    // Using vectorized loads for better memory throughput when possible
    if (width % 4 == 0 && sizeof(scalar_t) == 4 && tid * 4 + 3 < width) { // float data type
        for (int w = tid * 4; w < width; w += blockDim.x * 4) {
            if (w + 3 < width) {
                const float4 input4 = *reinterpret_cast<const float4*>(row_input + w);
                
                // Apply BatchNorm to each component
                const float x1 = (input4.x - mean) * inv_std * gamma + beta;
                const float x2 = (input4.y - mean) * inv_std * gamma + beta;
                const float x3 = (input4.z - mean) * inv_std * gamma + beta;
                const float x4 = (input4.w - mean) * inv_std * gamma + beta;
                
                // Update max
                thread_max = max(thread_max, x1);
                thread_max = max(thread_max, x2);
                thread_max = max(thread_max, x3);
                thread_max = max(thread_max, x4);
            }
        }
    } else {
        for (int w = tid; w < width; w += blockDim.x) {
            const scalar_t x = (row_input[w] - mean) * inv_std * gamma + beta;
            thread_max = max(thread_max, x);
        }
    }
    
    // Warp-level reduction for max
    thread_max = warpReduceMax(thread_max);
    
    // First thread in each warp writes to shared memory
    if (lane_id == 0) {
        shared_data[warp_id] = thread_max;
    }
    
    __syncthreads();
    
    // First warp reduces across all warps
    scalar_t max_val = -INFINITY;
    if (warp_id == 0 && lane_id < warps_per_block) {
        max_val = shared_data[lane_id];
        max_val = warpReduceMax(max_val);
        
        // Broadcast max_val to shared memory for all threads to use
        if (lane_id == 0) {
            shared_data[0] = max_val;
        }
    }
    
    __syncthreads();
    max_val = shared_data[0];
    
    // Step 2: Compute exp(x - max) and sum
    scalar_t thread_sum = 0.0;
    
    // Using vectorized operations for better throughput when possible
    if (width % 4 == 0 && sizeof(scalar_t) == 4 && tid * 4 + 3 < width) { // float data type
        for (int w = tid * 4; w < width; w += blockDim.x * 4) {
            if (w + 3 < width) {
                const float4 input4 = *reinterpret_cast<const float4*>(row_input + w);
                float4 output4;
                
                // Apply BatchNorm and compute exp(x - max) for each component
                const float x1 = (input4.x - mean) * inv_std * gamma + beta;
                const float x2 = (input4.y - mean) * inv_std * gamma + beta;
                const float x3 = (input4.z - mean) * inv_std * gamma + beta;
                const float x4 = (input4.w - mean) * inv_std * gamma + beta;
                
                output4.x = exp(x1 - max_val);
                output4.y = exp(x2 - max_val);
                output4.z = exp(x3 - max_val);
                output4.w = exp(x4 - max_val);
                
                // Store temporarily
                *reinterpret_cast<float4*>(row_output + w) = output4;
                
                // Update sum
                thread_sum += output4.x + output4.y + output4.z + output4.w;
            }
        }
    } else {
        for (int w = tid; w < width; w += blockDim.x) {
            const scalar_t x = (row_input[w] - mean) * inv_std * gamma + beta;
            const scalar_t exp_val = exp(x - max_val);
            row_output[w] = exp_val;  // Store temporarily
            thread_sum += exp_val;
        }
    }
    
    // Warp-level reduction for sum
    thread_sum = warpReduceSum(thread_sum);
    
    // First thread in each warp writes to shared memory
    if (lane_id == 0) {
        shared_data[warp_id] = thread_sum;
    }
    
    __syncthreads();
    
    // First warp reduces across all warps
    scalar_t sum_exp = 0.0;
    if (warp_id == 0 && lane_id < warps_per_block) {
        sum_exp = shared_data[lane_id];
        sum_exp = warpReduceSum(sum_exp);
        
        // Broadcast sum_exp to shared memory for all threads to use
        if (lane_id == 0) {
            shared_data[0] = sum_exp;
        }
    }
    
    __syncthreads();
    sum_exp = shared_data[0];
    
    // Step 3: Normalize with vectorized memory access when possible
    const scalar_t inv_sum = 1.0 / sum_exp;
    
    if (width % 4 == 0 && sizeof(scalar_t) == 4 && tid * 4 + 3 < width) { // float data type
        for (int w = tid * 4; w < width; w += blockDim.x * 4) {
            if (w + 3 < width) {
                float4 output4 = *reinterpret_cast<float4*>(row_output + w);
                
                // Normalize each component
                output4.x *= inv_sum;
                output4.y *= inv_sum;
                output4.z *= inv_sum;
                output4.w *= inv_sum;
                
                // Store final result
                *reinterpret_cast<float4*>(row_output + w) = output4;
            }
        }
    } else {
        for (int w = tid; w < width; w += blockDim.x) {
            row_output[w] *= inv_sum;
        }
    }
}



static void* const __kernelmill_instance_0 = (void*)&fused_batchnorm_softmax_kernel<float>;
static void* const __kernelmill_instance_1 = (void*)&fused_batchnorm_softmax_kernel<double>;
