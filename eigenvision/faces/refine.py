"""Stage 3 of the photo pipeline: candidates moved to the decision's best window nearby.

The face/non-face decision is sharp: a face's stage-1 window, a little off
in place or scale, scores as clutter. Each candidate is moved, coarse to
fine, to the window around it the decision likes best; :func:`distinct`
then keeps the separate faces.
"""

from __future__ import annotations

import numpy as np

from ..search import Detection, kept_indices
from .geometry import face_box

__all__ = ["refine", "distinct", "REFINEMENT"]

#: The refinement's rounds: (shift in inter-ocular distances, log2 scale step).
REFINEMENT = ((0.15, 0.25), (0.075, 0.125), (0.0375, 0.0625))


def refine(score_windows, image, candidates, scores, *, rounds=REFINEMENT):
    """Candidates moved to the best window of the decision around them, coarse to fine.

    Each round tries shifts of ``(-d, 0, d)`` inter-ocular distances in x
    and y and scales ``2 ** (-e, 0, e)`` about the eyes' midpoint (27
    windows) and keeps the best, with ``(d, e)`` from ``rounds``.

    Parameters
    ----------
    score_windows : callable
        ``score_windows(image, candidates) -> (n,) ndarray``: the decision's
        log-odds of the windows on the candidates' eyes.
    image : (H, W) ndarray or HalfOctaves
        The photo searched.
    candidates : list of (left_eye, right_eye, value)
    scores : (n,) array_like
        The candidates' own decision values (a move must beat them).
    rounds : sequence of (float, float), default :data:`REFINEMENT`

    Returns
    -------
    candidates : list of (left_eye, right_eye, value)
        Moved; ``value`` kept.
    scores : (n,) ndarray
        The decision's values where they are now.
    """
    if not candidates:
        return [], np.zeros(0)
    left = np.array([c[0] for c in candidates], dtype=float)
    right = np.array([c[1] for c in candidates], dtype=float)
    best = np.array(scores, dtype=float)
    for shift, scale in rounds:
        grid = np.array(
            [
                (dx, dy, s)
                for dx in (-shift, 0.0, shift)
                for dy in (-shift, 0.0, shift)
                for s in 2.0 ** np.array([-scale, 0.0, scale])
            ]
        )
        centre, half = (left + right) / 2, (right - left) / 2
        iod = 2 * np.hypot(*half.T)[:, None, None]
        moved = centre[:, None] + grid[None, :, :2] * iod  # (n, 27, 2)
        spread = half[:, None] * grid[None, :, 2:]
        trial_left = (moved - spread).reshape(-1, 2)
        trial_right = (moved + spread).reshape(-1, 2)
        trials = [(a, b, 0.0) for a, b in zip(trial_left, trial_right, strict=True)]
        values = score_windows(image, trials).reshape(len(left), -1)
        pick = values.argmax(axis=1)
        better = values[np.arange(len(left)), pick] > best
        rows = np.flatnonzero(better) * len(grid) + pick[better]
        left[better], right[better] = trial_left[rows], trial_right[rows]
        best = np.maximum(best, values.max(axis=1))
    return [(a, b, c[2]) for a, b, c in zip(left, right, candidates, strict=True)], best


def distinct(candidates, scores, order, max_faces, *, parts_only=False):
    """Positions in ``order`` of the candidates that are separate faces, surest first.

    A box centred inside a surer one is a part of that face (an eye region, a cheek).

    Parameters
    ----------
    candidates : list of (left_eye, right_eye, value)
    scores : (n,) ndarray
        Higher: surer.
    order : sequence of int
        Indices into ``candidates``, surest first.
    max_faces : int
    parts_only : bool, default False
        Drop only the boxes no larger than the surer one they are centred in:
        a larger box stays, for the checks to choose between them (before
        them, the decision often scores a close face's eyes and nostrils, a
        small face in its middle, above the face itself).

    Returns
    -------
    list of int
        Positions in ``order``.
    """
    boxes = [Detection(*face_box(*candidates[i][:2]), 1.0, -scores[i]) for i in order]
    return kept_indices(
        boxes, max_count=max_faces, overlap=0.3, separation=0.5, parts_only=parts_only
    )
