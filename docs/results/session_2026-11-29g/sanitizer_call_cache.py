"""Session 15's check of the sanitizer's watched call on a CPU (the real tool needs a GPU): does the
call process load the extension the verifier's build phase made, or compile it again?

    KERNELMILL_CACHE=/tmp/sc15 python docs/results/session_2026-11-29g/sanitizer_call_cache.py

It verifies one builtin C++ `load_inline` candidate (`kernelmill verify`, CPU, standard guards),
then runs `python -m kernelmill.verify.measure.sanitizer --call` (the process compute-sanitizer
watches) on it twice with a fresh TORCH_EXTENSIONS_DIR: with the spec's `build` (0.5.7: the run's
builder and cache) and without it (0.5.6), and prints each one's wall time."""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kernelmill.tasks.builtin.examples import builtin_samples
from kernelmill.tasks import load_tasks

cache = Path(os.environ.get("KERNELMILL_CACHE", "/tmp/sc15"))
work = Path(tempfile.mkdtemp(prefix="sc15-"))
sample = next(s for s in builtin_samples(["cpp"]) if s.sample_id.endswith("01_ReLU/cpp__ok"))
(work / "samples.jsonl").write_text(json.dumps({"sample_id": sample.sample_id, "task_id": sample.task_id,
                                                "language": "cpp", "code": sample.code}) + "\n")
t = time.monotonic()
subprocess.run([sys.executable, "-m", "kernelmill", "verify", "builtin", str(work / "samples.jsonl"), "-o",
                str(work / "v.jsonl"), "--device", "cpu", "--rerun"], check=True, env={**os.environ, "KERNELMILL_CACHE": str(cache)})
verdict = json.loads((work / "v.jsonl").read_text().splitlines()[-1])
print(f"verify: {verdict['status']} in {time.monotonic() - t:.1f} s; build {verdict.get('measurement', {}).get('build')}")
(work / "candidate.py").write_text(sample.code)
task = load_tasks("builtin").by_id()[sample.task_id]
for label, build in (("with the run's builder (0.5.7)", {"cache": str(cache / "build")}), ("torch's load_inline (0.5.6)", None)):
    spec = {"task_code": task.code, "candidate": str(work / "candidate.py"), "input_seed": 1, "device": "cpu",
            "sizes": {}, "echo": True, **({"build": build} if build else {})}
    (work / "call.json").write_text(json.dumps(spec))
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": tempfile.mkdtemp(prefix="sc15-ext-")}
    t = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kernelmill.verify.measure.sanitizer", "--call", str(work / "call.json")],
                          capture_output=True, text=True, env=env)
    print(f"{label}: exit {proc.returncode}, {time.monotonic() - t:.1f} s: {proc.stdout.strip()[-120:]} {proc.stderr.strip()[-300:]}")
