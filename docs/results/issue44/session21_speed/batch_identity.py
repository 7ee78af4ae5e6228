"""`reroll_texts(jobs=2, count=True)` (the path of `kernelmill ptx stats --jobs 2`) over the speed corpus with
its --big unit: each text's output hash, tokens and stats -> a JSON, for a byte comparison of two trees
(benchmarks/ptx_identity.py rolls with reroll_text, not through the batch that cuts the big unit):
    PYTHONPATH=<tree>/src python docs/results/issue44/session21_speed/batch_identity.py OUT.json [JOBS]"""
import sys, json, hashlib, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
import ptx_reroll_speed
from kernelmill.ptx.batch import reroll_texts
files = ptx_reroll_speed.build(Path("/tmp/kernelmill-ptx-reroll-speed"), big=True)
texts = [(f.read_text(), str(f)) for f in files]
t = time.perf_counter()
done = reroll_texts(texts, jobs=int(sys.argv[2]) if len(sys.argv) > 2 else 2, count=True)
print(f"{time.perf_counter() - t:.2f} s")
Path(sys.argv[1]).write_text(json.dumps([{"file": s, "sha": hashlib.sha1(r.text.encode()).hexdigest(), "tokens": r.tokens,
    "stats": [r.stats.functions, r.stats.checked, r.stats.failed, r.stats.loops]} for (_, s), r in zip(texts, done)], indent=0))
