set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi -L; nproc; date
timeout 150 python3 -m pytest -q -m gpu tests/verify/test_unit_merge.py -p no:cacheprovider 2>&1 | tail -3
timeout 480 python3 benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --merge both --parallel 16 --alone-limit 8 --stock-limit 2 --out $OUT/build_merge.json 2>&1 | tee $OUT/build_merge.log | tail -70
date
