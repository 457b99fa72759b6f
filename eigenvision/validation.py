"""Consistency checks of a fitted model's parameters and state, for models read from files.

A model file is untrusted input: its arrays and parameters may disagree with
each other (a 40000 x 40000 working shape beside a 10304-pixel eigenspace, a
negative block scale, NaN in a gallery). :func:`check_state` refuses such a
model when it is loaded, so that nothing downstream allocates, divides or
answers on the strength of it. Each model checks its own members
(``_params``, ``_state`` and its ``_check_relations``); this is the entry.
"""

from __future__ import annotations

from ._spec import LIMITS, check_model

__all__ = ["check_state", "LIMITS"]


def check_state(model) -> None:
    """Raise ``ValueError`` naming the first inconsistency of a fitted model.

    :func:`~eigenvision._spec.check_model`: its declarations, then the relations each model
    checks itself, recursively into the models it holds.

    Parameters
    ----------
    model : fitted estimator

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> from eigenvision import Eigenspace
    >>> space = Eigenspace(1).fit(np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]]))
    >>> check_state(space)
    >>> space.mean_ = np.array([np.nan, 0.0])
    >>> check_state(space)
    Traceback (most recent call last):
    ...
    ValueError: Eigenspace.mean_ holds NaN or infinite values
    """
    check_model(model)
