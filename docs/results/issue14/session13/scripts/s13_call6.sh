# s13 call 6 (same machine as 4-5): GPU tests of the exit overlap and the kineto profile; builtin throughput
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid --format=csv; date
R=/tmp/res6; mkdir -p $R
KM_GPU_PART=hostile timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/guards/test_gpu_corpus.py tests/verify/test_cuda_ipc.py 2>&1 | tail -3
date
timeout 140 python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 1 --out $R/tp.json 2>&1 | tail -3
python3 -c "import json; d=json.load(open('$R/tp.json')); print('steady', d['steady'], 'wall', d['wall_s'], 'median run', d['median_run_wall_s'])"
tar czf $OUT/c6.tgz -C $R .
date
