// origin: CUDA-L1 (cudal1-3090-L3-11, KernelBench level 3 task 11), MIT licence; device code of cuda_sources[0], torch host code removed

            extern "C" __global__ void optimized_flatten(
                const float* input, float* output, 
                int batch_size, int channels, int height, int width) {
                
                int idx = blockIdx.x * blockDim.x + threadIdx.x;
                int total_elements = batch_size * channels * height * width;
                
                if (idx < total_elements) {
                    // Calculate input indices
                    int c = (idx / (height * width)) % channels;
                    int h = (idx / width) % height;
                    int w = idx % width;
                    int b = idx / (channels * height * width);
                    
                    // Calculate output index (keeping batch dimension)
                    int out_idx = b * (channels * height * width) + c * (height * width) + h * width + w;
                    
                    // Copy data
                    output[out_idx] = input[idx];
                }
            }
            