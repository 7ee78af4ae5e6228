# s15 call 4 (same warm machine as call 3): GPU tests at this session's code; serve latency of a cached-build candidate
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res4; mkdir -p $R
KM_GPU_PART=hostile timeout 260 python3 -m pytest -q -m gpu -p no:cacheprovider tests/guards/test_gpu_corpus.py tests/verify/test_cuda_ipc.py tests/verify/test_zygote.py tests/verify/test_devices.py 2>&1 | tail -4
date
timeout 80 python3 benchmarks/serve_latency.py --device cuda --requests 12 --modes long-lived --json $R/serve_torch.json 2>&1 | tail -2
tar czf $OUT/c4.tgz -C $R .
date
