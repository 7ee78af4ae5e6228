# s16 call 4 (little device time left): is GNU gold here; cold builds one at a time of the first 16 module-level
# CUDA candidates with the link by gold where present; then the slim path's GPU answers test. Written to $OUT
# as it goes (the call may be cut at the session's device time).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
which ld.gold; ld.gold --version | head -1
timeout 270 python3 benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --slim on --alone-limit 16 \
  --skip-stock --warm-limit 1 --out $OUT/build_speed_gold.json > $OUT/build_speed_gold.log 2>&1
grep -c candidate $OUT/build_speed_gold.log; date
timeout 80 python3 -m pytest -q -m gpu -p no:cacheprovider tests/verify/test_slim_units.py -k answer 2>&1 | tail -8 | tee $OUT/gpu_test.txt
date
