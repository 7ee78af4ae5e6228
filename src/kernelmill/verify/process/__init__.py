"""What runs inside the worker processes, and how they talk.

    runner (harness) ── sandbox ──► worker build | worker run (guards off)
                                    worker guarded ──► supervisor ◄─pipes─► candidate

Workers started ahead of their jobs (spares, residents, the zygote) are in `verify/pools/`.

`job` holds the typed records the runner hands down; `loading` the shared
code-loading helpers. What a run's facts mean is judged beside this package,
in `verify/guards/` (flags, judge, source, speed, trace, cudart); figures in `verify/measure/`.
"""
