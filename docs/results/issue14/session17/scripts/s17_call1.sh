# s17 call 1: the builder's GPU tests with the link against stubs of torch's libraries (link_stubs.py:
# stub-linked CUDA extensions import and answer on the GPU); cold builds one at a time of the corpus's
# module-level CUDA candidates, stubs and torch's real libraries in the same call (--link both), torch's
# load_inline on the first for the ratio; where each build's time went (unit_s, link_s)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=$OUT; ld --version | head -1; g++ --version | head -1
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/verify/test_slim_units.py tests/verify/test_unit_merge.py \
  tests/verify/test_inline_build.py tests/verify/test_link_stubs.py 2>&1 | tail -30 | tee $R/gpu_tests.txt
date
timeout 400 python3 benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --slim on --link both \
  --stock-limit 1 --alone-limit 16 --warm-limit 2 --out $R/build_speed_link.json 2>&1 | tee $R/build_speed_link.log | cut -c1-160
date
