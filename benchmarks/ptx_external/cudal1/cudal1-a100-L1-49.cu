// origin: CUDA-L1 (cudal1-a100-L1-49, KernelBench level 1 task 49), MIT licence; device code of cuda_sources[0], torch host code removed

        extern "C" __global__ void max_reduce_dim1(const float* __restrict__ input, 
                                                 float* __restrict__ output, 
                                                 const int batch_size, 
                                                 const int dim1, 
                                                 const int dim2) {
            // Calculate indices
            const int batch_idx = blockIdx.x;
            const int dim2_idx = blockIdx.y * blockDim.x + threadIdx.x;
            
            // Boundary check
            if (batch_idx >= batch_size || dim2_idx >= dim2) return;
            
            // Calculate input offset for this thread
            const int input_offset = batch_idx * dim1 * dim2 + dim2_idx;
            
            // Fast path for dim1 == 1
            if (dim1 == 1) {
                output[batch_idx * dim2 + dim2_idx] = input[input_offset];
                return;
            }
            
            // Initialize with the first element
            float max_val = input[input_offset];
            
            // Process elements in groups of 4 for better instruction-level parallelism
            // but process each element individually to avoid excessive register pressure
            int i = 1;
            for (; i + 3 < dim1; i += 4) {
                float val = input[input_offset + i * dim2];
                max_val = fmaxf(max_val, val);
                
                val = input[input_offset + (i+1) * dim2];
                max_val = fmaxf(max_val, val);
                
                val = input[input_offset + (i+2) * dim2];
                max_val = fmaxf(max_val, val);
                
                val = input[input_offset + (i+3) * dim2];
                max_val = fmaxf(max_val, val);
            }
            
            // Handle remaining elements
            for (; i < dim1; ++i) {
                float val = input[input_offset + i * dim2];
                max_val = fmaxf(max_val, val);
            }
            
            // Write result to output
            output[batch_idx * dim2 + dim2_idx] = max_val;
        }
        