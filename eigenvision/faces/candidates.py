"""Stage 1 of the photo pipeline: candidate faces, DFFS minima over a pyramid and rotations.

The distance from face space (DFFS, Moghaddam & Pentland 1997) of every
photometrically normalised window (:func:`~eigenvision.dffs_map`, by FFT),
over an image pyramid and a few in-plane rotations; the best local minima,
repeats suppressed, are the candidates
(:func:`~eigenvision.search.multiscale_minima`, the one search of the
package). On its own the face space ranks a wild face far down among them:
the face/non-face decision (:mod:`eigenvision.faces.decision`) sorts them out.
"""

from __future__ import annotations

import numpy as np

from ..detection import dffs_map
from ..normalize import to_gray
from ..search import _minima_table, kept_indices, pyramid_scales
from ..transform import resize, rotated
from .geometry import FACE_WINDOW, window_eyes

__all__ = ["find_candidates", "search_space", "reduced"]


def find_candidates(
    image,
    space,
    window,
    *,
    count,
    rotations=(0.0,),
    step=2**0.25,
    min_iod=None,
    tilted_scale=1.0,
    overlap=0.5,
    min_contrast=0.0,
):
    """The ``count`` best DFFS windows of every rotation, as eye pairs.

    Parameters
    ----------
    image : (H, W) ndarray
        A grey photo (already reduced: :func:`reduced`).
    space : Eigenspace
        A face space of standardised windows (:func:`search_space`).
    window : (h, w)
        Its window (:data:`~eigenvision.faces.geometry.FACE_WINDOW` geometry).
    count : int
        Candidates kept per rotation.
    rotations : sequence of float, default (0.0,)
        In-plane rotations searched, degrees.
    step : float, default 2**0.25
        Ratio between the pyramid's window sizes.
    min_iod : float, optional
        The smallest face searched, as its eye distance in ``image``'s pixels;
        default the window's own.
    tilted_scale : float, default 1.0
        The rotations other than 0 are searched from this many times the
        smallest upright face up.
    overlap : float, default 0.5
        A candidate may overlap a better one up to this intersection over union.
    min_contrast : float, default 0.0
        Windows whose grey levels vary less (standard deviation) are no candidates.

    Returns
    -------
    list of (left_eye, right_eye, dffs)
        Eyes as ``(2,)`` arrays in ``image``'s pixels, best first within each rotation.
    """
    window = tuple(int(v) for v in window)
    # flat windows are infinitely far (in the map, so they hide no neighbouring minimum)
    gate = max(min_contrast, 1e-3)
    # a window of width w holds eyes w / FACE_WINDOW["width"] apart (window_eyes)
    smallest = window[0] * (1.0 if min_iod is None else min_iod * FACE_WINDOW["width"] / window[1])

    def score_map(scaled):
        return dffs_map(scaled, space, normalize="window", min_contrast=gate)

    found = []
    for angle in rotations:
        turned, transform = rotated(image, angle)
        scales = pyramid_scales(
            turned.shape,
            window,
            step=step,
            min_size=smallest * (1.0 if angle == 0 else tilted_scale),
        )
        if len(scales) == 0:
            continue
        minima = _minima_table(turned, score_map, window, scales)
        # thousands of local minima per photo, most of them one clutter seen at several scales
        kept = minima.take(kept_indices(minima, max_count=count, overlap=overlap))
        n = len(kept.score)
        if n == 0:
            continue
        eyes = transform.inverse(np.concatenate(window_eyes(kept)))
        found += [(eyes[i], eyes[n + i], score) for i, score in enumerate(kept.score.tolist())]
    return found


def search_space(face_space, n_components=None):
    """The face space's first ``n_components`` components (default all).

    Made per search: the templates' spectra are cached by their bytes, not by the space.

    Parameters
    ----------
    face_space : Eigenspace
    n_components : int, optional

    Returns
    -------
    Eigenspace
    """
    k = face_space.n_components_
    if n_components is None or n_components >= k:
        return face_space
    return face_space.leading(int(n_components))


def reduced(image, max_side):
    """A grey float image with its longer side at most ``max_side``.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) ndarray
        8-bit or float, grey, RGB or RGBA; NaN and complex refused.
    max_side : int

    Returns
    -------
    image : (h, w) ndarray
    factors : (2,) ndarray
        ``(fy, fx)`` from input to reduced pixels.
    """
    image = to_gray(image)
    factor = min(1.0, max_side / max(image.shape))
    if factor == 1.0:
        return image, np.ones(2)
    small = resize(image, tuple(max(1, round(side * factor)) for side in image.shape))
    return small, np.array(small.shape) / np.array(image.shape)
