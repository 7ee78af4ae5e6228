"""reroll_text over the speed corpus with its --big unit (26 files, 3.836 MB), one core, CPU seconds:
the 25 small files and the big unit apart, best of --repeat. Run with PYTHONPATH=<tree>/src."""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
import ptx_reroll_speed  # noqa: E402

from kernelmill.ptx import reroll_text  # noqa: E402

files = ptx_reroll_speed.build(Path("/tmp/kernelmill-ptx-reroll-speed"), big=True)
texts = [f.read_text() for f in files]
small, big = texts[:-1], texts[-1:]
repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 2
for name, group in (("small", small), ("big", big)):
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for x in group:
            reroll_text(x)
        best = min(best, time.process_time() - t)
    mb = sum(len(x.encode()) for x in group) / 1e6
    print(f"{name}: {mb:.3f} MB, {best:.2f} s CPU, {mb / best:.3f} MB per CPU s")
