"""Processes started ahead of their jobs: spare workers (`standby`), resident supervisors
that each take one job (`resident`, `resident_pool`), and the zygote they are forked from
with torch imported (`zygote`)."""
