# s14 call 1: GPU tests of the reference beside the candidate's checks (CUDA IPC); guards off against standard, new code
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res1; mkdir -p $R
KM_GPU_PART=hostile timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/guards/test_gpu_corpus.py tests/verify/test_cuda_ipc.py tests/verify/test_zygote.py tests/verify/test_devices.py 2>&1 | tail -4
date
timeout 330 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 2 --json $R/guards_new.json 2>&1
tar czf $OUT/c1.tgz -C $R .
date
