// origin: CUDA-L1 (cudal1-l40-L1-31, KernelBench level 1 task 31), MIT licence; device code of cuda_sources[0], torch host code removed
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
    
    __device__ __forceinline__ float elu_op(float x, float alpha) {
        return x > 0.0f ? x : alpha * (__expf(x) - 1.0f);
    }
    
    // Optimized ELU kernel with float4 vectorization
    __global__ void elu_cuda_kernel_optimized(
        const float* __restrict__ input,
        float* __restrict__ output,
        const float alpha,
        const int size) {
        
        const int tid = blockIdx.x * blockDim.x + threadIdx.x;
        const int stride = blockDim.x * gridDim.x;
        
        // Process elements using float4 for vectorized memory access
        for (int i = tid; i < size / 4; i += stride) {
            const int idx = i * 4;
            
            // Load 4 elements as float4 for coalesced access
            float4 data = *reinterpret_cast<const float4*>(&input[idx]);
            
            // Apply ELU operation to all 4 elements
            data.x = elu_op(data.x, alpha);
            data.y = elu_op(data.y, alpha);
            data.z = elu_op(data.z, alpha);
            data.w = elu_op(data.w, alpha);
            
            // Store results as float4
            *reinterpret_cast<float4*>(&output[idx]) = data;
        }
        
        // Handle remaining elements (0-3 elements)
        const int remainder_start = (size / 4) * 4;
        for (int idx = remainder_start + tid; idx < size; idx += stride) {
            output[idx] = elu_op(input[idx], alpha);
        }
    }
    
    
    