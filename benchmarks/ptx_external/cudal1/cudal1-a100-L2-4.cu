// origin: CUDA-L1 (cudal1-a100-L2-4, KernelBench level 2 task 4), MIT licence; device code of cuda_sources[0], torch host code removed
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

// Constants for the kernel
#define BLOCK_SIZE_X 32
#define BLOCK_SIZE_Y 8
#define TILE_WIDTH 32
#define TILE_HEIGHT 8

template <typename scalar_t>
__device__ __forceinline__ scalar_t mish(scalar_t x) {
    // Numerically stable implementation of Mish
    if (x <= -20.0f) {
        return 0.0f;
    } else if (x >= 20.0f) {
        return x;
    } else {
        scalar_t sp = logf(1.0f + expf(x));
        return x * tanhf(sp);
    }
}

template <typename scalar_t>
__global__ void conv2d_mish_mish_kernel(
    const scalar_t* __restrict__ input,
    const scalar_t* __restrict__ weight,
    const scalar_t* __restrict__ bias,
    scalar_t* __restrict__ output,
    int batch_size, int in_channels, int out_channels,
    int in_height, int in_width, int kernel_size,
    int out_height, int out_width) {
    
    // Shared memory for input tile and weights
    extern __shared__ unsigned char shared_mem_bytes[];
    scalar_t* shared_input = reinterpret_cast<scalar_t*>(shared_mem_bytes);
    scalar_t* shared_weights = shared_input + in_channels * (TILE_HEIGHT + kernel_size - 1) * (TILE_WIDTH + kernel_size - 1);
    
    // Calculate output position
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int bx = blockIdx.x;
    const int by = blockIdx.y;
    const int bz = blockIdx.z;
    
    const int out_col = bx * TILE_WIDTH + tx;
    const int out_row = by * TILE_HEIGHT + ty;
    const int out_ch = bz % out_channels;
    const int batch = bz / out_channels;
    
    // Return early if outside valid batch
    if (batch >= batch_size) return;
    
    // Calculate input tile dimensions
    const int in_tile_width = TILE_WIDTH + kernel_size - 1;
    const int in_tile_height = TILE_HEIGHT + kernel_size - 1;
    
    // Load input tile into shared memory collaboratively
    for (int c = 0; c < in_channels; c++) {
        for (int row = ty; row < in_tile_height; row += BLOCK_SIZE_Y) {
            const int in_row = by * TILE_HEIGHT + row;
            
            #pragma unroll 4
            for (int col = tx; col < in_tile_width; col += BLOCK_SIZE_X) {
                const int in_col = bx * TILE_WIDTH + col;
                
                scalar_t val = 0.0f;
                if (in_row < in_height && in_col < in_width) {
                    val = input[((batch * in_channels + c) * in_height + in_row) * in_width + in_col];
                }
                
                shared_input[(c * in_tile_height + row) * in_tile_width + col] = val;
            }
        }
    }
    
    // Load weights into shared memory collaboratively
    const int weights_per_thread = (in_channels * kernel_size * kernel_size + BLOCK_SIZE_X * BLOCK_SIZE_Y - 1) / (BLOCK_SIZE_X * BLOCK_SIZE_Y);
    const int thread_idx = ty * BLOCK_SIZE_X + tx;
    
    #pragma unroll
    for (int i = 0; i < weights_per_thread; i++) {
        const int weight_idx = thread_idx + i * (BLOCK_SIZE_X * BLOCK_SIZE_Y);
        if (weight_idx < in_channels * kernel_size * kernel_size) {
            shared_weights[weight_idx] = weight[out_ch * in_channels * kernel_size * kernel_size + weight_idx];
        }
    }
    
    __syncthreads();
    
    // Compute output value
    if (out_row < out_height && out_col < out_width) {
        // Initialize result with bias if available
        scalar_t result = bias != nullptr ? bias[out_ch] : 0.0f;
        
        // Perform convolution
        #pragma unroll 3
        for (int in_ch = 0; in_ch < in_channels; in_ch++) {
            #pragma unroll 3
            for (int k_row = 0; k_row < kernel_size; k_row++) {
                #pragma unroll 3
                for (int k_col = 0; k_col < kernel_size; k_col++) {
                    const int shared_in_row = ty + k_row;
                    const int shared_in_col = tx + k_col;
                    const int shared_in_idx = (in_ch * in_tile_height + shared_in_row) * in_tile_width + shared_in_col;
                    const int shared_weight_idx = in_ch * kernel_size * kernel_size + k_row * kernel_size + k_col;
                    
                    result += shared_input[shared_in_idx] * shared_weights[shared_weight_idx];
                }
            }
        }
        
        // Apply first Mish activation
        result = mish(result);
        
        // Apply second Mish activation
        result = mish(result);
        
        // Write output
        const int output_idx = ((batch * out_channels + out_ch) * out_height + out_row) * out_width + out_col;
        output[output_idx] = result;
    }
}



static void* const __kernelmill_instance_0 = (void*)&conv2d_mish_mish_kernel<float>;
static void* const __kernelmill_instance_1 = (void*)&conv2d_mish_mish_kernel<double>;
