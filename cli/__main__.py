"""`python -m cli` runs the zeroforge command."""
from cli import main

main(prog_name="zeroforge")
