"""Audit what others publish: a third-party kernel set with its claimed speedups,
verified row by row (guards on, provenance), and a report of which claims hold
(`kernelmill audit`); stored verdicts judged again when the harness changes
(`kernelmill regrade`).

- `sources.py`: the input formats (a table of task, candidate and claim; a folder in
  KernelBench's run layout), each problem named with its file and line;
- `classify.py`: one row's outcome against its claim, and the summary;
- `report.py`: JSON, CSV, Markdown and one self-contained HTML page with the plots;
- `regrade.py`: which stored verdicts the current harness would judge otherwise, and why.
"""
