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
    code = candidate("while True:\n    pass", imports=f"open({str(marker)!r}, 'a').write('started\\n')")
    cfg = VerifyConfig(device="cpu", trials=2, run_timeout=3, cache_dir=str(tmp_path / "cache"), guards=guards)
    (v,) = verify_samples([RELU_TASK], [Sample("hang", RELU_TASK.task_id, "torch", code)], cfg)
    assert v.status == "timeout" and "within 3 s" in v.message
    assert marker.read_text().count("started") == 1  # imported once: no retry after the timeout
