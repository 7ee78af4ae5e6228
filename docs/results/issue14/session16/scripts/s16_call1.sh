# s16 call 1: the slim path for CUDA extensions on the GPU machine: its GPU tests; cold builds one at a
# time of the corpus's module-level CUDA candidates, slim against torch's units (--no-slim-units) and
# torch's own load_inline (first 3), each in a cold cache with the headers and binding objects prepared
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res1; mkdir -p $R
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/verify/test_slim_units.py tests/verify/test_unit_merge.py 2>&1 | tail -4 | tee $R/gpu_tests.txt
date
timeout 420 python3 benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --slim both --alone-limit 12 \
  --stock-limit 3 --warm-limit 2 --out $R/build_speed_both.json 2>&1 | tee $R/build_speed_both.log | cut -c1-330
tar czf $OUT/c1.tgz -C $R .
date
