# s14 call 6: final code: GPU tests; guards off against standard (interleaved, twice); serve latency of a cached-build candidate
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res6; mkdir -p $R
KM_GPU_PART=hostile timeout 220 python3 -m pytest -q -m gpu -p no:cacheprovider tests/guards/test_gpu_corpus.py tests/verify/test_cuda_ipc.py tests/verify/test_zygote.py tests/verify/test_devices.py 2>&1 | tail -3
date
timeout 280 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 2 --json $R/guards.json 2>&1 | grep -v "median phases"
date
timeout 70 python3 benchmarks/serve_latency.py --device cuda --requests 12 --modes long-lived --json $R/serve_torch.json 2>&1 | tail -2
tar czf $OUT/c6.tgz -C $R .
date
