"""The sandbox's watchdogs (verify/sandbox.py): memory is judged by the group's
proportional set size (pages a fork shares count once), read only when the cheap
resident sum is over the limit; one scan of /proc serves every watch loop."""

from __future__ import annotations

import sys
import textwrap
import threading

from kernelmill.verify import sandbox as sb
from kernelmill.verify.sandbox import Sandbox, scrubbed_env

# a parent that touches `mb` MB, then forks `kids` children that keep those pages shared
SHARED = textwrap.dedent('''
    import os, sys, time
    mb, kids, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    for _ in range(kids):
        if os.fork() == 0:
            time.sleep(hold)
            os._exit(0)
    time.sleep(hold)
''')


def _run(tmp_path, mb: int, kids: int, limit_gb: float):
    box = Sandbox(limit_gb, 64, 10_000, limit_address_space=False)
    (tmp_path / "w").mkdir(exist_ok=True)
    proc = box.start([sys.executable, "-c", SHARED, str(mb), str(kids), "3"], tmp_path / "w",
                     scrubbed_env(home=str(tmp_path / "w")))
    return box.watch(proc, timeout=60)


def test_pages_a_fork_shares_count_once(tmp_path):
    # 5 processes hold the same 200 MB: ~1 GB resident summed, ~210 MB proportional
    res = _run(tmp_path, 200, 4, limit_gb=0.6)
    assert res.killed_reason == "" and res.returncode == 0
    assert res.peak_rss_mb > 600  # the cheap sum was over the limit: the exact measure decided


def test_memory_of_its_own_over_the_limit_is_killed(tmp_path):
    res = _run(tmp_path, 800, 0, limit_gb=0.5)
    assert res.killed_reason == "memory"


def test_watch_loops_share_one_scan_of_proc(monkeypatch):
    calls = []
    real = sb._scan_groups
    monkeypatch.setattr(sb, "_scan_groups", lambda: calls.append(1) or real())
    monkeypatch.setattr(sb, "_scan", (float("-inf"), {}))
    barrier = threading.Barrier(8)

    def ask():
        barrier.wait()
        sb._group_members(1, max_age=60.0)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1  # eight loops, one scan
    sb._group_members(1)  # max_age 0 (the group kill's check): always a scan of its own
    assert len(calls) == 2


# writes its last file, then lingers as a run worker's CUDA teardown does
LINGER = textwrap.dedent('''
    import os, sys, time
    with open("result.json.tmp", "w") as fh:
        fh.write('{"status": "ok"}')
    os.replace("result.json.tmp", "result.json")
    time.sleep(float(sys.argv[1]))
''')


def test_a_written_result_ends_the_watch_and_the_exit_is_reaped_behind_it(tmp_path):
    box = Sandbox(4, 64, 10_000, limit_address_space=False)
    work = tmp_path / "w"
    work.mkdir()
    proc = box.start([sys.executable, "-c", LINGER, "600"], work, scrubbed_env(home=str(work)))
    res = box.watch(proc, timeout=300, done=work / "result.json")
    # the watch ended on the file: not on the exit (the process would linger for 600 s)
    assert res.returncode is None and not res.timed_out and res.killed_reason == ""
    assert (work / "result.json").read_text() == '{"status": "ok"}'
    # and the process is killed and reaped on the watch's thread, not left behind
    for t in [t for t in threading.enumerate() if t.name == "km-reap"]:
        t.join(timeout=120)
    assert proc.returncode is not None and proc.pid not in box._live


def test_without_a_result_the_watch_waits_for_the_exit(tmp_path):
    box = Sandbox(4, 64, 10_000, limit_address_space=False)
    work = tmp_path / "w"
    work.mkdir()
    proc = box.start([sys.executable, "-c", "import sys; sys.exit(3)"], work, scrubbed_env(home=str(work)))
    res = box.watch(proc, timeout=300, done=work / "result.json")
    assert res.returncode == 3


# a guarded run's shape: the leader (the supervisor) touches `lead` MB after forking a child
# (the candidate's process) that touches `kid` MB of its own
TWO_SIDES = textwrap.dedent('''
    import os, sys, time
    lead, kid = int(sys.argv[1]), int(sys.argv[2])
    def touch(mb):
        block = bytearray(mb << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        return block
    if os.fork() == 0:
        mine = touch(kid)
        time.sleep(3)
        os._exit(0)
    held = touch(lead)
    time.sleep(3)
    os.wait()
''')


def _two_sides(tmp_path, lead: int, kid: int, harness_leader: bool):
    box = Sandbox(0.5, 64, 10_000, limit_address_space=False, harness_memory_gb=1.0)
    (tmp_path / "w").mkdir(exist_ok=True)
    proc = box.start([sys.executable, "-c", TWO_SIDES, str(lead), str(kid)], tmp_path / "w",
                     scrubbed_env(home=str(tmp_path / "w")))
    return box.watch(proc, timeout=60, harness_leader=harness_leader)


def test_a_guarded_runs_supervisor_is_not_counted_against_the_candidate(tmp_path):
    # session 14: under strict a 268 MB task's supervisor held ~14 GiB of sets and answers,
    # and with the candidate's own ~8 GiB the group passed 16 GiB: an honest cpp ReLU was killed
    assert _two_sides(tmp_path, 700, 100, harness_leader=False).killed_reason == "memory"
    res = _two_sides(tmp_path, 700, 100, harness_leader=True)
    assert res.killed_reason == "" and res.returncode == 0
    # each side's own peak, for the verdict (measurement.peak_rss_mb): the supervisor's 700 MB,
    # the candidate's 100 MB, each with its interpreter
    assert 700 < res.peak_by_side["harness"] < 1000 and 100 < res.peak_by_side["candidate"] < 400
    assert _two_sides(tmp_path, 50, 50, harness_leader=False).peak_by_side == {}  # watched whole


def test_each_side_of_a_guarded_run_keeps_its_own_limit(tmp_path):
    assert _two_sides(tmp_path, 50, 700, harness_leader=True).killed_reason == "memory"
    assert _two_sides(tmp_path, 1300, 50, harness_leader=True).killed_reason == "harness_memory"


def test_the_supervisors_address_space_is_the_harness_limit():
    box = Sandbox(0.5, 64, 10_000, limit_address_space=True, harness_memory_gb=1.0)
    assert box.rlimits()["RLIMIT_AS"] == (512 + 4096) << 20
    assert box.rlimits(harness=True)["RLIMIT_AS"] == (1024 + 4096) << 20
