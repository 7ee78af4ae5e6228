// origin: CUDA-L1 (cudal1-l40-L1-32, KernelBench level 1 task 32), MIT licence; device code of a string literal with __global__[0], torch host code removed

            extern "C" __global__ void optimized_hardtanh_kernel(float* input, float* output, int n) {
                // Thread index
                int tid = blockIdx.x * blockDim.x + threadIdx.x;
                int stride = blockDim.x * gridDim.x;
                
                // Each thread processes 16 elements in a grid-stride loop
                for (int i = tid * 16; i < n; i += stride * 16) {
                    // Process elements in chunks of 4 using float4
                    for (int chunk = 0; chunk < 4; chunk++) {
                        int idx = i + chunk * 4;
                        if (idx >= n) break;  // Early exit if beyond array bounds
                        
                        // Determine how many elements we can process in this chunk
                        int remaining = min(4, n - idx);
                        
                        if (remaining == 4) {
                            // Full float4 processing for load
                            float4 vals = *reinterpret_cast<float4*>(input + idx);
                            
                            // Apply hardtanh (branchless min/max)
                            vals.x = fmaxf(-1.0f, fminf(1.0f, vals.x));
                            vals.y = fmaxf(-1.0f, fminf(1.0f, vals.y));
                            vals.z = fmaxf(-1.0f, fminf(1.0f, vals.z));
                            vals.w = fmaxf(-1.0f, fminf(1.0f, vals.w));
                            
                            // Store results using float4
                            *reinterpret_cast<float4*>(output + idx) = vals;
                        } else {
                            // Handle remaining elements individually
                            for (int j = 0; j < remaining; j++) {
                                float val = input[idx + j];
                                output[idx + j] = fmaxf(-1.0f, fminf(1.0f, val));
                            }
                        }
                    }
                }
            }
            