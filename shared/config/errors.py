"""The one exception type of the config package."""
from __future__ import annotations


class ConfigError(ValueError):
    """A configuration problem found at start. The message names each offending field path (e.g.
    "search.simulations"), the value and where it came from, and how to set it correctly.

    `problems` holds one line per problem.
    """

    def __init__(self, problems: str | list[str]):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        lines = self.problems
        super().__init__(lines[0] if len(lines) == 1 else "invalid configuration:\n  " + "\n  ".join(lines))
