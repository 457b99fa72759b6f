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

from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from sklearn.linear_model import LogisticRegression

from ..detection import dffs_map, inverse_norms, linear_score_map
from ..normalize import to_gray, unit_norm
from ..search import box_iou, kept_indices, minima_table, pyramid_scales
from ..transform import resize, rotated, unit_light
from .geometry import FACE_WINDOW, HalfOctaves, window_eyes

__all__ = [
    "find_candidates",
    "search_space",
    "reduced",
    "Prefilter",
    "cascade_map",
    "fit_prefilter",
    "background_windows",
]


class Prefilter(NamedTuple):
    """The cascade's first test: a linear discriminant of standardised windows, and its cut.

    A window ``x`` (zero-mean, unit norm) passes when ``weights . x + bias >= cut``
    and no neighbour (3 x 3) scores higher; survivors are ranked by
    ``dffs_weight log DFFS(x) - (weights . x + bias)``, lower first
    (:func:`cascade_map`).

    Attributes
    ----------
    weights : (h, w) ndarray
        The discriminant's weights, the window's shape.
    bias : float
    cut : float
    dffs_weight : float, default 1.0
    stride : int, default 1
        The test is first read on a grid of this many pixels, coarse to fine
        (:func:`cascade_map`).
    """

    weights: np.ndarray
    bias: float
    cut: float
    dffs_weight: float = 1.0
    stride: int = 1


def cascade_map(image, space, prefilter, *, min_contrast=1e-3, valid=None):
    """The cascade's score of the windows that pass the prefilter, ``+inf`` elsewhere.

    Coarse to fine: the windows of a grid of ``prefilter.stride`` pixels are
    scored by the prefilter (one correlation,
    :func:`~eigenvision.detection.linear_score_map`, a quarter of the cost at
    stride 2); those above its cut and the best of their 3 x 3 grid
    neighbours survive, each moved to the best-scoring window of its grid
    cell (the ``stride x stride`` windows from it down and right). The
    DFFS, the eigenspace's likelihood, is computed for them only, from the
    windows themselves (:meth:`~eigenvision.Eigenspace.dffs` of the
    standardised windows), and combined with the linear score
    (:class:`Prefilter`). The discriminant ranks a photo's face far higher
    than the DFFS alone; the DFFS breaks its ties among near-faces.

    Parameters
    ----------
    image : (H, W) ndarray
    space : Eigenspace
        Of standardised windows of the prefilter's shape.
    prefilter : Prefilter
    min_contrast : float, default 1e-3
        Flatter windows (pixel standard deviation) fail.
    valid : (H - h + 1, W - w + 1) ndarray of bool, optional
        The windows to score (default all); the others fail and are no
        window's neighbours: the maps of several images stacked on one
        canvas (:func:`~eigenvision.search.multiscale_minima`) are each
        image's own.

    Returns
    -------
    (H - h + 1, W - w + 1) ndarray of float64
        Lower is better.
    """
    (h, w), stride = prefilter.weights.shape, int(prefilter.stride)
    scores = linear_score_map(
        image, prefilter.weights, prefilter.bias, min_contrast=min_contrast, stride=stride
    )
    if valid is not None:
        scores[~valid[::stride, ::stride]] = -np.inf
    rows, cols = _best_of_neighbours(scores, *np.nonzero(scores >= prefilter.cut))
    windows = sliding_window_view(image, (h, w))
    values = np.full(windows.shape[:2], np.inf)
    for start in range(0, len(rows), _SURVIVOR_BLOCK):
        at = rows[start : start + _SURVIVOR_BLOCK], cols[start : start + _SURVIVOR_BLOCK]
        if stride == 1:
            standardised, linear = unit_norm(windows[at]), scores[at]
        else:
            at, standardised, linear = _best_in_cells(windows, prefilter, *at, min_contrast, valid)
        # standardised windows: finite and of the space's shape, projected without the checks
        centred = standardised.reshape(len(at[0]), h * w) - space.mean_
        dffs = space._residual_energy(centred, centred @ space.components_.T)
        dffs = np.maximum(dffs, _SMALLEST_DFFS)
        values[at] = prefilter.dffs_weight * np.log(dffs) - linear
    return values


def _best_in_cells(windows, prefilter, rows, cols, min_contrast, valid=None):
    """Each grid survivor ``(rows, cols)`` (in grid cells) moved to the window of its cell the
    prefilter scores highest (of the ``valid`` ones): ``(rows, cols)`` in pixels, the windows
    standardised, their scores."""
    stride = int(prefilter.stride)
    (h, w), last = prefilter.weights.shape, np.array(windows.shape[:2]) - 1
    offsets = np.arange(stride)
    cell_rows = np.minimum(rows[:, None, None] * stride + offsets[:, None], last[0])
    cell_cols = np.minimum(cols[:, None, None] * stride + offsets[None, :], last[1])
    cell_rows, cell_cols = (
        v.reshape(len(rows), stride * stride) for v in np.broadcast_arrays(cell_rows, cell_cols)
    )
    cells = windows[cell_rows, cell_cols].reshape(len(rows), stride * stride, h * w)
    # w . x~ = w . x / ||x - mean(x)|| for zero-mean weights: three sums of each window
    weights = (prefilter.weights - prefilter.weights.mean()).ravel()
    sums, squares = cells.sum(axis=2), np.einsum("nkp,nkp->nk", cells, cells)
    inverse, flat = inverse_norms(sums, squares, h * w, min_contrast)
    linear = (cells @ weights) * inverse + prefilter.bias
    linear[flat] = -np.inf
    if valid is not None:
        linear[~valid[cell_rows, cell_cols]] = -np.inf
    best, survivors = np.argmax(linear, axis=1), np.arange(len(rows))
    at = cell_rows[survivors, best], cell_cols[survivors, best]
    return at, unit_norm(cells[survivors, best].reshape(-1, h, w)), linear[survivors, best]


def _best_of_neighbours(scores, rows, cols):
    """The ``(rows, cols)`` among those given whose score no 3 x 3 neighbour's exceeds: where
    ``scores == ndimage.maximum_filter(scores, 3, mode="nearest")``, found for the few
    windows above the cut alone."""
    # a border of -inf: the nearest-edge mode repeats values each window already sees
    padded = np.pad(scores, 1, constant_values=-np.inf)
    width = padded.shape[1]
    flat, at = padded.ravel(), (rows + 1) * width + cols + 1
    best = np.full(len(rows), -np.inf)
    for offset in (-width - 1, -width, -width + 1, -1, 0, 1, width - 1, width, width + 1):
        np.maximum(best, flat[at + offset], out=best)
    top = flat[at] == best
    return rows[top], cols[top]


def fit_prefilter(faces, nonfaces, *, recall=0.99, dffs_weight=1.0, C=1.0):
    """The cascade's first test: logistic regression between standardised faces and non-faces.

    Parameters
    ----------
    faces : (n, h, w) ndarray
        Standardised face windows, jittered as a search meets them
        (:func:`~eigenvision.faces.geometry.jittered_face_windows`).
    nonfaces : (m, h, w) ndarray
        Standardised windows without a face (:func:`background_windows`).
    recall : float, default 0.99
        The cut keeps this fraction of ``faces``.
    dffs_weight : float, default 1.0
        See :class:`Prefilter`.
    C : float, default 1.0
        Inverse regularisation strength (scikit-learn's ``LogisticRegression``).

    Returns
    -------
    Prefilter
    """
    h, w = faces.shape[1:]
    X = np.concatenate([faces, nonfaces]).reshape(len(faces) + len(nonfaces), h * w)
    y = np.r_[np.ones(len(faces)), np.zeros(len(nonfaces))]
    model = LogisticRegression(C=C, class_weight="balanced", max_iter=5000).fit(X, y)
    weights = model.coef_.reshape(h, w)
    weights = weights - weights.mean()  # the windows are zero-mean: the same scores
    bias = float(model.intercept_[0])
    face_scores = X[: len(faces)] @ weights.ravel() + bias
    cut = float(np.quantile(face_scores, 1.0 - recall))
    return Prefilter(weights, bias, cut, float(dffs_weight))


def background_windows(backgrounds, window, *, per_image=300, levels=6, step=2**0.25, seed=0):
    """Standardised windows drawn at random from pyramids of photos without faces.

    Parameters
    ----------
    backgrounds : sequence of ((H, W) ndarray, boxes)
        Grey photos and the ``(x, y, w, h)`` boxes of their faces: windows
        that overlap one are skipped.
    window : (h, w)
    per_image : int, default 300
        Windows drawn from each photo (fewer where they overlap faces or are flat).
    levels : int, default 6
        Pyramid levels (of ``step``) drawn from, at random, per photo.
    step : float, default 2**0.25
    seed : int, default 0

    Returns
    -------
    (m, h, w) ndarray
        Zero-mean, of unit norm; flat windows (standard deviation under
        0.02) left out, as the search leaves them.
    """
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in window)
    found = []
    for image, avoid in backgrounds:
        scales = pyramid_scales(image.shape, (h, w), step=step)
        if len(scales) == 0:
            continue
        chosen = rng.choice(scales, size=min(levels, len(scales)), replace=False)
        for scale in chosen:
            size = (int(round(image.shape[0] / scale)), int(round(image.shape[1] / scale)))
            views = sliding_window_view(resize(image, size), (h, w))
            count = per_image // len(chosen)
            rows = rng.integers(0, views.shape[0], count)
            cols = rng.integers(0, views.shape[1], count)
            if len(avoid):
                boxes = np.stack([cols * scale, rows * scale], axis=1)
                clear = [
                    box_iou((x, y, w * scale, h * scale), np.asarray(avoid)).max() == 0
                    for x, y in boxes
                ]
                rows, cols = rows[clear], cols[clear]
            found.append(views[rows, cols])
    windows = np.concatenate(found) if found else np.zeros((0, h, w))
    windows = windows[windows.reshape(len(windows), h * w).std(axis=1) > 0.02]
    return unit_norm(windows) if len(windows) else np.zeros((0, h, w))


# survivors standardised and projected per block: bounded memory whatever their number (a
# block's grid cells at stride 2: 1024 x 4 windows of 572 pixels, 19 MB)
_SURVIVOR_BLOCK = 1024
# a window of the face space itself has DFFS 0: its log is bounded below
_SMALLEST_DFFS = 1e-12


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
    prefilter=None,
):
    """The ``count`` best DFFS windows of every rotation, as eye pairs.

    Parameters
    ----------
    image : (H, W) ndarray or HalfOctaves
        A grey photo (already reduced: :func:`reduced`); a
        :class:`~eigenvision.faces.geometry.HalfOctaves` keeps its reductions, the
        pyramid's, for the windows cut later.
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
    prefilter : Prefilter, optional
        A cascade's first test (:func:`cascade_map`): the DFFS only of the
        windows that pass it. Default: every window's (one correlation per
        component).

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

    def score_map(scaled, valid=None):
        if prefilter is not None:
            return cascade_map(scaled, space, prefilter, min_contrast=gate, valid=valid)
        return dffs_map(scaled, space, normalize="window", min_contrast=gate)

    upright = image if isinstance(image, HalfOctaves) else HalfOctaves(image)
    found = []
    for angle in rotations:
        min_size = smallest * (1.0 if angle == 0 else tilted_scale)
        # A photo is turned at the coarsest half-octave its smallest face allows: the
        # rotation and the pyramid cost a fraction of the full resolution's.
        octave = 0 if angle == 0 else max(0, int(np.floor(2 * np.log2(min_size / window[0]))))
        turned, transform = rotated(upright[octave], angle)
        pyramid = upright if angle == 0 else HalfOctaves(turned)
        factor = np.array(upright.image.shape) / np.array(upright.shape(octave))
        scales = pyramid_scales(turned.shape, window, step=step, min_size=min_size / factor[0])
        if len(scales) == 0:
            continue
        minima = minima_table(
            pyramid.image,
            score_map,
            window,
            scales,
            resample=pyramid.resized,
            local_windows=True,
            stride=1 if prefilter is None else int(prefilter.stride),
            masked=True,
        )
        # thousands of local minima per photo, most of them one clutter seen at several scales
        kept = minima.take(kept_indices(minima, max_count=count, overlap=overlap))
        n = len(kept.score)
        if n == 0:
            continue
        eyes = transform.inverse(np.concatenate(window_eyes(kept)))
        eyes = (eyes + 0.5) * factor[::-1] - 0.5  # the half-octave's pixels to the image's
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
        8-bit or float, grey, RGB or RGBA; NaN and complex refused. A float
        image outside [0, 1] (centred at 0, or 0-255) is brought to [0, 1] by
        its own range: every stage downstream reads light as [0, 1].
    max_side : int

    Returns
    -------
    image : (h, w) ndarray
    factors : (2,) ndarray
        ``(fy, fx)`` from input to reduced pixels.
    """
    image = unit_light(to_gray(image))
    factor = min(1.0, max_side / max(image.shape))
    if factor == 1.0:
        return image, np.ones(2)
    small = resize(image, tuple(max(1, round(side * factor)) for side in image.shape))
    return small, np.array(small.shape) / np.array(image.shape)
