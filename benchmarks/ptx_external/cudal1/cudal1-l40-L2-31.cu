// origin: CUDA-L1 (cudal1-l40-L2-31, KernelBench level 2 task 31), MIT licence; device code of cuda_sources[0], torch host code removed
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
__global__ void fused_conv2d_min_bias_kernel(
    const scalar_t* __restrict__ input,
    const scalar_t* __restrict__ weight,
    const scalar_t* __restrict__ bias,
    scalar_t* __restrict__ output,
    const int batch_size,
    const int in_channels,
    const int height,
    const int width,
    const int out_channels,
    const int kernel_size,
    const scalar_t scaled_constant_value,
    const int out_height,
    const int out_width) {
    
    // Shared memory for input and weights
    extern __shared__ scalar_t shared_mem[];
    scalar_t* shared_input = shared_mem;
    scalar_t* shared_weight = shared_mem + (blockDim.y + kernel_size - 1) * (blockDim.x + kernel_size - 1);
    
    // Calculate output position
    const int batch_id = blockIdx.z / out_channels;
    const int out_ch = blockIdx.z % out_channels;
    const int h_out_start = blockIdx.y * blockDim.y;
    const int w_out_start = blockIdx.x * blockDim.x;
    const int h_out = h_out_start + threadIdx.y;
    const int w_out = w_out_start + threadIdx.x;
    
    // Load weights into shared memory
    const int thread_id = threadIdx.y * blockDim.x + threadIdx.x;
    const int total_threads = blockDim.x * blockDim.y;
    const int weights_per_filter = in_channels * kernel_size * kernel_size;
    
    for (int i = thread_id; i < weights_per_filter; i += total_threads) {
        const int ic = i / (kernel_size * kernel_size);
        const int kh = (i % (kernel_size * kernel_size)) / kernel_size;
        const int kw = (i % (kernel_size * kernel_size)) % kernel_size;
        
        const int w_idx = ((out_ch * in_channels + ic) * kernel_size + kh) * kernel_size + kw;
        shared_weight[i] = weight[w_idx];
    }
    
    // Load input patch into shared memory
    const int h_in_start = h_out_start;
    const int w_in_start = w_out_start;
    
    for (int h_offset = threadIdx.y; h_offset < blockDim.y + kernel_size - 1; h_offset += blockDim.y) {
        const int h_in = h_in_start + h_offset;
        
        for (int w_offset = threadIdx.x; w_offset < blockDim.x + kernel_size - 1; w_offset += blockDim.x) {
            const int w_in = w_in_start + w_offset;
            
            // Check bounds
            if (h_in < height && w_in < width) {
                for (int ic = 0; ic < in_channels; ++ic) {
                    const int in_idx = ((batch_id * in_channels + ic) * height + h_in) * width + w_in;
                    const int sm_idx = h_offset * (blockDim.x + kernel_size - 1) + w_offset;
                    shared_input[sm_idx] = input[in_idx];
                }
            } else {
                const int sm_idx = h_offset * (blockDim.x + kernel_size - 1) + w_offset;
                shared_input[sm_idx] = 0.0f;
            }
        }
    }
    
    __syncthreads();
    
    // Check if thread is within output bounds
    if (h_out >= out_height || w_out >= out_width || batch_id >= batch_size) {
        return;
    }
    
    // Compute convolution
    scalar_t result = 0.0f;
    
    for (int ic = 0; ic < in_channels; ++ic) {
        for (int kh = 0; kh < kernel_size; ++kh) {
            for (int kw = 0; kw < kernel_size; ++kw) {
                const int h_in_local = threadIdx.y + kh;
                const int w_in_local = threadIdx.x + kw;
                const int sm_idx = h_in_local * (blockDim.x + kernel_size - 1) + w_in_local;
                const int w_idx = (ic * kernel_size + kh) * kernel_size + kw;
                
                result += shared_input[sm_idx] * shared_weight[w_idx];
            }
        }
    }
    
    // Add bias
    result += bias[out_ch];
    
    // Apply min operation with scaled constant
    if (result > scaled_constant_value) {
        result = scaled_constant_value;
    }
    
    // Write output
    const int out_idx = ((batch_id * out_channels + out_ch) * out_height + h_out) * out_width + w_out;
    output[out_idx] = result;
}



static void* const __kernelmill_instance_0 = (void*)&fused_conv2d_min_bias_kernel<float>;
static void* const __kernelmill_instance_1 = (void*)&fused_conv2d_min_bias_kernel<double>;
