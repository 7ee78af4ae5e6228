// origin: CUDA-L1 (cudal1-l40-L2-67, KernelBench level 2 task 67), MIT licence; device code of cuda_sources[0], torch host code removed
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
                
                template <typename scalar_t>
                __device__ __forceinline__ scalar_t gelu(scalar_t x) {
                    // Optimized GELU approximation
                    const scalar_t sqrt_2_over_pi = 0.7978845608028654;
                    const scalar_t coef = 0.044715;
                    scalar_t x2 = x * x;
                    scalar_t x3 = x2 * x;
                    return 0.5f * x * (1.0f + tanhf(sqrt_2_over_pi * (x + coef * x3)));
                }
                
                // Specialized kernel for 3x3 convolution with 3 input channels
                template <typename scalar_t>
                __global__ void conv2d_gelu_pool_kernel(
                    const scalar_t* __restrict__ input,
                    const scalar_t* __restrict__ weight,
                    const scalar_t* __restrict__ bias,
                    scalar_t* __restrict__ output,
                    const int batch_size,
                    const int in_height,
                    const int in_width,
                    const int out_height,
                    const int out_width,
                    const int out_channels,
                    const int batch_blocks
                ) {
                    // Constants for this kernel
                    const int in_channels = 3;
                    const int kernel_size = 3;
                    
                    // Each block handles one output channel for a portion of the batch
                    const int oc = blockIdx.y;
                    const int batch_chunk = blockIdx.x;
                    const int batch_chunk_size = (batch_size + batch_blocks - 1) / batch_blocks;
                    const int batch_start = batch_chunk * batch_chunk_size;
                    const int batch_end = min(batch_start + batch_chunk_size, batch_size);
                    
                    // Thread indices
                    const int tx = threadIdx.x;
                    const int ty = threadIdx.y;
                    const int tid = ty * blockDim.x + tx;
                    const int block_size = blockDim.x * blockDim.y;
                    
                    // Shared memory for partial sums
                    extern __shared__ scalar_t s_partial_sums[];
                    
                    // Load bias value for this output channel
                    const scalar_t bias_val = bias[oc];
                    
                    // Preload weights for this output channel into registers
                    // For 3x3 kernel with 3 input channels = 27 weights
                    scalar_t w[27];
                    
                    #pragma unroll
                    for (int i = 0; i < 27; i++) {
                        w[i] = weight[oc * in_channels * kernel_size * kernel_size + i];
                    }
                    
                    // Process each batch in the chunk
                    for (int b = batch_start; b < batch_end; b++) {
                        // Initialize thread's accumulator for average pooling
                        scalar_t thread_sum = 0.0f;
                        int valid_pixels = 0;
                        
                        // Process output pixels in grid stride loop
                        for (int p_idx = tid; p_idx < out_height * out_width; p_idx += block_size) {
                            const int oh = p_idx / out_width;
                            const int ow = p_idx % out_width;
                            
                            // Skip if out of bounds
                            if (oh >= out_height || ow >= out_width) continue;
                            
                            // Compute convolution for this output position
                            scalar_t conv_result = bias_val;
                            
                            // Precompute input base indices for better memory access patterns
                            const int in_b_ic0_h = (b * in_channels + 0) * in_height + oh;
                            const int in_b_ic1_h = (b * in_channels + 1) * in_height + oh;
                            const int in_b_ic2_h = (b * in_channels + 2) * in_height + oh;
                            
                            // Unrolled convolution for 3x3 kernel with 3 input channels
                            // Input channel 0
                            {
                                // Load 3x3 input patch with boundary checks using predication
                                scalar_t in00 = (oh < in_height && ow < in_width) ? 
                                    input[in_b_ic0_h * in_width + ow] : 0.0f;
                                scalar_t in01 = (oh < in_height && ow + 1 < in_width) ? 
                                    input[in_b_ic0_h * in_width + (ow + 1)] : 0.0f;
                                scalar_t in02 = (oh < in_height && ow + 2 < in_width) ? 
                                    input[in_b_ic0_h * in_width + (ow + 2)] : 0.0f;
                                
                                scalar_t in10 = (oh + 1 < in_height && ow < in_width) ? 
                                    input[(in_b_ic0_h + 1) * in_width + ow] : 0.0f;
                                scalar_t in11 = (oh + 1 < in_height && ow + 1 < in_width) ? 
                                    input[(in_b_ic0_h + 1) * in_width + (ow + 1)] : 0.0f;
                                scalar_t in12 = (oh + 1 < in_height && ow + 2 < in_width) ? 
                                    input[(in_b_ic0_h + 1) * in_width + (ow + 2)] : 0.0f;
                                
                                scalar_t in20 = (oh + 2 < in_height && ow < in_width) ? 
                                    input[(in_b_ic0_h + 2) * in_width + ow] : 0.0f;
                                scalar_t in21 = (oh + 2 < in_height && ow + 1 < in_width) ? 
                                    input[(in_b_ic0_h + 2) * in_width + (ow + 1)] : 0.0f;
                                scalar_t in22 = (oh + 2 < in_height && ow + 2 < in_width) ? 
                                    input[(in_b_ic0_h + 2) * in_width + (ow + 2)] : 0.0f;
                                
                                // Compute convolution for this input channel using preloaded weights
                                conv_result += in00 * w[0] + in01 * w[1] + in02 * w[2] +
                                               in10 * w[3] + in11 * w[4] + in12 * w[5] +
                                               in20 * w[6] + in21 * w[7] + in22 * w[8];
                            }
                            
                            // Input channel 1
                            {
                                // Load 3x3 input patch with boundary checks using predication
                                scalar_t in00 = (oh < in_height && ow < in_width) ? 
                                    input[in_b_ic1_h * in_width + ow] : 0.0f;
                                scalar_t in01 = (oh < in_height && ow + 1 < in_width) ? 
                                    input[in_b_ic1_h * in_width + (ow + 1)] : 0.0f;
                                scalar_t in02 = (oh < in_height && ow + 2 < in_width) ? 
                                    input[in_b_ic1_h * in_width + (ow + 2)] : 0.0f;
                                
                                scalar_t in10 = (oh + 1 < in_height && ow < in_width) ? 
                                    input[(in_b_ic1_h + 1) * in_width + ow] : 0.0f;
                                scalar_t in11 = (oh + 1 < in_height && ow + 1 < in_width) ? 
                                    input[(in_b_ic1_h + 1) * in_width + (ow + 1)] : 0.0f;
                                scalar_t in12 = (oh + 1 < in_height && ow + 2 < in_width) ? 
                                    input[(in_b_ic1_h + 1) * in_width + (ow + 2)] : 0.0f;
                                
                                scalar_t in20 = (oh + 2 < in_height && ow < in_width) ? 
                                    input[(in_b_ic1_h + 2) * in_width + ow] : 0.0f;
                                scalar_t in21 = (oh + 2 < in_height && ow + 1 < in_width) ? 
                                    input[(in_b_ic1_h + 2) * in_width + (ow + 1)] : 0.0f;
                                scalar_t in22 = (oh + 2 < in_height && ow + 2 < in_width) ? 
                                    input[(in_b_ic1_h + 2) * in_width + (ow + 2)] : 0.0f;
                                
                                // Compute convolution for this input channel using preloaded weights
                                conv_result += in00 * w[9] + in01 * w[10] + in02 * w[11] +
                                               in10 * w[12] + in11 * w[13] + in12 * w[14] +
                                               in20 * w[15] + in21 * w[16] + in22 * w[17];
                            }
                            
                            // Input channel 2
                            {
                                // Load 3x3 input patch with boundary checks using predication
                                scalar_t in00 = (oh < in_height && ow < in_width) ? 
                                    input[in_b_ic2_h * in_width + ow] : 0.0f;
                                scalar_t in01 = (oh < in_height && ow + 1 < in_width) ? 
                                    input[in_b_ic2_h * in_width + (ow + 1)] : 0.0f;
                                scalar_t in02 = (oh < in_height && ow + 2 < in_width) ? 
                                    input[in_b_ic2_h * in_width + (ow + 2)] : 0.0f;
                                
                                scalar_t in10 = (oh + 1 < in_height && ow < in_width) ? 
                                    input[(in_b_ic2_h + 1) * in_width + ow] : 0.0f;
                                scalar_t in11 = (oh + 1 < in_height && ow + 1 < in_width) ? 
                                    input[(in_b_ic2_h + 1) * in_width + (ow + 1)] : 0.0f;
                                scalar_t in12 = (oh + 1 < in_height && ow + 2 < in_width) ? 
                                    input[(in_b_ic2_h + 1) * in_width + (ow + 2)] : 0.0f;
                                
                                scalar_t in20 = (oh + 2 < in_height && ow < in_width) ? 
                                    input[(in_b_ic2_h + 2) * in_width + ow] : 0.0f;
                                scalar_t in21 = (oh + 2 < in_height && ow + 1 < in_width) ? 
                                    input[(in_b_ic2_h + 2) * in_width + (ow + 1)] : 0.0f;
                                scalar_t in22 = (oh + 2 < in_height && ow + 2 < in_width) ? 
                                    input[(in_b_ic2_h + 2) * in_width + (ow + 2)] : 0.0f;
                                
                                // Compute convolution for this input channel using preloaded weights
                                conv_result += in00 * w[18] + in01 * w[19] + in02 * w[20] +
                                               in10 * w[21] + in11 * w[22] + in12 * w[23] +
                                               in20 * w[24] + in21 * w[25] + in22 * w[26];
                            }
                            
                            // Apply GELU activation
                            scalar_t gelu_result = gelu(conv_result);
                            
                            // Add to thread's sum for average pooling
                            thread_sum += gelu_result;
                            valid_pixels++;
                        }
                        
                        // Store partial sum in shared memory
                        s_partial_sums[tid] = thread_sum;
                        __syncthreads();
                        
                        // Parallel reduction in shared memory
                        // Use sequential addressing to avoid bank conflicts
                        for (int stride = block_size / 2; stride > 32; stride >>= 1) {
                            if (tid < stride) {
                                s_partial_sums[tid] += s_partial_sums[tid + stride];
                            }
                            __syncthreads();
                        }
                        
                        // Warp-level reduction using shuffle operations
                        if (tid < 32) {
                            // Use warp shuffle operations for the final reduction
                            scalar_t val = s_partial_sums[tid];
                            
                            #pragma unroll
                            for (int offset = 16; offset > 0; offset >>= 1) {
                                val += __shfl_down_sync(0xffffffff, val, offset);
                            }
                            
                            if (tid == 0) {
                                // Write final result to output
                                output[b * out_channels + oc] = val / (out_height * out_width);
                            }
                        }
                        
                        __syncthreads();
                    }
                }
                
                
                
                
                
static void* const __kernelmill_instance_0 = (void*)&conv2d_gelu_pool_kernel<float>;
static void* const __kernelmill_instance_1 = (void*)&conv2d_gelu_pool_kernel<double>;
