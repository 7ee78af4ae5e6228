# s17 call 2 (the machine of call 1, warm): every module-level CUDA candidate of the corpus, link with
# stubs (the default): a batch pass (every cold build at once, 16 processes, as a run's build workers) and
# the one-at-a-time pass; torch's load_inline measured in call 1 on this machine
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=$OUT
timeout 540 python3 benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --slim on --link stubs \
  --skip-stock --parallel 16 --warm-limit 1 --out $R/build_speed_all.json 2>&1 | tee $R/build_speed_all.log | cut -c1-160
date
