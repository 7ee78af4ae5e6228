"""benchmarks/phase_table.py: the guard share with and without the waits for a warm process."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("phase_table", ROOT / "benchmarks" / "phase_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_waiting_for_a_spare_does_not_count_as_cheaper_guards():
    pt = _module()
    guards = {"guard_inputs_s": 0.3, "guard_profile_s": 0.1, "guard_exchange_s": 0.2, "guard_judge_s": 0.1}
    rows = [{"status": "ok", "phases": {**guards, "run_wall_s": 2.0}},  # a warm spare
            {"status": "ok", "phases": {**guards, "run_wall_s": 5.0, "spare_wait_s": 3.0}}]  # waited 3 s
    t = pt.phase_table(rows)
    # of the run wall: 0.7 / 2.0 and 0.7 / 5.0, as if the second run's guards were cheaper
    assert round(t["guard_share"]["max"], 3) == 0.35
    assert round(t["guard_share"]["median"], 3) == round((0.35 + 0.14) / 2, 3)
    # less the wait, both runs spend the same share on guards
    assert round(t["guard_share_of_work"]["median"], 3) == 0.35 == round(t["guard_share_of_work"]["max"], 3)
