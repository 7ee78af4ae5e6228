// origin: CUDA-L1 (cudal1-a100-L2-35, KernelBench level 2 task 35), MIT licence; device code of a string literal with __global__[0], torch host code removed
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
#include <math.h>

// Helper function for hardswish activation
__device__ float hardswish(float x) {
    float temp = x + 3.0f;
    temp = (temp < 0.0f) ? 0.0f : ((temp > 6.0f) ? 6.0f : temp);
    return x * temp / 6.0f;
}

// Helper function for mish activation
__device__ float mish(float x) {
    return x * tanh(logf(1.0f + expf(x)));
}

// Main kernel for fused operations
__global__ void fused_conv_subtract_hardswish_maxpool_mish_kernel(
    const float* __restrict__ input,
    const float* __restrict__ weight,
    const float* __restrict__ bias,
    float* __restrict__ output,
    const int batch_size,
    const int in_channels,
    const int out_channels,
    const int height,
    const int width,
    const int kernel_size,
    const float subtract_value,
    const int pool_kernel_size,
    const int output_height,
    const int output_width) {
    
    // Calculate output indices
    const int n = blockIdx.z;
    const int f = blockIdx.y;
    const int y_out = (blockIdx.x / ((output_width + 7) / 8)) * blockDim.y + threadIdx.y;
    const int x_out = (blockIdx.x % ((output_width + 7) / 8)) * blockDim.x + threadIdx.x;
    
    // Check if within output bounds
    if (n >= batch_size || f >= out_channels || y_out >= output_height || x_out >= output_width)
        return;
    
    // Calculate input height and width after convolution but before pooling
    const int conv_height = height - kernel_size + 1;
    const int conv_width = width - kernel_size + 1;
    
    // Calculate the pooling region start
    const int pool_y_start = y_out * pool_kernel_size;
    const int pool_x_start = x_out * pool_kernel_size;
    
    // Variables for max pooling
    float max_val = -INFINITY;
    
    // Iterate over pooling region
    for (int py = 0; py < pool_kernel_size; py++) {
        for (int px = 0; px < pool_kernel_size; px++) {
            const int conv_y = pool_y_start + py;
            const int conv_x = pool_x_start + px;
            
            // Skip if outside conv output bounds
            if (conv_y >= conv_height || conv_x >= conv_width)
                continue;
            
            // Compute convolution for this position
            float conv_result = bias[f];
            
            // Iterate over input channels and kernel
            for (int c = 0; c < in_channels; c++) {
                for (int ky = 0; ky < kernel_size; ky++) {
                    for (int kx = 0; kx < kernel_size; kx++) {
                        const int in_y = conv_y + ky;
                        const int in_x = conv_x + kx;
                        
                        // Get input and weight values
                        const float input_val = input[((n * in_channels + c) * height + in_y) * width + in_x];
                        const float weight_val = weight[((f * in_channels + c) * kernel_size + ky) * kernel_size + kx];
                        conv_result += input_val * weight_val;
                    }
                }
            }
            
            // Subtract value
            conv_result -= subtract_value;
            
            // Apply HardSwish
            float hardswish_val = hardswish(conv_result);
            
            // Update max value for pooling
            max_val = (hardswish_val > max_val) ? hardswish_val : max_val;
        }
    }
    
    // Apply Mish
    float mish_val = mish(max_val);
    
    // Write output
    output[((n * out_channels + f) * output_height + y_out) * output_width + x_out] = mish_val;
}

// Forward function that launches the CUDA kernel



