// origin: CUDA-L1 (cudal1-l40-L1-52, KernelBench level 1 task 52), MIT licence; device code of cuda_sources[0], torch host code removed
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

template <typename scalar_t>
__global__ void argmin_kernel(
    const scalar_t* __restrict__ input,
    int64_t* __restrict__ output,
    const int batch_size,
    const int dim1,
    const int dim2) {
    
    // Calculate global indices
    const int batch_idx = blockIdx.y;
    const int dim2_idx = blockIdx.x * blockDim.x + threadIdx.x;
    
    // Check if this thread should process data
    if (batch_idx < batch_size && dim2_idx < dim2) {
        // Calculate base index for this thread's column
        const int base_idx = batch_idx * dim1 * dim2 + dim2_idx;
        
        // Initialize with first element
        scalar_t min_val = input[base_idx];
        int min_idx = 0;
        
        // Check if first value is NaN - PyTorch returns the first NaN index
        bool found_nan = isnan(min_val);
        
        // Process elements in groups of 16 for better instruction-level parallelism
        int i = 1;
        for (; i + 15 < dim1 && !found_nan; i += 16) {
            // Load 16 values at once
            scalar_t val1 = input[base_idx + i * dim2];
            scalar_t val2 = input[base_idx + (i+1) * dim2];
            scalar_t val3 = input[base_idx + (i+2) * dim2];
            scalar_t val4 = input[base_idx + (i+3) * dim2];
            scalar_t val5 = input[base_idx + (i+4) * dim2];
            scalar_t val6 = input[base_idx + (i+5) * dim2];
            scalar_t val7 = input[base_idx + (i+6) * dim2];
            scalar_t val8 = input[base_idx + (i+7) * dim2];
            scalar_t val9 = input[base_idx + (i+8) * dim2];
            scalar_t val10 = input[base_idx + (i+9) * dim2];
            scalar_t val11 = input[base_idx + (i+10) * dim2];
            scalar_t val12 = input[base_idx + (i+11) * dim2];
            scalar_t val13 = input[base_idx + (i+12) * dim2];
            scalar_t val14 = input[base_idx + (i+13) * dim2];
            scalar_t val15 = input[base_idx + (i+14) * dim2];
            scalar_t val16 = input[base_idx + (i+15) * dim2];
            
            // Check for NaN values (PyTorch returns the first NaN index)
            if (isnan(val1)) { min_idx = i; found_nan = true; break; }
            if (isnan(val2)) { min_idx = i+1; found_nan = true; break; }
            if (isnan(val3)) { min_idx = i+2; found_nan = true; break; }
            if (isnan(val4)) { min_idx = i+3; found_nan = true; break; }
            if (isnan(val5)) { min_idx = i+4; found_nan = true; break; }
            if (isnan(val6)) { min_idx = i+5; found_nan = true; break; }
            if (isnan(val7)) { min_idx = i+6; found_nan = true; break; }
            if (isnan(val8)) { min_idx = i+7; found_nan = true; break; }
            if (isnan(val9)) { min_idx = i+8; found_nan = true; break; }
            if (isnan(val10)) { min_idx = i+9; found_nan = true; break; }
            if (isnan(val11)) { min_idx = i+10; found_nan = true; break; }
            if (isnan(val12)) { min_idx = i+11; found_nan = true; break; }
            if (isnan(val13)) { min_idx = i+12; found_nan = true; break; }
            if (isnan(val14)) { min_idx = i+13; found_nan = true; break; }
            if (isnan(val15)) { min_idx = i+14; found_nan = true; break; }
            if (isnan(val16)) { min_idx = i+15; found_nan = true; break; }
            
            // Compare and update minimum
            if (val1 < min_val) { min_val = val1; min_idx = i; }
            if (val2 < min_val) { min_val = val2; min_idx = i+1; }
            if (val3 < min_val) { min_val = val3; min_idx = i+2; }
            if (val4 < min_val) { min_val = val4; min_idx = i+3; }
            if (val5 < min_val) { min_val = val5; min_idx = i+4; }
            if (val6 < min_val) { min_val = val6; min_idx = i+5; }
            if (val7 < min_val) { min_val = val7; min_idx = i+6; }
            if (val8 < min_val) { min_val = val8; min_idx = i+7; }
            if (val9 < min_val) { min_val = val9; min_idx = i+8; }
            if (val10 < min_val) { min_val = val10; min_idx = i+9; }
            if (val11 < min_val) { min_val = val11; min_idx = i+10; }
            if (val12 < min_val) { min_val = val12; min_idx = i+11; }
            if (val13 < min_val) { min_val = val13; min_idx = i+12; }
            if (val14 < min_val) { min_val = val14; min_idx = i+13; }
            if (val15 < min_val) { min_val = val15; min_idx = i+14; }
            if (val16 < min_val) { min_val = val16; min_idx = i+15; }
        }
        
        // Handle remaining elements
        for (; i < dim1 && !found_nan; ++i) {
            scalar_t val = input[base_idx + i * dim2];
            if (isnan(val)) {
                min_idx = i;
                found_nan = true;
                break;
            }
            if (val < min_val) {
                min_val = val;
                min_idx = i;
            }
        }
        
        // Write result to output
        output[batch_idx * dim2 + dim2_idx] = min_idx;
    }
}



// Python binding


static void* const __kernelmill_instance_0 = (void*)&argmin_kernel<float>;
static void* const __kernelmill_instance_1 = (void*)&argmin_kernel<double>;
