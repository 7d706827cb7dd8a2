"""Helpers that two kernel modules each hold a copy of (a kernel calls only helpers of its own module, so that
numba's on-disk cache, which watches only the kernel's own file, never runs a stale helper: shared.search.jit)
stay the same code in both modules."""
from __future__ import annotations

import ast
import inspect

import pytest

from shared.search import puct, tree

#: helpers kept in both shared.search.tree (expansion) and shared.search.puct (selection)
COPIED_HELPERS = ["rank_top_actions", "prefetch_row"]


def _code_without_docstring(function) -> str:
    """The helper's definition as an AST dump, its docstring left out: the code both copies must share."""
    definition = ast.parse(inspect.getsource(function.py_func)).body[0]
    body = definition.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        definition.body = body[1:]
    return ast.dump(definition)


@pytest.mark.parametrize("name", COPIED_HELPERS)
def test_the_copies_of_a_kernel_helper_are_the_same_code(name: str) -> None:
    assert _code_without_docstring(getattr(tree, name)) == _code_without_docstring(getattr(puct, name)), (
        f"{name} differs between shared/search/tree.py and shared/search/puct.py; change both copies alike")


def test_the_comparison_sees_a_difference() -> None:
    assert _code_without_docstring(tree.rank_top_actions) != _code_without_docstring(tree.prefetch_row)
