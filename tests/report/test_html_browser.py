"""The HTML report in a real headless Chromium: the numbers on the page are the
verdicts' numbers, search/filter/sort work, nothing is fetched from outside the
file, and screenshots are taken (copied to $KERNELMILL_REPORT_SCREENSHOTS when set,
for a person to look at)."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from kernelmill.records import Sample, Verdict, read_jsonl
from kernelmill.report import compute
from kernelmill.report.output import write_report
from kernelmill.report.inputs import load_inputs

DEMO = Path(__file__).parent / "data" / "demo_cpu"
RESAMPLES = 300


@pytest.fixture(scope="module")
def page(chromium, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    here = os.getcwd()
    os.chdir(DEMO)  # the page names its inputs as a user in that folder would (no machine's paths in screenshots)
    try:
        inputs = load_inputs(Path("verdicts.jsonl"), Path("samples.jsonl"), "builtin")
    finally:
        os.chdir(here)
    write_report(inputs, out, ks=[1], resamples=RESAMPLES)
    chromium.open(out.as_uri())
    return chromium, out


def shots_dir(default: Path) -> Path:
    target = os.environ.get("KERNELMILL_REPORT_SCREENSHOTS")
    return Path(target) if target else default


def test_page_loads_nothing_from_outside_and_has_no_script_errors(page):
    browser, out = page
    assert browser.console_errors() == []
    urls = browser.requested_urls()
    assert urls and all(u.startswith(("file:", "data:")) for u in urls), urls


def test_numbers_on_the_page_are_the_verdicts_numbers(page):
    browser, _ = page
    verdicts = read_jsonl(DEMO / "verdicts.jsonl", Verdict)
    m = compute(verdicts, ps=[0, 0.5, 1, 1.5, 2], ks=[1], resamples=RESAMPLES)
    cell = "document.querySelector('table[data-grouping=level] tr[data-group=all] td[data-metric=\"{}\"]')"
    exec_cell = browser.eval(cell.format("exec") + ".textContent")
    assert exec_cell.startswith(f"{100 * m.exec:.1f}%")
    assert exec_cell.endswith(f"{100 * m.exec_ci[0]:.1f}–{100 * m.exec_ci[1]:.1f}")
    assert float(browser.eval(cell.format("fast_1") + ".dataset.value")) == pytest.approx(m.fast["1"], rel=1e-5)
    assert browser.eval(cell.format("geomean_speedup") + ".textContent").startswith(f"{m.geomean_speedup:.2f}x")
    assert browser.eval(cell.format("samples") + ".textContent") == str(len(verdicts))
    # status counts
    shown = browser.eval("Object.fromEntries([...document.querySelectorAll('#status-counts tr[data-status]')]"
                         ".map(r => [r.dataset.status, +r.querySelector('[data-count]').dataset.count]))")
    assert {s: n for s, n in shown.items() if n} == dict(Counter(v.status for v in verdicts))
    # one row per task, each with its samples; one sample's figures
    per_task = browser.eval("Object.fromEntries([...document.querySelectorAll('#tasks tbody.task')]"
                            ".map(t => [t.dataset.taskId, t.querySelectorAll('.sample').length]))")
    assert per_task == dict(Counter(v.task_id for v in verdicts))
    v = next(v for v in verdicts if v.sample_id == "builtin/level1/01_ReLU/cpp__ok")
    facts = browser.eval("document.getElementById('sample-builtin/level1/01_ReLU/cpp__ok').querySelector('.facts')"
                         ".textContent")
    assert f"speedup {v.speedup:.2f}x [{v.speedup_ci[0]:.2f}–{v.speedup_ci[1]:.2f}]" in facts
    assert f"kernel {v.runtime_ms:.4g} ms · reference {v.ref_runtime_ms:.4g} ms" in facts
    compile_error = next(v for v in verdicts if v.status == "compile_error")
    msg = browser.eval(f"document.getElementById('sample-{compile_error.sample_id}').querySelector('.msg pre').textContent")
    assert msg == compile_error.message
    # the code, highlighted
    samples = {s.sample_id: s for s in read_jsonl(DEMO / "samples.jsonl", Sample)}
    code = browser.eval(f"document.getElementById('sample-{v.sample_id}').querySelector('details.code pre').textContent")
    assert code.strip() == samples[v.sample_id].code.strip()
    assert browser.eval(f"document.getElementById('sample-{v.sample_id}').querySelectorAll('details.code pre span.k').length") > 0


def test_search_filter_and_sort(page):
    browser, _ = page
    count = "document.getElementById('shown-count').textContent"
    visible = "[...document.querySelectorAll('#tasks tbody.task')].filter(t => !t.hidden).map(t => t.dataset.taskId)"

    def set_value(el: str, value: str, event: str) -> None:
        browser.eval(f"(() => {{ const e = document.getElementById('{el}'); e.value = {value!r}; "
                     f"e.dispatchEvent(new Event('{event}')); }})()")

    set_value("search", "softmax", "input")
    assert browser.eval(visible) == ["level1/24_Softmax"] and browser.eval(count) == "1 of 10 tasks"
    set_value("search", "", "input")
    set_value("status-filter", "timeout", "change")
    assert browser.eval(visible) == ["level1/01_ReLU"]
    assert browser.eval("[...document.querySelectorAll('tbody.task:not([hidden]) .sample')].filter(s => !s.hidden)"
                        ".map(s => s.dataset.status)") == ["timeout"]
    set_value("status-filter", "", "change")
    set_value("language-filter", "cpp", "change")
    assert len(browser.eval(visible)) == 3
    set_value("language-filter", "", "change")
    verdicts = read_jsonl(DEMO / "verdicts.jsonl", Verdict)
    best: dict[str, float] = {}
    for v in verdicts:
        if v.correct and v.speedup:
            best[v.task_id] = max(best.get(v.task_id, 0), v.speedup)
    by_speed = sorted(best, key=best.get, reverse=True)
    browser.eval("document.querySelector('#tasks th[data-sort=best]').click()")  # ascending
    browser.eval("document.querySelector('#tasks th[data-sort=best]').click()")  # descending
    order = browser.eval(visible)
    assert order[:len(by_speed)] == by_speed  # untimed tasks last
    assert browser.eval("document.querySelector('#tasks th[data-sort=best]').getAttribute('aria-sort')") == "descending"
    browser.eval("document.querySelector('#tasks th[data-sort=taskId]').click()")
    assert browser.eval(visible) == sorted(best.keys() | {v.task_id for v in verdicts})


def test_screenshots(page, tmp_path):
    browser, _ = page
    out = shots_dir(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    browser.eval("window.scrollTo(0, 0)")
    top = browser.screenshot(out / "report_top.png")
    browser.eval("document.querySelector('#tasks tbody.task[data-task-id=\"level1/01_ReLU\"] tr.task-row').click()")
    assert browser.eval("!document.querySelector('#tasks tbody.task[data-task-id=\"level1/01_ReLU\"] tr.samples-row').hidden")
    browser.eval("document.querySelector('#tasks tbody.task[data-task-id=\"level1/01_ReLU\"] details.code').open = true")
    full = browser.screenshot(out / "report_full.png", full_page=True)
    for shot in (top, full):
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    if out != tmp_path:
        shutil.copy(top, tmp_path / top.name)
