"""The candidate's process exits while the judge works (supervisor._Exiting, CUDA
IPC runs): what it leaves behind is still reaped, and a finding that arrives after
the judge decides as it would have before it."""

import itertools
import subprocess
import sys
import textwrap

from kernelmill.verify.guards.flags import Findings, decide


def test_reaping_spares_the_children_it_is_told_to_keep():
    # in a process of its own: reap_descendants kills every child of the process it runs in
    code = textwrap.dedent("""
        import os, subprocess, sys, time
        from kernelmill.verify.process.launch import reap_descendants
        keep = subprocess.Popen(["sleep", "30"])
        plain = subprocess.Popen(["sleep", "30"])
        detached = subprocess.Popen(["sleep", "30"], start_new_session=True)
        time.sleep(0.2)
        lines = reap_descendants(frozenset({keep.pid}))
        assert keep.poll() is None, "the kept child was killed"
        for p in (plain, detached):
            try:
                os.kill(p.pid, 0)
                raise SystemExit(f"child {p.pid} survived the reaping")
            except ProcessLookupError:
                pass
        assert len(lines) == 1 and str(detached.pid) in lines[0], lines
        keep.kill(); keep.wait()
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "ok" in res.stdout, res.stdout + res.stderr


def _findings(flags):
    f = Findings()
    for flag in flags:
        f.add(flag, f"detail of {flag}")
    return f


def test_a_late_forged_output_decides_as_before_the_judge():
    bases = [{"status": "ok", "correct": True, "flags": [], "speedup": 2.0, "runtime_ms": 1.0, "ref_runtime_ms": 2.0},
             {"status": "incorrect", "correct": False, "flags": ["timing_skipped"], "message": "trial 1/5: wrong"}]
    judged = [(), ("constant_output",), ("unsynced_work",), ("torch_fallback",), ("constant_output", "decoy_kernel")]
    for base, flags, policy in itertools.product(bases, judged, ("reject", "flag", "allow")):
        before = decide(_findings(("forged_output",) + flags), base, policy)  # the order before the overlap
        late = _findings(flags)
        first = decide(late, base, policy)  # the judge, before the process has gone
        late.add("forged_output", "detail of forged_output")
        after = decide(late, first, policy)
        assert after["status"] == before["status"] == "rejected", (base, flags, policy)
        assert set(after["flags"]) == set(before["flags"])
        assert sorted(after["message"].split("; ")) == sorted(before["message"].split("; "))
        assert ("speedup" in after) == ("speedup" in before) is False
