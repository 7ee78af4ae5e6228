// origin: CUDA-L1 (cudal1-a100-L2-13, KernelBench level 2 task 13), MIT licence; device code of cuda_sources[0], torch host code removed

#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

// Helper function for tanh that works with float
__device__ float tanh_f(float x) {
    return tanhf(x);
}

// Fused kernel for mean pooling, bias add, softmax, tanh, and scaling
extern "C" __global__ void fused_post_conv_ops(
    const float* __restrict__ input,
    float* __restrict__ output,
    const float* __restrict__ bias,
    const float scaling_factor,
    const int batch_size,
    const int channels,
    const int depth,
    const int height,
    const int width) {
    
    // Calculate global thread indices
    const int d = blockIdx.x * blockDim.x + threadIdx.x;
    const int h = blockIdx.y * blockDim.y + threadIdx.y;
    const int w = blockIdx.z * blockDim.z + threadIdx.z;
    
    if (d >= depth || h >= height || w >= width)
        return;
        
    // Calculate mean across channels
    float sum = 0.0f;
    for (int c = 0; c < channels; ++c) {
        for (int b = 0; b < batch_size; ++b) {
            int idx = b * channels * depth * height * width +
                     c * depth * height * width +
                     d * height * width +
                     h * width +
                     w;
            sum += input[idx];
        }
    }
    float mean_val = sum / (batch_size * channels);
    
    // Add bias
    float val = mean_val + bias[0];
    
    // Apply softmax (simplified since we have only one channel after mean pooling)
    // For a single channel, softmax is just identity
    
    // Apply tanh
    val = tanh_f(val);
    
    // Apply scaling
    val *= scaling_factor;
    
    // Write output for all batches (same value for all batches at this spatial location)
    for (int b = 0; b < batch_size; ++b) {
        int out_idx = b * depth * height * width +
                     d * height * width +
                     h * width +
                     w;
        output[out_idx] = val;
    }
}

// Optimized ConvTranspose3d kernel (simplified version for demonstration)
extern "C" __global__ void conv_transpose_3d(
    const float* __restrict__ input,
    const float* __restrict__ weights,
    float* __restrict__ output,
    const int batch_size,
    const int in_channels,
    const int out_channels,
    const int in_depth,
    const int in_height,
    const int in_width,
    const int out_depth,
    const int out_height,
    const int out_width,
    const int kernel_size,
    const int stride,
    const int padding) {
    
    // This is a simplified placeholder for a full ConvTranspose3d implementation
    // A complete implementation would include proper tiling, shared memory usage,
    // and efficient matrix multiplication
    
    // Calculate output position
    const int out_d = blockIdx.x * blockDim.x + threadIdx.x;
    const int out_h = blockIdx.y * blockDim.y + threadIdx.y;
    const int out_w = blockIdx.z * blockDim.z + threadIdx.z;
    
    if (out_d >= out_depth || out_h >= out_height || out_w >= out_width)
        return;
        
    // For each output channel and batch
    for (int oc = 0; oc < out_channels; ++oc) {
        for (int b = 0; b < batch_size; ++b) {
            float sum = 0.0f;
            
            // For each input channel
            for (int ic = 0; ic < in_channels; ++ic) {
                // For each kernel element
                for (int kd = 0; kd < kernel_size; ++kd) {
                    for (int kh = 0; kh < kernel_size; ++kh) {
                        for (int kw = 0; kw < kernel_size; ++kw) {
                            // Calculate input position
                            int in_d = (out_d + padding - kd) / stride;
                            int in_h = (out_h + padding - kh) / stride;
                            int in_w = (out_w + padding - kw) / stride;
                            
                            // Check if the input position is valid
                            if (in_d >= 0 && in_d < in_depth && 
                                in_h >= 0 && in_h < in_height && 
                                in_w >= 0 && in_w < in_width &&
                                (out_d + padding - kd) % stride == 0 &&
                                (out_h + padding - kh) % stride == 0 &&
                                (out_w + padding - kw) % stride == 0) {
                                
                                // Get input value
                                int in_idx = b * in_channels * in_depth * in_height * in_width +
                                           ic * in_depth * in_height * in_width +
                                           in_d * in_height * in_width +
                                           in_h * in_width +
                                           in_w;
                                float in_val = input[in_idx];
                                
                                // Get weight value (with transposed indices)
                                int w_idx = ic * out_channels * kernel_size * kernel_size * kernel_size +
                                          oc * kernel_size * kernel_size * kernel_size +
                                          (kernel_size - 1 - kd) * kernel_size * kernel_size +
                                          (kernel_size - 1 - kh) * kernel_size +
                                          (kernel_size - 1 - kw);
                                float w_val = weights[w_idx];
                                
                                // Accumulate
                                sum += in_val * w_val;
                            }
                        }
                    }
                }
            }
            
            // Write output
            int out_idx = b * out_channels * out_depth * out_height * out_width +
                         oc * out_depth * out_height * out_width +
                         out_d * out_height * out_width +
                         out_h * out_width +
                         out_w;
            output[out_idx] = sum;
        }
    }
}
