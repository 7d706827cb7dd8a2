"""Typed errors of the search package."""
from __future__ import annotations


class SearchError(ValueError):
    """Bad input to the search (wrong shapes, terminal roots, a bad configuration); the message says how to fix it."""


class EvaluatorError(SearchError):
    """The evaluator returned arrays of the wrong shape or with non-finite values."""


class ArenaError(SearchError):
    """Bad match input (odd games per opening, an illegal move from a player, unplayable openings)."""
