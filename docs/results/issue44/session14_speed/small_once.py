"""reroll_text once over the 25 small files of the speed corpus (ptx_reroll_speed.py without
--big): the work whose instructions irefs.sh counts. Run with PYTHONPATH=<tree>/src."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
import ptx_reroll_speed  # noqa: E402

from kernelmill.ptx import reroll_text  # noqa: E402

files = ptx_reroll_speed.build(Path("/tmp/kernelmill-ptx-reroll-speed"), big=False)
for f in files:
    reroll_text(f.read_text())
