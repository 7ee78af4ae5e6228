// origin: CUDA-L1 (cudal1-a100-L3-13, KernelBench level 3 task 13), MIT licence; device code of cuda_sources[0], torch host code removed

        extern "C" __global__ void fused_transition_layer(
            const float* __restrict__ input,
            const float* __restrict__ bn_scale,
            const float* __restrict__ bn_shift,
            const float* __restrict__ conv_weight,
            float* __restrict__ output,
            const int batch_size, const int in_channels, const int out_channels,
            const int height, const int width, const int out_height, const int out_width)
        {
            // Shared memory for batch norm parameters and frequently used conv weights
            extern __shared__ float shared_mem[];
            float* s_bn_scale = shared_mem;
            float* s_bn_shift = &s_bn_scale[in_channels];
            
            // Collaborative loading of batch norm parameters into shared memory
            for (int i = threadIdx.x; i < in_channels; i += blockDim.x) {
                s_bn_scale[i] = bn_scale[i];
                s_bn_shift[i] = bn_shift[i];
            }
            __syncthreads();
            
            // Calculate global thread index
            const int tid = blockIdx.x * blockDim.x + threadIdx.x;
            const int stride = blockDim.x * gridDim.x;
            const int total_outputs = batch_size * out_channels * out_height * out_width;
            
            // Each thread processes multiple elements for better instruction-level parallelism
            for (int idx = tid; idx < total_outputs; idx += stride) {
                // Decode output position with optimized indexing for memory coalescing
                const int out_w = idx % out_width;
                const int out_h = (idx / out_width) % out_height;
                const int out_c = (idx / (out_width * out_height)) % out_channels;
                const int b = idx / (out_width * out_height * out_channels);
                
                // Calculate input position (top-left of 2x2 pooling region)
                const int in_h_start = out_h << 1;  // out_h * 2
                const int in_w_start = out_w << 1;  // out_w * 2
                
                // Pre-compute boundary conditions to reduce divergence
                const int in_h_end = min(in_h_start + 2, height);
                const int in_w_end = min(in_w_start + 2, width);
                const int pool_size = (in_h_end - in_h_start) * (in_w_end - in_w_start);
                const float inv_pool_size = 1.0f / (float)pool_size;
                
                // Initialize output value
                float result = 0.0f;
                
                // Loop over input channels
                for (int in_c = 0; in_c < in_channels; ++in_c) {
                    // Apply batch norm + ReLU + pooling
                    float pooled_val = 0.0f;
                    
                    // Pre-compute channel offset for faster access
                    const int in_ch_offset = (b * in_channels + in_c) * height * width;
                    const float scale = s_bn_scale[in_c];
                    const float shift = s_bn_shift[in_c];
                    
                    // Process pooling region with optimized boundary handling
                    for (int in_h = in_h_start; in_h < in_h_end; ++in_h) {
                        const int row_offset = in_ch_offset + in_h * width;
                        
                        for (int in_w = in_w_start; in_w < in_w_end; ++in_w) {
                            // Calculate input index
                            const int in_idx = row_offset + in_w;
                            
                            // Apply batch norm and ReLU
                            const float normalized = input[in_idx] * scale + shift;
                            const float activated = fmaxf(normalized, 0.0f);  // Using fast math intrinsic
                            
                            pooled_val += activated;
                        }
                    }
                    
                    // Complete average pooling
                    pooled_val *= inv_pool_size;
                    
                    // Apply convolution weight (1x1 convolution is just a dot product)
                    result += pooled_val * conv_weight[out_c * in_channels + in_c];
                }
                
                // Write output
                output[idx] = result;
            }
        }
        