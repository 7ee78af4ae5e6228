// origin: CUDA-L1 (cudal1-a100-L1-36, KernelBench level 1 task 36), MIT licence; device code of cuda_sources[0], torch host code removed

extern "C" __global__ void rmsnorm_kernel(
    float* __restrict__ output,
    const float* __restrict__ input,
    const int batch_size,
    const int features,
    const int dim1,
    const int dim2,
    const float eps) {
    
    // Calculate total elements per batch item
    const int elements_per_batch = features * dim1 * dim2;
    const int elements_per_feature = dim1 * dim2;
    
    // Get batch index
    const int b = blockIdx.x;
    if (b >= batch_size) return;
    
    // Calculate batch offset
    const int batch_offset = b * elements_per_batch;
    
    // Each block processes multiple spatial locations
    const int spatial_idx_base = blockIdx.y * blockDim.y;
    const int spatial_idx = spatial_idx_base + threadIdx.y;
    
    if (spatial_idx < dim1 * dim2) {
        const int d1 = spatial_idx / dim2;
        const int d2 = spatial_idx % dim2;
        const int spatial_offset = d1 * dim2 + d2;
        
        // Compute sum of squares across features
        float sum_squared = 0.0f;
        
        // Each thread processes multiple features with striding
        for (int f = threadIdx.x; f < features; f += blockDim.x) {
            const int idx = batch_offset + f * elements_per_feature + spatial_offset;
            const float val = input[idx];
            sum_squared += val * val;
        }
        
        // Warp-level reduction for sum_squared
        #pragma unroll
        for (int offset = warpSize/2; offset > 0; offset /= 2) {
            sum_squared += __shfl_down_sync(0xffffffff, sum_squared, offset);
        }
        
        // First thread in each warp has the sum for its warp
        const int warp_id = threadIdx.x / warpSize;
        const int lane_id = threadIdx.x % warpSize;
        
        // Use shared memory for inter-warp reduction
        __shared__ float warp_sums[32]; // Max 32 warps per block
        
        if (lane_id == 0) {
            warp_sums[warp_id] = sum_squared;
        }
        
        __syncthreads();
        
        // First warp reduces all warp sums
        if (warp_id == 0 && lane_id < (blockDim.x + warpSize - 1) / warpSize) {
            float warp_sum = lane_id < (blockDim.x + warpSize - 1) / warpSize ? warp_sums[lane_id] : 0.0f;
            
            #pragma unroll
            for (int offset = (blockDim.x + warpSize - 1) / warpSize / 2; offset > 0; offset /= 2) {
                warp_sum += __shfl_down_sync(0xffffffff, warp_sum, offset);
            }
            
            if (lane_id == 0) {
                warp_sums[0] = warp_sum;
            }
        }
        
        __syncthreads();
        
        // Get the final sum squared
        const float final_sum_squared = warp_sums[0];
        
        // Calculate RMS (root mean square)
        const float mean_squared = final_sum_squared / features;
        const float inv_rms = rsqrtf(mean_squared + eps);
        
        // Normalize the input using the computed inv_rms
        for (int f = threadIdx.x; f < features; f += blockDim.x) {
            const int idx = batch_offset + f * elements_per_feature + spatial_offset;
            output[idx] = input[idx] * inv_rms;
        }
    }
}
