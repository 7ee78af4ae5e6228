// origin: CUDA-L1 (cudal1-a100-L3-9, KernelBench level 3 task 9), MIT licence; device code of cuda_sources[0], torch host code removed

            extern "C" __global__ void residual_relu_kernel(
                float* __restrict__ output, 
                const float* __restrict__ input, 
                const float* __restrict__ residual,
                int total_elements) {
                
                const int tid = blockIdx.x * blockDim.x + threadIdx.x;
                const int stride = blockDim.x * gridDim.x;
                
                // Grid-stride loop for better performance with large tensors
                for (int idx = tid; idx < total_elements; idx += stride) {
                    float sum = input[idx] + residual[idx];
                    output[idx] = sum > 0.0f ? sum : 0.0f;
                }
            }
            