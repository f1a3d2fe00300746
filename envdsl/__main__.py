"""`python -m envdsl` runs the command line, like the `envdsl` console script."""

from envdsl.cli import main

main(prog_name="envdsl")
