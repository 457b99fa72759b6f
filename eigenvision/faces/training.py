"""The background photos a :class:`~eigenvision.FaceFinder` mines its non-faces from.

:meth:`~eigenvision.FaceFinder.fit` reduces each background
(:func:`training_background`) and searches it once
(:func:`background_candidates`); both bootstrap rounds of
:func:`~eigenvision.faces.decision.mine_nonfaces` cut their windows from
those candidates (Sung & Poggio 1998).
"""

from __future__ import annotations

import numpy as np

from .._base import progress as show_progress
from ..search import box_iou
from .candidates import reduced
from .geometry import face_box

__all__ = ["TRAINING_SIDE", "training_background", "background_candidates"]

#: Backgrounds are searched with their longer side at most this (or the finder's ``max_side``).
TRAINING_SIDE = 480


def training_background(item, max_side):
    """A background as ``(reduced grey image, boxes to avoid in its pixels)``.

    Parameters
    ----------
    item : (H, W) ndarray or ((H, W) ndarray, boxes)
        A photo, and the ``(x, y, w, h)`` boxes of its faces.
    max_side : int
        The finder's; the photo is reduced to at most ``min(max_side, TRAINING_SIDE)``.

    Returns
    -------
    image : (h, w) ndarray
    boxes : list of (x, y, w, h)
    """
    image, avoid = (item, ()) if isinstance(item, np.ndarray) else item
    image, scale = reduced(image, min(max_side, TRAINING_SIDE))
    return image, [_scaled_box(box, scale) for box in avoid]


def background_candidates(search, backgrounds, *, progress=False):
    """Stage 1's candidates on each background, away from its faces (both mining rounds use
    them: the search, not the cut, is what takes time).

    Parameters
    ----------
    search : CandidateSearch
        Fitted.
    backgrounds : sequence of ((h, w) ndarray, boxes)
        As :func:`training_background` gives them.
    progress : bool, default False

    Returns
    -------
    list of lists of (left_eye, right_eye, dffs)
    """
    pools = []
    searched = show_progress(backgrounds, desc="searching the backgrounds", enabled=progress)
    for image, avoid in searched:
        pools.append(
            [
                c
                for c in search.candidates(image)
                if not len(avoid) or box_iou(face_box(c[0], c[1]), avoid).max() == 0
            ]
        )
    return pools


def _scaled_box(box, scale):
    """An ``(x, y, w, h)`` box of the input in the reduced image (``scale`` = (fy, fx))."""
    x, y, w, h = box
    return ((x + 0.5) * scale[1] - 0.5, (y + 0.5) * scale[0] - 0.5, w * scale[1], h * scale[0])
