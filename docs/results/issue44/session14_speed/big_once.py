"""reroll_text once over the speed corpus's 2.383 MB unit (unrolled_s7.ptx, ptx_reroll_speed.py
--big): the work whose instructions irefs.sh counts with BIG=1. Run with PYTHONPATH=<tree>/src."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
import ptx_reroll_speed  # noqa: E402

from kernelmill.ptx import reroll_text  # noqa: E402

reroll_text(ptx_reroll_speed.build(Path("/tmp/kernelmill-ptx-reroll-speed"), big=True)[-1].read_text())
