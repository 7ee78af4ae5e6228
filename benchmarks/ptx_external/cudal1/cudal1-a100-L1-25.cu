// origin: CUDA-L1 (cudal1-a100-L1-25, KernelBench level 1 task 25), MIT licence; device code of cuda_sources[0], torch host code removed

// Inline function for sigmoid calculation
__device__ __forceinline__ float sigmoid(float x) {
    if (x >= 0) {
        return 1.0f / (1.0f + __expf(-x));
    } else {
        float exp_x = __expf(x);
        return exp_x / (1.0f + exp_x);
    }
}

extern "C" __global__ void swish_forward_kernel(
    const float* __restrict__ input,
    float* __restrict__ output,
    const int size) {
    
    #pragma unroll 4
    // Grid-stride loop to handle large tensors
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; 
         idx < size; 
         idx += blockDim.x * gridDim.x) {
        
        // Load input value
        float x = input[idx];
        
        // Compute swish: x * sigmoid(x)
        output[idx] = x * sigmoid(x);
    }
}

// Vectorized version for better memory throughput
extern "C" __global__ void swish_forward_kernel_vec4(
    const float4* __restrict__ input,
    float4* __restrict__ output,
    const int vec_size) {
    
    #pragma unroll 2
    // Grid-stride loop processing 4 elements at once
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; 
         idx < vec_size; 
         idx += blockDim.x * gridDim.x) {
        
        // Load 4 elements at once
        float4 x4 = input[idx];
        float4 result;
        
        // Process all components
        result.x = x4.x * sigmoid(x4.x);
        result.y = x4.y * sigmoid(x4.y);
        result.z = x4.z * sigmoid(x4.z);
        result.w = x4.w * sigmoid(x4.w);
        
        // Store 4 results at once
        output[idx] = result;
    }
}
