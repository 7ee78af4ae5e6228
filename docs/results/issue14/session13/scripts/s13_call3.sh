# s13 call 3: guards off against standard (the profiler fix), and the GPU hostile corpus with kineto_profile
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi -L; nproc; date
R=/tmp/res3; mkdir -p $R; export PYTHONPATH=$PWD/src
timeout 330 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 2 --json $R/guards.json 2>&1 | grep -v "median phases"
date
KM_GPU_PART=hostile timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests/guards/test_gpu_corpus.py 2>&1 | tail -4
tar czf $OUT/c3.tgz -C $R .
date
