"""`kernelmill report`: one self-contained HTML page over a verdicts file.

Everything the page shows is in the file: CSS and script inline, figures as
inline SVG, code highlighted by pygments into classes whose CSS is inline too.
It loads nothing from the network when viewed (tests/report/test_html_browser.py
opens it in headless Chromium and checks that no request leaves the file).

The page, top to bottom: the inputs and warnings; metrics per level, kernel
language and op_type with 95% intervals (report/summary.py); the fast_p curve
and the speedup histogram (report/figures.py); status counts and every flag
that occurs with what it means (the guard catalogue is imported from
verify/guards/flags.py); then one row per task, which opens onto its samples:
status, flags, the compile error or mismatch, speedup with interval, both
runtimes, reasoning length and the highlighted code. Search, filters and
column sorting are a small inline script over rows rendered on the server, so
the page reads the same with scripts off (only the filters need them).
"""

from __future__ import annotations

import html
import json
from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import Any

from ..records import STATUSES, Sample, Verdict
from .figures import fast_p_curve, speedup_histogram
from .inputs import ReportInputs
from .metrics import NOT_RUN_FLAGS, not_run_flag
from .provenance import provenance_lines
from .summary import Breakdown, cell, cell_text, columns, speedup_text

STATUS_MEANINGS = {
    "ok": "built, ran and matched the reference on every trial",
    "incorrect": "ran, but an output differed from the reference (or a guard's correctness check failed)",
    "compile_error": "did not build or import (or is not a candidate: no code, not Python, unknown language)",
    "runtime_error": "built, then raised or crashed while running",
    "timeout": "did not finish within the run or build deadline (process group killed)",
    "rejected": "a reward-hacking guard caught a trick (the output may even be right)",
}
# flags the harness sets that are not guard findings (verify/runner.py, verify/process/worker.py)
HARNESS_FLAGS = {
    "timing_skipped": "correct, but its speed was not measured (e.g. Triton in its CPU interpreter)",
    "compiled_baseline_failed": "correct and timed, but its task's reference did not run under torch.compile "
                                "(verify --compile-baseline), so there is no speedup over the compiled reference",
    "events_disagree": "CUDA events and the GPU time of the call's own work give speedups that differ by more than "
                       "the margin: launch gaps or work the events do not bracket (docs/SEMANTICS.md, Timing)",
    "kernel_time_partial": "some timing rounds could not be attributed and were timed by their events",
    "kernelbench_host_bound": "the KernelBench-convention speedup (speedup_kernelbench) measured mostly the host's "
                              "launch path, which differs between processes: it is not comparable with a published "
                              "figure to better than a factor of a few (docs/SEMANTICS.md, Timing)",
    "sanitizer_incomplete": "--guards strict: a compute-sanitizer tool did not check the call (it ran past "
                            "--sanitize-timeout, the call failed under it, or the tool is not installed); the "
                            "message names which",
    "clocks_moved": "the GPU's SM clock moved, or a power or thermal slowdown began, during the measurement",
    "extension_build_failed": "an extension the candidate's source builds did not compile (the message names the "
                              "compiler's first error); where the candidate caught the error, the verdict is of "
                              "what it ran instead (often its PyTorch fallback)",
    "weak_task": "the task's check also passes a candidate that computes nothing (zeros, a constant, a mean "
                 "or the input): a correct verdict says little (kernelmill tasks audit)",
}
STATUS_COLOURS = {"ok": "#1a7f37", "incorrect": "#9a6700", "compile_error": "#cf222e", "runtime_error": "#8250df",
                  "timeout": "#0969da", "rejected": "#a40e26", "not run": "#6e7781"}

e = html.escape


def flag_meaning(flag: str) -> tuple[str, str]:
    """(kind, meaning) of a flag: a guard finding (with the status it sets and its
    catalogue item), a harness note, or a not-run reason."""
    from ..verify import FLAGS

    if flag in FLAGS:
        status, item, meaning = FLAGS[flag]
        return f"guard, item {item}: {status}", meaning
    if flag in NOT_RUN_FLAGS:
        return "not run", NOT_RUN_FLAGS[flag].removeprefix("not run: ")
    if flag in HARNESS_FLAGS:
        return "harness note", HARNESS_FLAGS[flag]
    return "other", "not in kernelmill's flag catalogue (another harness version?)"


def _status_of(v: Verdict) -> str:
    return "not run" if not_run_flag(v) else v.status


def _num(x: float | None, fmt: str) -> str:
    return "–" if x is None else format(x, fmt)


def _attr(x: Any) -> str:
    return e("" if x is None else str(x), quote=True)


class _Highlighter:
    def __init__(self) -> None:
        try:
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer

            self.formatter = HtmlFormatter(cssclass="hl", nowrap=False, linenos=False)
            self.lexer = PythonLexer()
        except ImportError:  # pragma: no cover - pygments comes with rich
            self.formatter = None

    def css(self) -> str:
        return self.formatter.get_style_defs(".hl") if self.formatter else ""

    def __call__(self, code: str) -> str:
        if self.formatter is None:
            return f'<pre class="hl">{e(code)}</pre>'
        from pygments import highlight

        return highlight(code, self.lexer, self.formatter)


def _metrics_tables(b: Breakdown) -> str:
    cols = columns(b)
    out = []
    for grouping, groups in b.groups.items():
        if not groups:
            continue
        head = "".join(f"<th>{e(h)}</th>" for _, h in cols)
        rows = []
        for g, m in groups.items():
            cells = []
            for key, _ in cols:
                value, ci = cell(m, key)
                point, interval = cell_text(key, value, ci)
                ci_html = f' <span class="ci">{e(interval)}</span>' if interval else ""
                lo_hi = f' data-lo="{ci[0]:.6g}" data-hi="{ci[1]:.6g}"' if ci else ""
                cells.append(f'<td data-metric="{_attr(key)}" data-value="{"" if value is None else f"{value:.6g}"}"'
                             f'{lo_hi}>{e(point)}{ci_html}</td>')
            cls = ' class="overall"' if g == "all" else ""
            rows.append(f'<tr data-group="{_attr(g)}"{cls}><th scope="row">{e(g)}</th>{"".join(cells)}</tr>')
        out.append(f'<h3>by {e(grouping)}</h3><div class="scroll"><table class="metrics" data-grouping="{grouping}">'
                   f'<thead><tr><th>{e(grouping)}</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')
    m = b.overall
    notes = [f"Cells: point figure, then its 95% interval: bootstrap over tasks ({m.ci_resamples} resamples, seed "
             f"{m.ci_seed}) with each speedup redrawn within its own speedup_ci ({m.samples_with_speedup_ci} of "
             f"{m.timed_samples} timed samples have one).",
             "Exec: per task, the share of its samples that are correct, averaged over tasks. fast_p: the same for "
             "correct and faster than p times PyTorch eager. G_speedup: geometric mean over correct, timed samples. "
             "Exec@k, fast_1@k: unbiased pass@k over the tasks with at least k samples."]
    correct = m.statuses.get("ok", 0)
    if correct > m.timed_samples:
        notes.append(f"{correct - m.timed_samples} correct samples have no measured speedup (e.g. Triton in its CPU "
                     "interpreter, flag timing_skipped): they count toward Exec but never as fast, so fast_0 can sit "
                     "below Exec.")
    undecided = {p: n for p, n in m.fast_undecided.items() if n}
    if undecided:
        notes.append("Undecided (correct samples whose speedup interval holds p): "
                     + ", ".join(f"fast_{p}: {n}" for p, n in undecided.items()) + ".")
    return "".join(out) + "".join(f'<p class="note">{e(n)}</p>' for n in notes)


def _status_section(inputs: ReportInputs, b: Breakdown) -> str:
    counts = Counter(_status_of(v) for v in inputs.verdicts)
    total = len(inputs.verdicts) or 1
    rows = []
    for s in [*STATUSES, "not run"]:
        n = counts.get(s, 0)
        if s == "not run" and not n:
            continue
        meaning = STATUS_MEANINGS.get(s, "never ran: not counted in any metric (see the flags)")
        rows.append(f'<tr data-status="{_attr(s)}"><td><span class="badge s-{s.replace(" ", "_")}">{e(s)}</span></td>'
                    f'<td class="num" data-count="{n}">{n}</td><td class="num">{100 * n / total:.1f}%</td>'
                    f"<td>{e(meaning)}</td></tr>")
    flag_counts = Counter(f for v in inputs.verdicts for f in v.flags)
    frows = []
    for flag, n in sorted(flag_counts.items(), key=lambda kv: (-kv[1], kv[0])):
        kind, meaning = flag_meaning(flag)
        frows.append(f'<tr data-flag="{_attr(flag)}"><td><code>{e(flag)}</code></td><td class="num" data-count="{n}">{n}'
                     f"</td><td>{e(kind)}</td><td>{e(meaning)}</td></tr>")
    from ..verify import FLAGS

    catalogue = "".join(f"<tr><td><code>{e(f)}</code></td><td class=\"num\">{flag_counts.get(f, 0)}</td>"
                        f"<td>{item}</td><td>{e(st)}</td><td>{e(meaning)}</td></tr>"
                        for f, (st, item, meaning) in FLAGS.items())
    flags_html = (f'<table id="flag-counts"><thead><tr><th>flag</th><th>samples</th><th>kind</th><th>what it means</th>'
                  f'</tr></thead><tbody>{"".join(frows)}</tbody></table>' if frows
                  else '<p class="note">No verdict carries a flag.</p>')
    return (f'<div class="two"><div><h3>statuses</h3><table id="status-counts"><thead><tr><th>status</th>'
            f'<th>samples</th><th>share</th><th>meaning</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            f"<div><h3>flags</h3>{flags_html}"
            f'<details class="catalogue"><summary>the guards\' whole catalogue ({len(FLAGS)} flags, '
            f'docs/guards.md)</summary><table><thead><tr><th>flag</th><th>samples</th><th>item</th><th>status</th>'
            f'<th>what it catches</th></tr></thead><tbody>{catalogue}</tbody></table></details></div></div>')


def _sample_card(v: Verdict, s: Sample | None, inputs: ReportInputs, hl: _Highlighter, with_code: bool) -> str:
    status = _status_of(v)
    lang = inputs.language(v)
    speed = speedup_text(v.speedup) if v.speedup is not None or not v.correct else "not timed"
    ci = f" [{v.speedup_ci[0]:.2f}–{v.speedup_ci[1]:.2f}]" if v.speedup_ci and len(v.speedup_ci) == 2 else ""
    facts = [f'<span class="fact" data-fact="speedup">speedup <b>{e(speed)}</b>{e(ci)}</span>',
             f'<span class="fact" data-fact="runtime">kernel {_num(v.runtime_ms, ".4g")} ms · '
             f'reference {_num(v.ref_runtime_ms, ".4g")} ms</span>']
    if v.speedup_compiled is not None:  # verify --compile-baseline
        facts.append(f'<span class="fact" data-fact="speedup_compiled">vs torch.compile <b>'
                     f'{e(speedup_text(v.speedup_compiled))}</b> · compiled reference '
                     f'{_num(v.ref_compiled_runtime_ms, ".4g")} ms</span>')
    if v.max_abs_err is not None or v.max_rel_err is not None:
        facts.append(f'<span class="fact" data-fact="errors">max abs err {_num(v.max_abs_err, ".3g")} · '
                     f'max rel err {_num(v.max_rel_err, ".3g")}</span>')
    if s is not None and s.reasoning is not None:
        tokens = f", {s.reasoning_tokens} tokens" if s.reasoning_tokens is not None else ""
        facts.append(f'<span class="fact" data-fact="reasoning">reasoning {len(s.reasoning):,} chars{e(tokens)}</span>')
    elif s is not None:
        facts.append('<span class="fact" data-fact="reasoning">no reasoning</span>')
    if v.cached:
        facts.append('<span class="fact">from the store</span>')
    flags = "".join(f'<li><code>{e(f)}</code> <span class="dim">{e(flag_meaning(f)[0])}</span>: {e(flag_meaning(f)[1])}'
                    f"</li>" for f in v.flags)
    parts = [f'<div class="sample" id="sample-{_attr(v.sample_id)}" data-sample-id="{_attr(v.sample_id)}" '
             f'data-status="{_attr(status)}" data-language="{_attr(lang)}">',
             f'<div class="sample-head"><span class="badge s-{status.replace(" ", "_")}">{e(status)}</span> '
             f'<span class="lang">{e(lang)}</span> <code class="sid">{e(v.sample_id)}</code></div>',
             f'<div class="facts">{" ".join(facts)}</div>']
    if flags:
        parts.append(f'<ul class="flags">{flags}</ul>')
    ran = provenance_lines(v)
    if ran:
        parts.append(f'<details class="ran"><summary>what ran (GPU)</summary><pre>{e(chr(10).join(ran))}</pre></details>')
    if v.message:
        label = {"compile_error": "compiler / import error", "incorrect": "mismatch",
                 "runtime_error": "error while running"}.get(v.status, "message")
        parts.append(f'<div class="msg"><div class="dim">{e(label)}</div><pre>{e(v.message)}</pre></div>')
    if s is not None and with_code and s.code:
        n = s.code.count("\n") + 1
        parts.append(f"<details class=\"code\"><summary>code ({n} lines)</summary>{hl(s.code)}</details>")
    parts.append("</div>")
    return "".join(parts)


def _task_rows(inputs: ReportInputs, hl: _Highlighter, with_code: bool) -> tuple[str, list[str], int]:
    by_task: dict[str, list[Verdict]] = defaultdict(list)
    for v in inputs.verdicts:
        by_task[v.task_id].append(v)
    order = {s: i for i, s in enumerate(["ok", "incorrect", "rejected", "runtime_error", "timeout", "compile_error",
                                         "not run"])}
    out = []
    languages = set()
    for task_id in sorted(by_task):
        vs = sorted(by_task[task_id], key=lambda v: (order.get(_status_of(v), 9), -(v.speedup or 0), v.sample_id))
        task = inputs.tasks.get(task_id)
        level = vs[0].level if vs[0].level is not None else (task.level if task else None)
        op_type = task.op_type if task and task.op_type else ""
        ran = [v for v in vs if not not_run_flag(v)]
        correct = sum(v.correct for v in ran)
        speeds = [v.speedup for v in ran if v.correct and v.speedup]
        best = max(speeds) if speeds else None
        statuses = Counter(_status_of(v) for v in vs)
        langs = sorted({inputs.language(v) for v in vs})
        languages.update(langs)
        badges = " ".join(f'<span class="badge s-{s.replace(" ", "_")}" title="{_attr(s)}">{e(s)} {n}</span>'
                          for s, n in sorted(statuses.items(), key=lambda kv: order.get(kv[0], 9)))
        search = " ".join([task_id, inputs.task_name(task_id), op_type, f"level{level}" if level else "",
                           *langs, *statuses, *(v.sample_id for v in vs), *(f for v in vs for f in v.flags)]).lower()
        share = correct / len(ran) if ran else None
        cards = "".join(_sample_card(v, inputs.samples.get(v.sample_id), inputs, hl, with_code) for v in vs)
        out.append(
            f'<tbody class="task" data-task-id="{_attr(task_id)}" data-name="{_attr(inputs.task_name(task_id))}" '
            f'data-level="{_attr(level)}" data-op_type="{_attr(op_type)}" data-samples="{len(vs)}" '
            f'data-correct="{"" if share is None else f"{share:.6g}"}" data-best="{"" if best is None else f"{best:.6g}"}" '
            f'data-statuses="{_attr(" ".join(sorted(s.replace(" ", "_") for s in statuses)))}" '
            f'data-languages="{_attr(" ".join(langs))}" data-search="{_attr(search)}">'
            f'<tr class="task-row" tabindex="0" aria-expanded="false"><td><span class="caret">▸</span> '
            f'<code>{e(task_id)}</code></td><td>{e(inputs.task_name(task_id))}</td><td class="num">{e(str(level or ""))}</td>'
            f'<td>{e(op_type)}</td><td>{e(", ".join(langs))}</td><td class="num">{len(vs)}</td>'
            f'<td class="num">{correct}/{len(ran)}</td><td class="num">{e(speedup_text(best))}</td><td>{badges}</td></tr>'
            f'<tr class="samples-row" hidden><td colspan="9">{cards}</td></tr></tbody>')
    return "".join(out), sorted(languages), len(by_task)


CSS = """
:root { --fg:#1f2328; --dim:#656d76; --line:#d0d7de; --bg2:#f6f8fa; --accent:#0969da; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: var(--fg);
       margin: 0; padding: 0 24px 48px; max-width: 1500px; }
header { padding: 18px 0 8px; border-bottom: 1px solid var(--line); }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 18px; margin: 28px 0 8px; } h3 { font-size: 15px; margin: 16px 0 6px; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
.dim, .note { color: var(--dim); } .note { font-size: 12.5px; margin: 6px 0; }
.warn { background: #fff8c5; border: 1px solid #d4a72c66; padding: 6px 10px; border-radius: 6px; margin: 6px 0; }
table { border-collapse: collapse; margin: 4px 0 10px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 9px; text-align: left; vertical-align: top; }
thead th { background: var(--bg2); font-weight: 600; white-space: nowrap; }
table.metrics td { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.metrics tr.overall { font-weight: 600; background: #f6f8fa; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.ci { color: var(--dim); font-size: 11.5px; font-weight: 400; }
.scroll { overflow-x: auto; }
.two { display: flex; flex-wrap: wrap; gap: 28px; } .two > div { flex: 1 1 480px; min-width: 0; }
.figures { display: flex; flex-wrap: wrap; gap: 20px; } .figures > div { flex: 1 1 460px; }
svg.figure { max-width: 100%; height: auto; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; color: #fff; white-space: nowrap; }
""" + "".join(f".s-{s.replace(' ', '_')} {{ background: {c}; }}\n" for s, c in STATUS_COLOURS.items()) + """
.controls { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; margin: 8px 0; position: sticky; top: 0;
            background: #fff; padding: 6px 0; z-index: 2; }
.controls input[type=search] { width: 340px; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px; }
.controls select, .controls button { padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg2); }
#tasks { width: 100%; }
#tasks thead th[data-sort] { cursor: pointer; user-select: none; }
#tasks thead th[data-sort]::after { content: " ⇅"; color: #afb8c1; }
#tasks thead th[aria-sort=ascending]::after { content: " ▲"; color: var(--fg); }
#tasks thead th[aria-sort=descending]::after { content: " ▼"; color: var(--fg); }
tr.task-row { cursor: pointer; } tr.task-row:hover { background: #f3f6fa; }
tr.task-row[aria-expanded=true] .caret { display: inline-block; transform: rotate(90deg); }
tr.samples-row > td { background: #fbfcfd; padding: 8px 12px 12px 28px; }
.sample { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 8px 0; background: #fff; }
.sample-head { margin-bottom: 4px; } .lang { font-weight: 600; } code.sid { color: var(--dim); font-size: 12px; }
.facts { display: flex; flex-wrap: wrap; gap: 6px 18px; font-size: 13px; }
ul.flags { margin: 6px 0; padding-left: 20px; font-size: 13px; }
.msg pre, .hl pre { max-height: 420px; overflow: auto; background: var(--bg2); padding: 8px; border-radius: 6px;
                    font-size: 12px; line-height: 1.4; white-space: pre; margin: 4px 0; }
.msg pre { white-space: pre-wrap; max-height: 260px; }
details.code summary, details.catalogue summary { cursor: pointer; color: var(--accent); margin-top: 4px; }
footer { margin-top: 30px; color: var(--dim); font-size: 12px; }
"""

SCRIPT = """
(function () {
  const table = document.getElementById('tasks');
  const bodies = Array.from(table.tBodies);
  const search = document.getElementById('search');
  const statusSel = document.getElementById('status-filter');
  const langSel = document.getElementById('language-filter');
  const shown = document.getElementById('shown-count');
  function apply() {
    const q = search.value.trim().toLowerCase();
    const st = statusSel.value, lang = langSel.value;
    let n = 0;
    for (const tb of bodies) {
      let any = false;
      for (const s of tb.querySelectorAll('.sample')) {
        const ok = (!st || s.dataset.status.replace(' ', '_') === st) && (!lang || s.dataset.language === lang);
        s.hidden = !ok; any = any || ok;
      }
      const ok = any && (!q || q.split(/\\s+/).every(w => tb.dataset.search.includes(w)));
      tb.hidden = !ok; if (ok) n++;
    }
    shown.textContent = n + ' of ' + bodies.length + ' tasks';
  }
  function toggle(tb, open) {
    const row = tb.querySelector('tr.task-row'), detail = tb.querySelector('tr.samples-row');
    open = open === undefined ? detail.hidden : open;
    detail.hidden = !open; row.setAttribute('aria-expanded', String(open));
  }
  for (const tb of bodies) {
    const row = tb.querySelector('tr.task-row');
    row.addEventListener('click', () => toggle(tb));
    row.addEventListener('keydown', ev => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); toggle(tb); } });
  }
  for (const th of table.tHead.querySelectorAll('th[data-sort]')) {
    th.addEventListener('click', () => {
      const key = th.dataset.sort, num = th.dataset.type === 'num';
      const dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
      for (const o of table.tHead.querySelectorAll('th[data-sort]')) o.removeAttribute('aria-sort');
      th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
      const val = tb => tb.dataset[key] || '';
      bodies.sort((a, b) => {
        const x = val(a), y = val(b);
        if (x === '' || y === '') return (x === '') - (y === '');  // missing values last either way
        const c = num ? parseFloat(x) - parseFloat(y) : x.localeCompare(y, undefined, {numeric: true});
        return dir * c || a.dataset.taskId.localeCompare(b.dataset.taskId);
      });
      for (const tb of bodies) table.appendChild(tb);
    });
  }
  document.getElementById('expand-all').addEventListener('click', () => bodies.forEach(tb => tb.hidden || toggle(tb, true)));
  document.getElementById('collapse-all').addEventListener('click', () => bodies.forEach(tb => toggle(tb, false)));
  search.addEventListener('input', apply); statusSel.addEventListener('change', apply); langSel.addEventListener('change', apply);
  const target = location.hash.startsWith('#sample-') && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (target) { toggle(target.closest('tbody'), true); target.scrollIntoView(); }
  apply();
})();
"""


def render_html(inputs: ReportInputs, b: Breakdown, *, with_code: bool = True, title: str = "kernelmill report",
                seed: int = 0) -> str:
    hl = _Highlighter()
    m = b.overall
    level_sets = {name: [v for v in inputs.verdicts if (f"level{v.level}" if v.level is not None else "unlabelled") == name]
                  for name in b.groups["level"] if name != "all"}
    named = {**(level_sets if len(level_sets) > 1 else {}), "all": inputs.verdicts}
    curve = fast_p_curve(named, seed=seed)
    hist = speedup_histogram(inputs.verdicts, inputs.language)
    no_fig = '<p class="note">No correct sample has a measured speedup, so there is nothing to draw.</p>'
    rows, languages, n_tasks = _task_rows(inputs, hl, with_code)
    devices = sorted({v.device for v in inputs.verdicts if v.device})
    versions = sorted({v.harness_version for v in inputs.verdicts if v.harness_version})
    sources = "".join(f"<div><span class=\"dim\">{e(k)}:</span> <code>{e(v)}</code></div>"
                      for k, v in inputs.sources.items())
    warnings = list(inputs.warnings)
    if not inputs.samples:
        warnings.append("no samples file given (--samples): languages, code and reasoning are not shown")
    if m.not_run:
        from .table import not_run_note

        warnings.append(not_run_note(m, max_tasks=10))
    warn_html = "".join(f'<div class="warn">{e(w)}</div>' for w in warnings)
    headline = (f"{m.samples} samples of {m.tasks} tasks · Exec {100 * m.exec:.1f}% · "
                + (f"fast_1 {100 * m.fast['1']:.1f}% · " if "1" in m.fast else "")
                + f"G_speedup {speedup_text(m.geomean_speedup)}")
    status_opts = "".join(f'<option value="{s.replace(" ", "_")}">{e(s)}</option>' for s in [*STATUSES, "not run"])
    lang_opts = "".join(f'<option value="{_attr(lang)}">{e(lang)}</option>' for lang in languages)
    heads = [("taskId", "str", "task"), ("name", "str", "name"), ("level", "num", "level"), ("op_type", "str", "op_type"),
             ("languages", "str", "languages"), ("samples", "num", "samples"), ("correct", "num", "correct"),
             ("best", "num", "best speedup"), (None, None, "statuses")]
    thead = "".join(f'<th data-sort="{k}" data-type="{t}">{e(h)}</th>' if k else f"<th>{e(h)}</th>" for k, t, h in heads)
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    data = {"tasks": m.tasks, "samples": m.samples, "exec": m.exec, "fast": m.fast,
            "geomean_speedup": m.geomean_speedup, "statuses": m.statuses, "not_run": m.not_run}
    data_json = json.dumps(data).replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}</title>
<style>{CSS}{hl.css()}</style></head>
<body>
<header><h1>{e(title)}</h1>
<div id="headline"><b>{e(headline)}</b></div>
{sources}
<div class="dim">device: {e(", ".join(devices) or "–")} · harness {e(", ".join(versions) or "–")} · generated {generated}</div>
{warn_html}
<nav><a href="#metrics">metrics</a><a href="#figures">figures</a><a href="#statuses">statuses &amp; flags</a><a href="#task-list">tasks</a></nav>
</header>
<section id="metrics"><h2>Metrics</h2>{_metrics_tables(b)}</section>
<section id="figures"><h2>Figures</h2><div class="figures">
<div id="fig-fast-p">{curve or no_fig}</div><div id="fig-speedups">{hist or no_fig}</div></div></section>
<section id="statuses"><h2>Statuses and flags</h2>{_status_section(inputs, b)}</section>
<section id="task-list"><h2>Tasks</h2>
<div class="controls"><input type="search" id="search" placeholder="search tasks, samples, flags, statuses…" aria-label="search">
<select id="status-filter" aria-label="status"><option value="">all statuses</option>{status_opts}</select>
<select id="language-filter" aria-label="language"><option value="">all languages</option>{lang_opts}</select>
<button type="button" id="expand-all">expand all</button><button type="button" id="collapse-all">collapse all</button>
<span id="shown-count" class="dim">{n_tasks} of {n_tasks} tasks</span></div>
<p class="note">Click a task to see its samples; click a column header to sort.</p>
<table id="tasks"><thead><tr>{thead}</tr></thead>{rows}</table></section>
<footer>kernelmill report · metrics as in <code>kernelmill metrics</code> (src/kernelmill/report/metrics.py) ·
flags from src/kernelmill/verify/guards/flags.py</footer>
<script type="application/json" id="report-data">{data_json}</script>
<script>{SCRIPT}</script>
</body></html>
"""
