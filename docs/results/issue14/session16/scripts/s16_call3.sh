# s16 call 3: the slim path's GPU tests at the final builder; cold builds one at a time of ALL the corpus's
# module-level CUDA candidates (slim; a header entry checked by size, a cached unit looking no header up),
# torch's load_inline on the first for the ratio; where each build's time went (unit_s, link_s)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res3; mkdir -p $R
timeout 130 python3 -m pytest -q -m gpu -p no:cacheprovider tests/verify/test_slim_units.py tests/verify/test_unit_merge.py 2>&1 | tail -30 | tee $R/gpu_tests.txt
date
timeout 440 python3 benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --slim on \
  --stock-limit 1 --warm-limit 2 --out $R/build_speed_all.json 2>&1 | tee $R/build_speed_all.log | cut -c1-200
tar czf $OUT/c3.tgz -C $R .
date
