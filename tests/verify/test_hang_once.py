"""A hanging candidate costs the run timeout once: it is started once, killed
at the deadline, and not run again (counted by the candidate itself, not timed)."""

from __future__ import annotations

import pytest

from kernelmill.records import Sample
from kernelmill.verify import VerifyConfig, verify_samples

from verify_support import RELU_TASK, candidate


@pytest.mark.parametrize("guards", ["standard", "off"])
def test_a_hang_is_run_once_and_times_out(tmp_path, guards):
    marker = tmp_path / "starts.txt"
    # it hangs asleep (a busy loop would take a CI core from the other tests for the whole
    # deadline); the deadline covers the run worker's start-up too (torch imported before the
    # candidate's module is), which took over 3 s on a loaded 2-core CI machine
    code = candidate("while True:\n    time.sleep(60)",
                     imports=f"import time\nopen({str(marker)!r}, 'a').write('started\\n')")
    cfg = VerifyConfig(device="cpu", trials=2, run_timeout=10, cache_dir=str(tmp_path / "cache"), guards=guards)
    (v,) = verify_samples([RELU_TASK], [Sample("hang", RELU_TASK.task_id, "torch", code)], cfg)
    assert v.status == "timeout" and "within 10 s" in v.message
    assert marker.read_text().count("started") == 1  # imported once: no retry after the timeout
