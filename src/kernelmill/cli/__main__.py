"""`python -m kernelmill.cli ...` (e.g. under `accelerate launch -m kernelmill.cli train sft`)."""

from . import main

main()
