"""benchmarks/phase_table.py: the guard share with and without the waits for a warm process."""

from __future__ import annotations

from benchmark_support import load_benchmark


def test_waiting_for_a_spare_does_not_count_as_cheaper_guards():
    pt = load_benchmark("phase_table")
    guards = {"guard_inputs_s": 0.3, "guard_profile_s": 0.1, "guard_exchange_s": 0.2, "guard_judge_s": 0.1}
    rows = [{"status": "ok", "phases": {**guards, "run_wall_s": 2.0}},  # a warm spare
            {"status": "ok", "phases": {**guards, "run_wall_s": 5.0, "spare_wait_s": 3.0}}]  # waited 3 s
    t = pt.phase_table(rows)
    # of the run wall: 0.7 / 2.0 and 0.7 / 5.0, as if the second run's guards were cheaper
    assert round(t["guard_share"]["max"], 3) == 0.35
    assert round(t["guard_share"]["median"], 3) == round((0.35 + 0.14) / 2, 3)
    # less the wait, both runs spend the same share on guards
    assert round(t["guard_share_of_work"]["median"], 3) == 0.35 == round(t["guard_share_of_work"]["max"], 3)


def test_timeline_says_when_no_run_was_going_and_how_long_built_candidates_queued():
    pt = load_benchmark("phase_table")
    rows = [{"sample_id": "a", "measurement": {"timeline": {"run": [[1.0, 3.0]]}}},  # nothing to build
            {"sample_id": "b", "measurement": {"timeline": {"build": [[0.0, 5.0]], "run": [[6.0, 8.0]]}}},
            {"sample_id": "c", "measurement": {"timeline": {"build": [[0.0, 4.0]], "rebuild": [[9.0, 10.0]],
                                                            "run": [[4.5, 9.0], [10.5, 11.0]]}}},
            {"sample_id": "d", "phases": {}}]  # no timeline (a cached verdict): left out
    tl = pt.timeline(rows)
    assert tl["candidates"] == 3 and tl["wall_s"] == 11.0 and tl["last_build_end_s"] == 10.0
    assert tl["first_run_start_s"] == 1.0 and tl["last_run_start_s"] == 10.5
    # idle: 0-1, 3-4.5, 9.0-10.5 (the rebuild) -> 1 + 1.5 + 1.5
    assert tl["no_run_going_s"] == 4.0
    # queued after the build: a 1.0 (no build), b 1.0, c 0.5
    assert tl["queued_for_run_s"] == {"median": 1.0, "max": 1.0}
    lines = pt.gantt(tl["lines"], width=22)
    assert lines[0].startswith("a") and "R" in lines[0] and "b" not in lines[0].split("|")[1]
    assert "." in lines[2] and lines[2].split("|")[1].index("b") < lines[2].split("|")[1].index("R")
    assert pt.timeline([{"phases": {}}]) is None
