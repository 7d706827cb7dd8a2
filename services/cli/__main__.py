"""`python -m services.cli` runs the zeroforge command."""
from services.cli import main

main(prog_name="zeroforge")
