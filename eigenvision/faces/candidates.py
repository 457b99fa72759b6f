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
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression

from .. import _compiled  # numba's loops: numba imported at their first call
from .._base import check_fitted
from .._errors import EigenvisionError
from .._spec import Param, State, check_model, check_params
from ..detection import dffs_map, linear_score_map
from ..eigenspace import Eigenspace
from ..normalize import to_gray, unit_norm
from ..search import box_iou, kept_indices, minima_table, pyramid_scales
from ..transform import resize, rotated, unit_light
from .geometry import FACE_WINDOW, HalfOctaves, window_eyes

__all__ = [
    "CandidateSearch",
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
            at, standardised, linear = _best_in_cells(image, prefilter, *at, min_contrast, valid)
        # standardised windows: finite and of the space's shape, projected without the checks
        centred = standardised.reshape(len(at[0]), h * w) - space.mean_
        dffs = space._residual_energy(centred, centred @ space.components_.T)
        dffs = np.maximum(dffs, _SMALLEST_DFFS)
        values[at] = prefilter.dffs_weight * np.log(dffs) - linear
    return values


def _best_in_cells(image, prefilter, rows, cols, min_contrast, valid=None):
    """Each grid survivor ``(rows, cols)`` (in grid cells) moved to the window of its cell the
    prefilter scores highest (of the ``valid`` ones): ``(rows, cols)`` in pixels, the windows
    standardised, their scores (:func:`~eigenvision._compiled.best_in_cells`, one pass over
    each cell's windows)."""
    (h, w), weights = prefilter.weights.shape, np.asarray(prefilter.weights, dtype=np.float64)
    at_rows, at_cols, linear, standardised = _compiled.best_in_cells(
        np.ascontiguousarray(image, dtype=np.float64),
        weights - weights.mean(),  # w . x~ = w . x / ||x - mean(x)|| for zero-mean weights
        float(prefilter.bias),
        int(prefilter.stride),
        rows.astype(np.int64),
        cols.astype(np.int64),
        min_contrast * np.sqrt(h * w),
        np.zeros((0, 0), dtype=bool) if valid is None else np.ascontiguousarray(valid),
    )
    return (at_rows, at_cols), standardised, linear


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
        default the window's own. Below it, the pyramid's levels continue down,
        ``image`` enlarged, to the level nearest ``min_iod``.
    tilted_scale : float, default 1.0
        The rotations other than 0 are searched from this many times the
        smallest upright face up, or the window's when ``min_iod`` is below
        it: the photo is never enlarged to turn it.
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
        # the search below the window is upright only: turning the enlarged photo cost more
        # time and false alarms than the few small turned faces it found (HISTORY.md)
        min_size = smallest if angle == 0 else max(smallest, window[0]) * tilted_scale
        # A photo is turned at the coarsest half-octave its smallest face allows: the
        # rotation and the pyramid cost a fraction of the full resolution's.
        octave = 0 if angle == 0 else max(0, int(np.floor(2 * np.log2(min_size / window[0]))))
        turned, transform = rotated(upright[octave], angle)
        pyramid = upright if angle == 0 else HalfOctaves(turned)
        factor = np.array(upright.image.shape) / np.array(upright.shape(octave))
        if min_size < window[0]:
            scales = _extended_down(turned.shape, window, step, min_size)
        else:
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


def _extended_down(image_shape, window, step, min_size):
    """The pyramid's scales from the window's own, continued below it (the image enlarged)
    down to the level nearest ``min_size`` (a window side smaller than ``window[0]``): the
    levels from the window up are those of a search from the window, whatever ``min_size``.
    """
    below = int(round(np.log(window[0] / min_size) / np.log(step)))
    enlarged = pyramid_scales(
        image_shape, window, step=step, min_size=window[0] * step**-below, max_size=window[0]
    )[:below]  # without the window's own level: the search from the window's starts there
    return np.concatenate([enlarged, pyramid_scales(image_shape, window, step=step)])


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


class CandidateSearch(BaseEstimator):
    """Stage 1 of :class:`~eigenvision.FaceFinder`: the face space, the cascade's first test and
    the search for candidates with them (:func:`find_candidates`).

    Parameters
    ----------
    n_components : int, default 20
        Components of the face space.
    search_components : int, optional
        Components the search uses, the face space's first ones
        (:meth:`~eigenvision.Eigenspace.leading`); default all. Each costs an
        inverse FFT of every pyramid level.
    rotations : tuple of float, default (-20.0, 0.0, 20.0)
        In-plane rotations searched, degrees (the face space is trained on
        faces tilted in between: the finder's ``augment``).
    step : float, default 2**0.25
        Ratio between the pyramid's window sizes.
    min_iod : float, optional
        The smallest face searched, as its eye distance in the searched
        (reduced) photo's pixels; default the window's own. A larger one
        skips the pyramid's finest levels, where texture looks most like a
        small face; a smaller one (down to half the window's) searches the
        photo enlarged for faces smaller than the window (the pyramid's levels
        continued down to the one nearest it; those from the window up
        unchanged), at the cost of levels larger than the photo.
    tilted_scale : float, default 2.0
        Faces turned in the plane (the ``rotations`` other than 0) are
        searched from this many times the smallest upright face up (or the
        window's, when ``min_iod`` is below it): the turned photos' finest
        levels cost most and add more clutter than faces.
    n_candidates : int, default 150
        Candidates per rotation passed on to the face/non-face decision.
    prefilter_recall : float or None, default 0.99
        The cascade's first test (:func:`fit_prefilter`): a linear
        discriminant slid over the pyramid keeps this fraction of the
        (jittered) training faces; the DFFS of the windows it keeps ranks
        them with it (:func:`cascade_map`). None: every window's DFFS, ranked
        by it alone. The cut is set by ``fit``; on a fitted search only None
        changes the search.
    dffs_weight : float, default 1.0
        The candidates' rank: ``dffs_weight log DFFS`` minus the
        discriminant's score (:class:`Prefilter`).
    prefilter_stride : int, default 2
        The discriminant is first read on a grid of this many pixels, each
        survivor then moved to its cell's best window (coarse to fine).
    overlap : float, default 0.5
        Candidates may overlap a better one (by DFFS) up to this
        intersection over union, so the decision also sees better-placed
        neighbours.
    min_contrast : float, default 0.02
        Windows whose grey levels (in [0, 1]) vary less than this (standard
        deviation) are no candidates: standardised, a blank wall's JPEG noise
        can look like anything.

    Attributes
    ----------
    face_space_ : Eigenspace
        Of standardised face windows.
    prefilter_weights_, prefilter_bias_, prefilter_cut_ : (h, w) ndarray, float, float
        The cascade's first test (None without ``prefilter_recall``).

    References
    ----------
    B. Moghaddam and A. Pentland (1997), Probabilistic visual learning for
    object representation, IEEE TPAMI 19(7). P. Viola and M. Jones (2001),
    Rapid object detection using a boosted cascade of simple features, CVPR
    (the cascade's first test).
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1, 1000),
        "search_components": Param("int", 1, 1000, optional=True),
        "rotations": Param("reals", -90, 90, max_length=9),
        "step": Param("real", 1, 4, open_low=True),
        "min_iod": Param("real", 8, 4096, optional=True),
        "tilted_scale": Param("real", 1, 64),
        "n_candidates": Param("int", 1, 100_000),
        "prefilter_recall": Param("real", 0, 1, open_low=True, optional=True),
        "dffs_weight": Param("real", 0, 100),
        "prefilter_stride": Param("int", 1, 8),
        "overlap": Param("real", 0, 1, open_low=True),
        "min_contrast": Param("real", 0, 1, open_high=True),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        "face_space_": State("model"),
        "prefilter_weights_": State(shape=("h", "w"), optional=True),
        "prefilter_bias_": State("real", optional=True),
        "prefilter_cut_": State("real", optional=True),
    }

    def __init__(
        self,
        n_components=20,
        *,
        search_components=None,
        rotations=(-20.0, 0.0, 20.0),
        step=2**0.25,
        min_iod=None,
        tilted_scale=2.0,
        n_candidates=150,
        prefilter_recall=0.99,
        dffs_weight=1.0,
        prefilter_stride=2,
        overlap=0.5,
        min_contrast=0.02,
    ):
        self.n_components = n_components
        self.search_components = search_components
        self.rotations = rotations
        self.step = step
        self.min_iod = min_iod
        self.tilted_scale = tilted_scale
        self.n_candidates = n_candidates
        self.prefilter_recall = prefilter_recall
        self.dffs_weight = dffs_weight
        self.prefilter_stride = prefilter_stride
        self.overlap = overlap
        self.min_contrast = min_contrast

    def fit(self, windows, backgrounds=(), *, jittered=()):
        """The face space of ``windows`` and, with ``prefilter_recall``, the first test.

        Parameters
        ----------
        windows : (n, h, w) ndarray
            Aligned face windows (:func:`~eigenvision.faces.geometry.augmented_face_windows`).
        backgrounds : sequence of ((H, W) ndarray, boxes)
            Photos whose windows (away from ``boxes``) are non-faces
            (:func:`background_windows`); only with ``prefilter_recall``.
        jittered : sequence of (m, h, w) ndarray
            More face windows, cut as a search meets them
            (:func:`~eigenvision.faces.geometry.jittered_face_windows`), for the first test.

        Returns
        -------
        self
        """
        check_params(self)
        windows = np.asarray(windows, dtype=float)
        self.face_space_ = Eigenspace(min(self.n_components, len(windows) - 1)).fit(windows)
        self.prefilter_weights_ = self.prefilter_bias_ = self.prefilter_cut_ = None
        if self.prefilter_recall is None:
            return self
        nonfaces = background_windows(backgrounds, windows.shape[1:], step=self.step)
        if len(nonfaces) < 2:
            raise EigenvisionError(
                f"only {len(nonfaces)} non-face windows were found in the backgrounds; "
                "give more (or larger) photos"
            )
        prefilter = fit_prefilter(
            np.concatenate([windows, *jittered]), nonfaces, recall=self.prefilter_recall
        )
        self.prefilter_weights_ = prefilter.weights
        self.prefilter_bias_, self.prefilter_cut_ = prefilter.bias, prefilter.cut
        return self

    @property
    def window(self) -> tuple[int, int]:
        """The window searched, ``(h, w)``: the face space's."""
        check_fitted(self, "face_space_")
        return tuple(int(v) for v in self.face_space_.image_shape_)

    def prefilter(self) -> Prefilter | None:
        """The fitted :class:`Prefilter` with these settings (None without one).

        Returns
        -------
        Prefilter or None
        """
        if getattr(self, "prefilter_weights_", None) is None or self.prefilter_recall is None:
            return None
        return Prefilter(
            self.prefilter_weights_,
            self.prefilter_bias_,
            self.prefilter_cut_,
            self.dffs_weight,
            self.prefilter_stride,
        )

    def candidates(self, image, count=None) -> list:
        """Stage 1's candidates in a (reduced) photo: :func:`find_candidates` with these settings.

        Parameters
        ----------
        image : (H, W) ndarray or HalfOctaves
        count : int, optional
            Candidates per rotation (default ``n_candidates``).

        Returns
        -------
        list of (left_eye, right_eye, dffs)
        """
        check_fitted(self, "face_space_")
        return find_candidates(
            image,
            search_space(self.face_space_, self.search_components),
            self.window,
            count=self.n_candidates if count is None else count,
            rotations=self.rotations,
            step=self.step,
            min_iod=self.min_iod,
            tilted_scale=self.tilted_scale,
            overlap=self.overlap,
            min_contrast=self.min_contrast,
            prefilter=self.prefilter(),
        )

    def _check_relations(self):
        """Its parameters in range, its first test of its window
        (:func:`~eigenvision._spec.check_model`)."""
        check_params(self)
        check_model(self.face_space_)
        weights = getattr(self, "prefilter_weights_", None)
        if weights is not None and weights.shape != self.window:
            raise ValueError(
                f"CandidateSearch: prefilter_weights_ of shape {weights.shape}, not the window "
                f"{self.window}"
            )
