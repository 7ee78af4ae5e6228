"""The candidate's report pipe: anything out of protocol is kept as a forged-output
finding, however much of it there is (item 20)."""

from __future__ import annotations

import json
import os
import threading

from kernelmill.verify.process.channel import Reports as _Reports


def test_junk_lines_and_a_second_report_are_findings_not_a_crash():
    r, w = os.pipe()

    def write():
        with os.fdopen(w, "wb") as fh:
            fh.write(b"speedup: 100x\n" * 5000)  # far past the recursion limit
            fh.write((json.dumps({"facts": {"status": "ran"}}) + "\n").encode())
            fh.write((json.dumps({"facts": {"status": "ran", "forged": True}}) + "\n").encode())

    t = threading.Thread(target=write)
    t.start()
    reports = _Reports(r)
    assert reports.next() == {"facts": {"status": "ran"}}
    reports.drain()
    t.join()
    os.close(r)
    assert reports.final == {"status": "ran"}  # the first report decides
    assert len(reports.forged) == 5001 and reports.forged[-1] == "a second final report"
