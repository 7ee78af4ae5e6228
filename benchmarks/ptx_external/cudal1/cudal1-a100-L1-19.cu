// origin: CUDA-L1 (cudal1-a100-L1-19, KernelBench level 1 task 19), MIT licence; device code of cuda_sources[0], torch host code removed

        extern "C" __global__ void optimized_relu_kernel(const float* __restrict__ input, 
                                                        float* __restrict__ output, 
                                                        int n) {
            // Calculate global thread ID
            int tid = blockIdx.x * blockDim.x + threadIdx.x;
            int stride = blockDim.x * gridDim.x;
            
            // Thread coarsening: each thread processes 4 elements
            // Process elements in chunks of 4 using float4 for vectorized access
            for (int i = tid; i < (n >> 2); i += stride) {
                // Load 4 elements at once using float4
                float4 in_val = reinterpret_cast<const float4*>(input)[i];
                
                // Apply ReLU to each component using fmaxf (faster than branching)
                float4 out_val;
                out_val.x = fmaxf(0.0f, in_val.x);
                out_val.y = fmaxf(0.0f, in_val.y);
                out_val.z = fmaxf(0.0f, in_val.z);
                out_val.w = fmaxf(0.0f, in_val.w);
                
                // Store the result
                reinterpret_cast<float4*>(output)[i] = out_val;
            }
            
            // Handle remaining elements (if n is not divisible by 4)
            int remaining_start = (n & ~3); // Equivalent to (n / 4) * 4, but faster
            for (int i = remaining_start + tid; i < n; i += stride) {
                output[i] = fmaxf(0.0f, input[i]);
            }
        }
        