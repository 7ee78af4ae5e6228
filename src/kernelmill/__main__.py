"""`python -m kernelmill ...`: the `kernelmill` command."""

from .entry import main

main()
