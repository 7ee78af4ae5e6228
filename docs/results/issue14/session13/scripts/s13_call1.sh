# s13 call 1: GPU tests at the review commit; where a run process's warm-up CPU goes; guards off/standard
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi -L; nproc; date
R=/tmp/res1; mkdir -p $R; export PYTHONPATH=$PWD/src
which perf strace gdb 2>&1 | head -3
python3 -m pip install -q --no-index --no-deps --target /tmp/spy .whl/spy/*.whl 2>&1 | tail -1
SPY=/tmp/spy/bin/py-spy
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/verify/test_devices.py tests/verify/test_zygote.py 2>&1 | tail -2
timeout 120 python3 benchmarks/diag/profiler_start.py --repeats 3 --out $R/profiler_start.json 2>&1 | tail -40
timeout 60 $SPY record --native -r 250 -f raw -o $R/spy_warm.txt -- python3 benchmarks/diag/profiler_start.py --one as_warm_cuda 2>&1 | tail -3
timeout 150 $SPY record --subprocesses -r 50 -f raw -o $R/spy_tp.txt -- python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 1 --out $R/tp_spy.json 2>&1 | tail -4
date
timeout 200 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 1 --json $R/guards.json 2>&1 | tail -12
tar czf $OUT/c1.tgz -C $R .
date
