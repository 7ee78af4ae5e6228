set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi -L; date
timeout 120 python3 -m pytest -q -m gpu tests/verify/test_unit_merge.py -p no:cacheprovider 2>&1 | tail -2
timeout 330 python3 benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --merge on --parallel 10 --limit 20 --alone-limit 3 --skip-stock --out $OUT/build_batch10.json 2>&1 | tee $OUT/build_batch10.log | grep -E "batch|ours_pch|median_build_s|stock_over" | head -20
uptime; date
