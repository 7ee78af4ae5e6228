"""reroll_text once over every 5th function of the 2.383 MB unit (unrolled_s7.ptx), with its header: a sample
that valgrind counts in ~40 s (`PYTHONHASHSEED=0 PYTHONPATH=<tree>/src valgrind --tool=cachegrind --cache-sim=no
--cachegrind-out-file=/dev/null python sample_once.py`), to compare small changes."""
import re
from pathlib import Path
from kernelmill.ptx import reroll_text
t = Path("/tmp/kernelmill-ptx-reroll-speed/unrolled_s7.ptx").read_text()
starts = [m.start() for m in re.finditer(r"^\.visible \.entry", t, re.M)] + [len(t)]
text = t[:starts[0]] + "".join(t[a:b] for a, b in list(zip(starts, starts[1:]))[::5])
reroll_text(text)
