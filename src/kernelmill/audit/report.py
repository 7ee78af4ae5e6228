"""The audit's report: `audit.json` (rows and summary), `audit.csv` (a row per audited
kernel), `audit.md` (the summary a person reads first) and `audit.html` (one
self-contained page: the summary, claimed against measured on log axes by level and by
outcome, the kernels per flag, and the table of rows with their evidence, sortable and
searchable)."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

from ..report.figures import pyplot, svg_of
from .classify import OUTCOMES

CSV_COLUMNS = ["row_id", "level", "language", "claimed_speedup", "claimed_hardware", "speedup", "speedup_lo",
               "speedup_hi", "awarded", "speedup_kernelbench", "status", "outcome", "flags", "exploit_classes",
               "kernels", "message", "where"]
COLOURS = {"holds": "#2b8a3e", "beats_claim": "#37b24d", "slower": "#f08c00", "unclaimed": "#868e96",
           "wrong": "#c92a2a", "broken": "#495057", "fallback": "#1971c2", "precision": "#7048e8",
           "exploit": "#e8590c"}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "-" if x is None else format(x, fmt)


def claims_figure(rows: list[dict], by: str) -> str | None:
    """Claimed (x) against measured (y) speedup on log axes, coloured by `by` (level or
    outcome); the diagonal is a claim that holds exactly. Measured figures only (ok rows,
    and policy rejections timed but not awarded, drawn hollow)."""
    pts = [r for r in rows if r.get("claimed_speedup") and r.get("speedup")]
    if not pts:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    groups = sorted({str(r.get(by)) for r in pts})
    cmap = plt.get_cmap("tab10")
    for i, g in enumerate(groups):
        sel = [r for r in pts if str(r.get(by)) == g]
        colour = COLOURS.get(g, cmap(i % 10))
        for awarded in (True, False):
            part = [r for r in sel if bool(r.get("awarded")) == awarded]
            if part:
                ax.scatter([r["claimed_speedup"] for r in part], [r["speedup"] for r in part], s=22,
                           label=(f"{by} {g}" if by == "level" else g) + ("" if awarded else " (not awarded)"),
                           facecolors=colour if awarded else "none", edgecolors=colour)
    lo = min(min(r["claimed_speedup"], r["speedup"]) for r in pts) / 1.5
    hi = max(max(r["claimed_speedup"], r["speedup"]) for r in pts) * 1.5
    ax.plot([lo, hi], [lo, hi], color="#adb5bd", lw=1, ls="--", label="measured = claimed")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("claimed speedup")
    ax.set_ylabel("measured speedup")
    ax.legend(fontsize=7, frameon=False, loc="upper left")
    return svg_of(fig, plt, f"claims-by-{by}")


def flags_figure(rows: list[dict]) -> str | None:
    """How many audited kernels carry each flag, coloured by the outcome the flag led to."""
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        for f in r.get("flags") or []:
            counts.setdefault(f, {}).setdefault(r["outcome"], 0)
            counts[f][r["outcome"]] += 1
    if not counts:
        return None
    plt = pyplot()
    names = sorted(counts, key=lambda f: -sum(counts[f].values()))
    fig, ax = plt.subplots(figsize=(5.2, 0.35 * len(names) + 1.0))
    left = [0] * len(names)
    for o in OUTCOMES:
        vals = [counts[f].get(o, 0) for f in names]
        if any(vals):
            ax.barh(names, vals, left=left, color=COLOURS.get(o, "#adb5bd"), label=o)
            left = [a + b for a, b in zip(left, vals)]
    ax.invert_yaxis()
    ax.set_xlabel("kernels carrying the flag")
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    return svg_of(fig, plt, "flags")


def markdown(summary: dict, meta: dict) -> str:
    c, s = summary["counts"], summary["shares"]
    verified = (f"{summary['verified']} of {summary['rows']} kernels verified so far (the audit was cut short: "
                "run it again to finish; the shares below are of the verified ones)" if summary["verified"] < summary["rows"]
                else f"{summary['rows']} kernels")
    lines = [f"# Audit of {meta['source']}", "",
             f"{verified}, verified with kernelmill {meta['harness_version']} (guards {meta['guards']}) "
             f"on {meta['device']}; claims were made on {', '.join(meta['claimed_hardware']) or 'unnamed hardware'}.", "",
             "| outcome | kernels | share |", "| --- | --- | --- |"]
    lines += [f"| {o} | {c[o]} | {_pct(s.get(o))} |" for o in OUTCOMES if o != "not_verified" or c[o]]
    lines += ["", f"- claims that hold (inside the measured 95% interval, or beaten): {summary['claims_hold']} of "
              f"{summary['claims']} ({_pct(summary['claims_hold_share'])})",
              f"- measured / claimed speedup of the timed kernels with a claim: median "
              f"{_num(summary['median_measured_over_claimed'])}, geometric mean "
              f"{_num(summary['geomean_measured_over_claimed'])}"]
    if summary["exploits_by_class"]:
        lines.append("- exploits by class: " + ", ".join(f"{k} {v}" for k, v in summary["exploits_by_class"].items()))
    if summary["per_level"]:
        lines += ["", "| level | " + " | ".join(OUTCOMES) + " |", "| --- " * (len(OUTCOMES) + 1) + "|"]
        lines += [f"| {lv} | " + " | ".join(str(d[o]) for o in OUTCOMES) + " |" for lv, d in summary["per_level"].items()]
    return "\n".join(lines) + "\n"


def _row_html(r: dict) -> str:
    cells = [r["row_id"], r.get("level") or "", _num(r.get("claimed_speedup")),
             _num(r.get("speedup")) + ("" if r.get("awarded") or r.get("speedup") is None else " *"),
             (f"{_num(r.get('speedup_lo'))}-{_num(r.get('speedup_hi'))}" if r.get("speedup_lo") else "-"),
             r["status"], r["outcome"], ", ".join(r.get("flags") or []) or "-"]
    detail = html.escape((r.get("message") or "")[:600]) + (
        f"<br>ran: {html.escape(r['kernels'])}" if r.get("kernels") else "") + f"<br>from {html.escape(r['where'])}"
    tds = "".join(f"<td>{html.escape(str(x))}</td>" for x in cells)
    return (f'<tr class="row" data-outcome="{r["outcome"]}" style="border-left:4px solid '
            f'{COLOURS.get(r["outcome"], "#000")}">{tds}</tr><tr class="detail"><td colspan="8">{detail}</td></tr>')


PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title><style>
body{{font:14px system-ui,sans-serif;margin:2em;max-width:72em}} table{{border-collapse:collapse}}
td,th{{padding:3px 8px;border-bottom:1px solid #eee;text-align:left}} th{{cursor:pointer;background:#f8f9fa}}
tr.detail td{{font-size:12px;color:#495057}} .figs{{display:flex;gap:2em;flex-wrap:wrap}}
</style></head><body><h1>{title}</h1>{summary}<div class="figs">{figs}</div>
<h2>Kernels</h2><p><input id="q" placeholder="search" oninput="filt()"> * timed, not awarded (rejected by a policy)</p>
<table id="t"><thead><tr><th>id</th><th>level</th><th>claimed</th><th>measured</th><th>95% interval</th><th>status</th>
<th>outcome</th><th>flags</th></tr></thead><tbody>{rows}</tbody></table>
<script>
function filt(){{const q=document.getElementById('q').value.toLowerCase();
 document.querySelectorAll('#t tr.row').forEach(r=>{{const d=r.nextElementSibling;
  const on=(r.textContent+d.textContent).toLowerCase().includes(q);r.style.display=on?'':'none';d.style.display=on?'':'none';}});}}
document.querySelectorAll('#t th').forEach((th,i)=>th.onclick=()=>{{const b=document.querySelector('#t tbody');
 const pairs=[...b.querySelectorAll('tr.row')].map(r=>[r,r.nextElementSibling]);
 const key=r=>{{const t=r.children[i].textContent;const x=parseFloat(t);return isNaN(x)?t:x;}};
 const dir=th.dataset.dir=th.dataset.dir==='1'?'-1':'1';
 pairs.sort((a,b)=>{{const x=key(a[0]),y=key(b[0]);return (x>y?1:x<y?-1:0)*dir;}});
 pairs.forEach(([r,d])=>{{b.appendChild(r);b.appendChild(d);}});}});
</script></body></html>"""


def write_report(out_dir: Path, rows: list[dict], summary: dict, meta: dict) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {k: out_dir / f"audit.{k}" for k in ("json", "csv", "md", "html")}
    paths["json"].write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=1, default=str),
                             encoding="utf-8")
    with paths["csv"].open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, CSV_COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "flags": ";".join(r.get("flags") or []),
                        "exploit_classes": ";".join(r.get("exploit_classes") or [])})
    md = markdown(summary, meta)
    paths["md"].write_text(md, encoding="utf-8")
    figs = [f for f in (claims_figure(rows, "level"), claims_figure(rows, "outcome"), flags_figure(rows)) if f]
    body = "".join(f"<p>{html.escape(line)}</p>" if not line.startswith("|") else "" for line in md.splitlines()[2:])
    table = ("<table>" + "".join(f"<tr><td>{o}</td><td>{summary['counts'][o]}</td><td>{_pct(summary['shares'].get(o))}"
                                 "</td></tr>" for o in OUTCOMES if o != "not_verified" or summary["counts"][o])
             + "</table>")
    paths["html"].write_text(PAGE.format(title=html.escape(f"Audit of {meta['source']}"), summary=table + body,
                                         figs="".join(figs) or "<p>(no timed kernel with a claim: no plot)</p>",
                                         rows="".join(_row_html(r) for r in rows)), encoding="utf-8")
    return paths
