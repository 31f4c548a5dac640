"""The exception tree drawn in harnez/errors.py is the tree in the code."""

from __future__ import annotations

import inspect
import re

from harnez import errors
from harnez.agent import approvals


def test_the_drawn_tree_names_every_error_once_under_its_parent() -> None:
    classes = {
        name: cls
        for name, cls in vars(errors).items()
        if inspect.isclass(cls) and issubclass(cls, errors.HarnezError) and cls is not errors.HarnezError
    }
    drawn = re.findall(r"^( *(?:│ *)*)[├└]── (\w+)", errors.__doc__ or "", re.M)
    assert sorted(name for _, name in drawn) == sorted(classes)
    depth = {name: len(indent) for indent, name in drawn}
    for name, cls in classes.items():
        parent = cls.__mro__[1].__name__
        assert parent == "HarnezError" or depth[parent] < depth[name], f"{name} is drawn outside {parent}"


def test_approval_error_lives_in_the_tree_and_where_it_was() -> None:
    assert approvals.ApprovalError is errors.ApprovalError
    assert issubclass(errors.ApprovalError, errors.HarnezError)
