"""`python -m detfeed ...`: the `detfeed` command (see detfeed._cli)."""
from ._cli import main

main()
