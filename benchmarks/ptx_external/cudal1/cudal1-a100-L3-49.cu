// origin: CUDA-L1 (cudal1-a100-L3-49, KernelBench level 3 task 49), MIT licence; device code of cuda_sources[0], torch host code removed
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
        
        // Fast math operations
        #define FAST_EXP __expf
        
        // Warp size
        #define WARP_SIZE 32
        
        template <typename scalar_t>
        __global__ void mamba_final_state_kernel(
            const scalar_t* __restrict__ X,        // [batch_size, seq_length, n_heads, d_head]
            const scalar_t* __restrict__ A,        // [batch_size, seq_length, n_heads]
            const scalar_t* __restrict__ B,        // [batch_size, seq_length, n_heads, d_state]
            scalar_t* __restrict__ output,         // [batch_size, n_heads, d_head, d_state]
            const scalar_t* __restrict__ initial_states, // [batch_size, n_heads, d_head, d_state] or nullptr
            const int batch_size,
            const int seq_length,
            const int n_heads,
            const int d_head,
            const int d_state,
            const int block_len) {
            
            // Calculate indices
            const int batch_idx = blockIdx.x;
            const int head_idx = blockIdx.y;
            const int d_state_idx = threadIdx.x;
            const int d_head_base_idx = threadIdx.y * 8; // Each thread processes 8 elements in d_head dimension
            
            // Early exit if indices are out of bounds
            if (batch_idx >= batch_size || head_idx >= n_heads || d_state_idx >= d_state)
                return;
            
            // Number of chunks
            const int n_chunks = seq_length / block_len;
            
            // Use shared memory for A values and cumulative sums
            extern __shared__ float shared_mem[];
            float* A_chunk = shared_mem;                      // Size: block_len + 16 (padding)
            float* A_cumsum = &A_chunk[block_len + 16];       // Size: n_chunks + 1 + 16 (padding)
            float* chunk_sums = &A_cumsum[n_chunks + 1 + 16]; // Size: n_chunks
            
            // Parallel computation of chunk sums
            for (int c = threadIdx.y * blockDim.x + threadIdx.x; 
                 c < n_chunks; 
                 c += blockDim.x * blockDim.y) {
                
                float chunk_sum = 0.0f;
                
                // Load and sum A values for this chunk
                for (int l = 0; l < block_len; l++) {
                    int seq_idx = c * block_len + l;
                    float a_val = A[batch_idx * seq_length * n_heads + seq_idx * n_heads + head_idx];
                    chunk_sum += a_val;
                }
                
                chunk_sums[c] = chunk_sum;
            }
            __syncthreads();
            
            // Parallel prefix sum for chunk sums (only first warp)
            if (threadIdx.y == 0 && threadIdx.x < 32) {
                int tid = threadIdx.x;
                
                // Initialize A_cumsum[0] = 0
                if (tid == 0) {
                    A_cumsum[0] = 0.0f;
                }
                
                // Copy chunk sums to A_cumsum
                for (int i = tid; i < n_chunks; i += WARP_SIZE) {
                    if (i < n_chunks) {
                        A_cumsum[i + 1] = chunk_sums[i];
                    }
                }
                __syncwarp();
                
                // Parallel prefix sum (scan)
                for (int stride = 1; stride <= n_chunks; stride *= 2) {
                    for (int i = tid; i < n_chunks; i += WARP_SIZE) {
                        int idx = i + 1;
                        if (idx >= stride && idx <= n_chunks) {
                            A_cumsum[idx] += A_cumsum[idx - stride];
                        }
                    }
                    __syncwarp();
                }
            }
            __syncthreads();
            
            // Get the last cumulative sum value
            float last_cumsum = A_cumsum[n_chunks];
            
            // Process each element in the d_head dimension assigned to this thread
            for (int d_head_offset = 0; d_head_offset < 8 && d_head_base_idx + d_head_offset < d_head; d_head_offset++) {
                int d_head_idx = d_head_base_idx + d_head_offset;
                
                // Initialize final state
                float final_state = 0.0f;
                
                // Set initial state if provided
                if (initial_states != nullptr) {
                    final_state = initial_states[
                        batch_idx * n_heads * d_head * d_state + 
                        head_idx * d_head * d_state + 
                        d_head_idx * d_state + 
                        d_state_idx
                    ];
                    
                    // Apply decay to initial state
                    float decay_initial = FAST_EXP(last_cumsum - A_cumsum[0]);
                    final_state *= decay_initial;
                }
                
                // Process each chunk
                for (int c = 0; c < n_chunks; c++) {
                    // Load A values for this chunk into shared memory using cooperative loading
                    for (int l = threadIdx.y * blockDim.x + threadIdx.x; 
                         l < block_len; 
                         l += blockDim.x * blockDim.y) {
                        int seq_idx = c * block_len + l;
                        A_chunk[l] = A[batch_idx * seq_length * n_heads + seq_idx * n_heads + head_idx];
                    }
                    __syncthreads();
                    
                    // Precompute chunk base cumsum
                    float chunk_base_cumsum = A_cumsum[c];
                    
                    // Register for local cumsum to avoid repeated shared memory access
                    float local_cumsum = chunk_base_cumsum;
                    
                    // Process each position in the chunk with aggressive loop unrolling
                    #pragma unroll 16
                    for (int l = 0; l < block_len; l++) {
                        int seq_idx = c * block_len + l;
                        
                        // Update local cumsum (add previous A value)
                        if (l > 0) {
                            local_cumsum += A_chunk[l-1];
                        }
                        
                        // Compute decay factor: exp(last_cumsum - local_cumsum - current_A)
                        float decay = FAST_EXP(last_cumsum - local_cumsum - A_chunk[l]);
                        
                        // Get B and X values with coalesced access
                        float b_val = B[
                            batch_idx * seq_length * n_heads * d_state + 
                            seq_idx * n_heads * d_state + 
                            head_idx * d_state + 
                            d_state_idx
                        ];
                        
                        float x_val = X[
                            batch_idx * seq_length * n_heads * d_head + 
                            seq_idx * n_heads * d_head + 
                            head_idx * d_head + 
                            d_head_idx
                        ];
                        
                        // Accumulate directly to final state
                        final_state += decay * b_val * x_val;
                    }
                    __syncthreads();
                }
                
                // Write output with coalesced access
                output[
                    batch_idx * n_heads * d_head * d_state + 
                    head_idx * d_head * d_state + 
                    d_head_idx * d_state + 
                    d_state_idx
                ] = final_state;
            }
        }
        
        
        
        
        
static void* const __kernelmill_instance_0 = (void*)&mamba_final_state_kernel<float>;
static void* const __kernelmill_instance_1 = (void*)&mamba_final_state_kernel<double>;
