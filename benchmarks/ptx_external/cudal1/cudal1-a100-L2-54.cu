// origin: CUDA-L1 (cudal1-a100-L2-54, KernelBench level 2 task 54), MIT licence; device code of cuda_sources[0], torch host code removed

            #include <cuda_runtime.h>
            
            // Fast GELU approximation: x * sigmoid(1.702 * x)
            __device__ __forceinline__ float gelu_fast(float x) {
                const float scale = 1.702f;
                float scaled_x = scale * x;
                return x / (1.0f + __expf(-scaled_x));
            }
            
            // Optimized fused operations kernel with 1D indexing and grid-stride loop
            extern "C" __global__ void fused_ops_optimized(
                float* __restrict__ output,
                const float* __restrict__ input,
                const float* __restrict__ multiplier,
                const int batch_size,
                const int channels,
                const int height,
                const int width)
            {
                // Use 1D indexing for better memory coalescing
                const int tid = blockIdx.x * blockDim.x + threadIdx.x;
                const int stride = blockDim.x * gridDim.x;
                const int total_elements = batch_size * channels * height * width;
                
                // Load multipliers into shared memory
                __shared__ float s_multipliers[16]; // max 16 channels
                if (threadIdx.x < channels) {
                    s_multipliers[threadIdx.x] = multiplier[threadIdx.x];
                }
                __syncthreads();
                
                // Process elements using grid-stride loop
                for (int idx = tid; idx < total_elements; idx += stride) {
                    // Calculate position
                    const int w = idx % width;
                    const int h = (idx / width) % height;
                    const int c = (idx / (width * height)) % channels;
                    const int b = idx / (width * height * channels);
                    
                    // Load input value
                    float val = input[idx];
                    
                    // Apply multiplier from shared memory
                    val *= s_multipliers[c];
                    
                    // Apply LeakyReLU (0.01 is the negative slope)
                    val = (val > 0.0f) ? val : (0.01f * val);
                    
                    // Apply GELU approximation
                    val = gelu_fast(val);
                    
                    // Write output
                    output[idx] = val;
                }
            }
            