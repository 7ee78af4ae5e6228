# s16 call 2: pybind11's version here; the slim path's GPU tests (the binding now made by pybind11's own macro
# where it may: call 1 found the binding objects failing to compile with this torch's pybind11); cold builds
# one at a time of the corpus's module-level CUDA candidates (slim; torch's load_inline on the first 2)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res2; mkdir -p $R
python3 -c "import torch, os; print(torch.__version__); print(''.join(l for l in open(os.path.join(os.path.dirname(torch.__file__), 'include/pybind11/detail/common.h')) if 'define PYBIND11_VERSION_' in l))"
timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider tests/verify/test_slim_units.py tests/verify/test_unit_merge.py 2>&1 | tail -40 | tee $R/gpu_tests.txt
date
timeout 390 python3 benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --slim on --alone-limit 24 \
  --stock-limit 2 --warm-limit 2 --out $R/build_speed_slim.json 2>&1 | tee $R/build_speed_slim.log | cut -c1-300
tar czf $OUT/c2.tgz -C $R .
date
