"""Measuring a candidate: timing (`timing`, GPU time from device records in `kernel_time`),
correctness (`correctness`, `trivial`), the machine a figure was taken on (`environment`,
`gpu_clocks`), the GPU lock that keeps timings apart (`gpulock`), the speed-of-light bound
(`sol`) and the torch.compile baseline (`compiled`). Nothing here judges a candidate: that
is `verify/guards/`."""
