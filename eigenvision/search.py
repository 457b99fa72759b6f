"""The one multi-scale search of the package: an image pyramid, the local minima of a score map
at each level, suppression of repeats.

:func:`~eigenvision.detect`, :class:`~eigenvision.FeatureDetector`,
:class:`~eigenvision.FaceFinder` and the app all search through
:func:`multiscale_minima` and :func:`suppress`; a score map is any
callable (e.g. :func:`~eigenvision.dffs_map` of an eigenspace).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from numbers import Real
from typing import NamedTuple

import numpy as np
from scipy import ndimage
from scipy.spatial import cKDTree

from ._parallel import MAP_PARALLEL_PIXELS, n_threads, run_queued
from .transform import resize

#: A whole image's pyramid levels of fewer pixels are scored on one canvas when the map allows it
#: (:func:`minima_table`'s ``local_windows``): one call's overhead instead of one a level.
MOSAIC_LEVEL_PIXELS = 20_000
#: A region's levels are scored on one canvas up to this many pixels together (their maps of
#: every template are held at once).
REGION_MOSAIC_PIXELS = 2 * MAP_PARALLEL_PIXELS

__all__ = [
    "Detection",
    "pyramid_scales",
    "multiscale_minima",
    "suppress",
    "kept_indices",
    "box_iou",
]


@dataclass(frozen=True)
class Detection:
    """A window found by :func:`~eigenvision.detect`: top-left ``(x, y)``, size, scale and score.

    ``score`` is the DFFS (lower is better) or, with ``score="likelihood"``,
    the negative log-likelihood (lower is better too).

    Attributes
    ----------
    x, y : float
        Top-left corner, input pixels.
    width, height : float
        Window size, input pixels.
    scale : float
        Window size as a multiple of the model's window.
    score : float
    """

    x: float
    y: float
    width: float
    height: float
    scale: float
    score: float

    @property
    def center(self) -> tuple[float, float]:
        """``(x, y)`` of the window's centre pixel."""
        return (self.x + (self.width - 1) / 2, self.y + (self.height - 1) / 2)


def pyramid_scales(image_shape, window, *, step=2**0.25, min_size=None, max_size=None):
    """Window sizes, as multiples of ``window``, that a multi-scale search tries.

    A geometric sequence by ``step`` from the smallest window asked for (or
    the window itself) up to the largest that fits the image.

    Parameters
    ----------
    image_shape : (H, W)
    window : (h, w)
        The model's window in pixels.
    step : float, default 2**0.25
        Ratio between consecutive scales (> 1).
    min_size, max_size : float, optional
        Smallest and largest window height in image pixels (default: the
        window's own height, and the largest that fits).

    Returns
    -------
    (n,) ndarray
        Empty when no window of the asked sizes fits.

    Examples
    --------
    >>> pyramid_scales((100, 100), (25, 25), step=2).tolist()
    [1.0, 2.0, 4.0]
    >>> pyramid_scales((100, 100), (25, 25), step=2, min_size=50).tolist()
    [2.0, 4.0]
    """
    (H, W), (h, w) = image_shape, window
    if not (isinstance(step, Real) and step > 1 and np.isfinite(step)):
        raise ValueError(f"step must be a finite number > 1, got {step!r}")
    largest = min(H / h, W / w)
    if max_size is not None:
        largest = min(largest, float(max_size) / h)
    smallest = 1.0 if min_size is None else max(float(min_size) / h, 1e-9)
    if not (np.isfinite(smallest) and np.isfinite(largest)) or largest < smallest:
        return np.zeros(0)
    return smallest * step ** np.arange(0, np.log(largest / smallest) / np.log(step) + 1e-9)


def multiscale_minima(
    image,
    score_map,
    window,
    scales,
    *,
    radius=None,
    threshold=None,
    region=None,
    local_windows=False,
) -> list:
    """Local minima of a score map over an image pyramid, best first (the one multi-scale search).

    At each scale the image (or the part of it a ``region`` needs) is
    resampled so that a window ``scale`` times the model's covers the model's
    ``window``; ``score_map`` scores every window of it; a window whose score
    is finite, below ``threshold`` and the smallest within ``radius`` map
    pixels is a candidate.

    Parameters
    ----------
    image : (H, W) ndarray
    score_map : callable
        ``score_map(scaled) -> (H' - h + 1, W' - w + 1)``, lower is better
        (e.g. ``lambda im: dffs_map(im, space)``). Called from several
        threads at once when the levels are large enough to share between
        the cores (one level each): it must be thread-safe, as the package's
        maps are.
    window : (h, w)
        The model's window in pixels.
    scales : sequence of float
        Window sizes as multiples of ``window`` (> 0).
    radius : int, optional
        Radius of the local-minimum search, in map pixels (default a quarter
        of the window's smaller side).
    threshold : float, optional
        Keep scores strictly below it.
    region : ((x, y), (half_width, half_height)), optional
        Keep windows whose centre lies within it (input pixels); only the
        image around it is resampled.
    local_windows : bool, default False
        ``score_map`` scores each window from its pixels alone (as
        sliding-window maps do: DFFS, correlations), so a ``region``'s levels,
        or an image's levels under ``MOSAIC_LEVEL_PIXELS`` pixels, are scored in
        one call, stacked on one canvas, with the same values.

    Returns
    -------
    list of Detection
        Every candidate in input pixels (top-left, size, scale, score),
        sorted by score.
    """
    table = minima_table(
        image,
        score_map,
        window,
        scales,
        radius=radius,
        threshold=threshold,
        region=region,
        local_windows=local_windows,
    )
    return [Detection(*row) for row in zip(*(column.tolist() for column in table), strict=True)]


class _Minima(NamedTuple):
    """:func:`multiscale_minima`'s candidates as columns, best first (Detection's fields)."""

    x: np.ndarray
    y: np.ndarray
    width: np.ndarray
    height: np.ndarray
    scale: np.ndarray
    score: np.ndarray

    def take(self, indices) -> _Minima:
        return _Minima(*(column[indices] for column in self))


def minima_table(
    image,
    score_map,
    window,
    scales,
    *,
    radius=None,
    threshold=None,
    region=None,
    resample=None,
    local_windows=False,
    stride=1,
    masked=False,
) -> _Minima:
    """:func:`multiscale_minima` as arrays (a photo's stage 1 has thousands: one Detection
    each cost more than finding them).

    The levels are searched in parallel threads when they are large enough
    to pay for them, ``score_map`` then on one thread each (it must be
    thread-safe, as the maps here are): resampling, the minimum filter and
    the rest of a level are serial, and threads within each map left the
    other cores idle there. ``resample(size)``, when given (and no ``region``),
    makes the level of ``size`` instead of resizing ``image`` (e.g. from a pyramid).
    With ``local_windows`` (``score_map`` scores each window from its own
    pixels) a ``region``'s levels, when small together (:data:`REGION_MOSAIC_PIXELS`),
    and a whole image's levels under :data:`MOSAIC_LEVEL_PIXELS` are scored in
    one call, on a mosaic of them (:func:`_mosaic_minima`): the maps of small
    levels cost the calls' overhead more than their arithmetic. A map that
    reads its windows on a grid of ``stride`` pixels gets each level at a
    row of its grid; with ``masked``, ``score_map(canvas, valid)`` is told
    which of the canvas's windows lie in one level (a map that compares a
    window with its neighbours, a cascade's, then scores as on each level
    alone).
    """
    (h, w) = (int(v) for v in window)
    if region is not None:
        resample = None
    radius = max(1, min(h, w) // 4) if radius is None else int(radius)
    levels = []  # (scale, crop, x0, y0, size) of every level a window fits
    for scale in scales:
        crop, x0, y0 = image, 0, 0
        if region is not None:
            (cx, cy), (hx, hy) = region
            reach_x, reach_y = hx + w * scale / 2 + 2, hy + h * scale / 2 + 2
            x0, y0 = int(max(0, np.floor(cx - reach_x))), int(max(0, np.floor(cy - reach_y)))
            x1 = int(min(image.shape[1], np.ceil(cx + reach_x) + 1))
            y1 = int(min(image.shape[0], np.ceil(cy + reach_y) + 1))
            crop = image[y0:y1, x0:x1]
        size = (int(round(crop.shape[0] / scale)), int(round(crop.shape[1] / scale)))
        if size[0] >= h and size[1] >= w:
            levels.append((scale, crop, x0, y0, size))

    stacked = functools.partial(
        _mosaic_minima,
        score_map,
        (h, w),
        radius=radius,
        threshold=threshold,
        region=region,
        resample=resample,
        stride=stride,
        masked=masked,
    )
    mosaic = []  # the levels scored on one canvas
    if local_windows and levels and radius < h - 1:
        if region is not None:
            canvas = sum(size[0] for *_, size in levels) * max(size[1] for *_, size in levels)
            # larger levels gain nothing from one call, and their maps together would hold
            # every template's map of the whole canvas at once
            if canvas <= REGION_MOSAIC_PIXELS:
                return stacked(levels)
        else:
            small = [level for level in levels if np.prod(level[4]) < MOSAIC_LEVEL_PIXELS]
            if len(small) > 1:
                mosaic = small
                levels = [level for level in levels if np.prod(level[4]) >= MOSAIC_LEVEL_PIXELS]

    def search(scale, crop, x0, y0, size):
        if size == crop.shape:
            level = crop
        else:
            level = resize(crop, size) if resample is None else resample(size)
        values = np.asarray(score_map(level))
        factor_y, factor_x = crop.shape[0] / size[0], crop.shape[1] / size[1]
        keep = np.isfinite(values)
        if threshold is not None:
            keep &= values < threshold
        if region is not None:
            rows, cols = np.indices(values.shape)
            keep &= _centred_in(region, (h, w), rows, cols, (factor_y, factor_x), (y0, x0))
        i, j = _local_minima(values, keep, radius)
        count = len(i)
        return (
            j * factor_x + x0,
            i * factor_y + y0,
            np.full(count, w * factor_x),
            np.full(count, h * factor_y),
            np.full(count, float(scale)),
            values[i, j].astype(np.float64),
        )

    work = [functools.partial(search, *level) for level in levels]
    pixels = [size[0] * size[1] for *_, size in levels]
    if mosaic:
        work.append(lambda: tuple(stacked(mosaic)))
        pixels.append(sum(size[0] * size[1] for *_, size in mosaic))
    if not work:
        return _Minima(*(np.zeros(0) for _ in _Minima._fields))
    threads = min(n_threads(), len(work)) if sum(pixels) >= MAP_PARALLEL_PIXELS else 1
    # the largest levels first, each thread taking the next level left: balanced as they run
    order = np.argsort(pixels, kind="stable")[::-1]
    columns = [None] * len(work)
    for index, column in zip(order, run_queued([work[i] for i in order], threads), strict=True):
        columns[index] = column
    table = _Minima(*(np.concatenate(parts) for parts in zip(*columns, strict=True)))
    return table.take(np.argsort(table.score, kind="stable"))


def _mosaic_minima(
    score_map,
    window,
    levels,
    *,
    radius,
    threshold,
    region,
    resample=None,
    stride=1,
    masked=False,
) -> _Minima:
    """:func:`minima_table`'s search of ``levels`` in one ``score_map`` call.

    The resampled levels are stacked one under the other on a canvas as wide
    as the widest, each from a row that is a multiple of ``stride``; a window
    that crosses a level's edge is not one of that level's and is discarded,
    so a map that scores each window from its own pixels gives each level's
    values exactly (with ``masked`` the map is told which windows lie in one
    level: ``score_map(canvas, valid)``). The rows between two levels'
    windows (``h - 1`` of them, more than the minimum filter's radius) keep
    the levels' minima apart.
    """
    h, w = window
    images = [
        crop if size == crop.shape else resize(crop, size) if resample is None else resample(size)
        for _, crop, _, _, size in levels
    ]
    heights = np.array([im.shape[0] for im in images])
    widths = np.array([im.shape[1] for im in images])
    tops = np.cumsum([0] + [-(-height // stride) * stride for height in heights])
    canvas = np.zeros((tops[-1], widths.max()), dtype=images[0].dtype)
    for top, level in zip(tops[:-1], images, strict=True):
        canvas[top : top + level.shape[0], : level.shape[1]] = level
    rows, cols = np.indices((canvas.shape[0] - h + 1, canvas.shape[1] - w + 1))
    level = np.searchsorted(tops, rows, side="right") - 1  # the level each window starts in
    local_rows = rows - tops[level]
    valid = (local_rows <= heights[level] - h) & (cols <= widths[level] - w)
    values = np.asarray(score_map(canvas, valid) if masked else score_map(canvas), dtype=np.float64)
    factor_y = np.array([crop.shape[0] / size[0] for _, crop, _, _, size in levels])[level]
    factor_x = np.array([crop.shape[1] / size[1] for _, crop, _, _, size in levels])[level]
    x0 = np.array([x for _, _, x, _, _ in levels], dtype=float)[level]
    y0 = np.array([y for _, _, _, y, _ in levels], dtype=float)[level]
    keep = valid & np.isfinite(values)
    if threshold is not None:
        keep &= values < threshold
    if region is not None:
        keep &= _centred_in(region, window, local_rows, cols, (factor_y, factor_x), (y0, x0))
    i, j = _local_minima(values, keep, radius)
    scales = np.array([scale for scale, *_ in levels], dtype=float)
    table = _Minima(
        j * factor_x[i, j] + x0[i, j],
        local_rows[i, j] * factor_y[i, j] + y0[i, j],
        w * factor_x[i, j],
        h * factor_y[i, j],
        scales[level[i, j]],
        values[i, j],
    )
    return table.take(np.argsort(table.score, kind="stable"))


def _centred_in(region, window, rows, cols, factors, origin):
    """Whether the windows at map ``(rows, cols)`` have their centre in ``region`` (input
    pixels, pixel-centre convention), for a level of ``factors`` ``(fy, fx)`` from its pixels
    to the input's and top-left ``origin`` ``(y0, x0)`` in the input."""
    (cx, cy), (hx, hy) = region
    (h, w), (factor_y, factor_x), (y0, x0) = window, factors, origin
    xs = (cols + w / 2) * factor_x - 0.5 + x0
    ys = (rows + h / 2) * factor_y - 0.5 + y0
    return (np.abs(xs - cx) <= hx) & (np.abs(ys - cy) <= hy)


def _local_minima(values, keep, radius):
    """The ``(rows, cols)`` of the kept values that are the smallest kept within ``radius``
    map pixels.

    Where few windows are kept (a cascade's survivors), they are compared with each other
    alone (:func:`_sparse_minima`) instead of filtering the whole map: the same minima.
    """
    rows, cols = np.nonzero(keep)
    if len(rows) * _SPARSE_SHARE < keep.size:
        return _sparse_minima(values[rows, cols], rows, cols, radius)
    values = np.where(keep, values, np.inf)
    minima = keep & (values == ndimage.minimum_filter(values, 2 * radius + 1, mode="nearest"))
    return np.nonzero(minima)


# kept windows under one in this many of a map's are compared with each other, not filtered
# (the crossover measured: docs/architecture.md, "Why the fast paths")
_SPARSE_SHARE = 64


def _sparse_minima(values, rows, cols, radius):
    """The ``(rows, cols)`` of the points no other within ``radius`` (in rows and in columns)
    beats: a minimum filter's minima of a map that is ``inf`` elsewhere (with the filter's
    nearest-edge mode, whose repeated border rows and columns add no neighbour).

    Pairs within reach are found by a k-d tree in the maximum norm; order kept (row-major).
    """
    if len(rows) < 2:
        return rows, cols
    points = np.column_stack([rows, cols])
    pairs = cKDTree(points).query_pairs(radius, p=np.inf, output_type="ndarray")
    beaten = np.zeros(len(rows), dtype=bool)
    if len(pairs):
        a, b = pairs[:, 0], pairs[:, 1]
        beaten[a[values[b] < values[a]]] = True
        beaten[b[values[a] < values[b]]] = True
    return rows[~beaten], cols[~beaten]


def box_iou(box, boxes) -> np.ndarray:
    """Intersection over union of one ``(x, y, w, h)`` box with each of ``boxes``.

    Parameters
    ----------
    box : (x, y, w, h)
    boxes : (n, 4) array_like

    Returns
    -------
    (n,) ndarray

    Examples
    --------
    >>> box_iou((0, 0, 2, 2), [(1, 0, 2, 2), (5, 5, 1, 1)]).round(4).tolist()
    [0.3333, 0.0]
    """
    x, y, w, h = (float(v) for v in box)
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    width = np.minimum(boxes[:, 0] + boxes[:, 2], x + w) - np.maximum(boxes[:, 0], x)
    height = np.minimum(boxes[:, 1] + boxes[:, 3], y + h) - np.maximum(boxes[:, 1], y)
    inter = np.clip(width, 0, None) * np.clip(height, 0, None)
    return inter / (boxes[:, 2] * boxes[:, 3] + w * h - inter)


def suppress(detections, *, max_count, overlap=None, separation=None, parts_only=False) -> list:
    """Greedy non-maximum suppression: the best detection of each place, best first.

    Parameters
    ----------
    detections : list of Detection
        Sorted by score, best first (as :func:`multiscale_minima` gives them).
    max_count : int
        Keep at most this many.
    overlap : float, optional
        Drop a detection whose intersection over union with a kept one
        exceeds this.
    separation : float, optional
        Drop a detection whose centre lies within ``separation`` times a kept
        one's width of that one's centre.
    parts_only : bool, default False
        With ``separation``: drop only detections no wider than the kept one
        (a part of it); a wider one centred on it is kept.

    Returns
    -------
    list of Detection
    """
    kept = kept_indices(
        detections,
        max_count=max_count,
        overlap=overlap,
        separation=separation,
        parts_only=parts_only,
    )
    return [detections[i] for i in kept]


def kept_indices(detections, *, max_count, overlap=None, separation=None, parts_only=False) -> list:
    """The positions in ``detections`` that :func:`suppress` keeps, in its order.

    Parameters
    ----------
    detections, max_count, overlap, separation, parts_only
        As :func:`suppress`.

    Returns
    -------
    list of int
    """
    count = max(int(max_count), 0)
    if isinstance(detections, _Minima):  # the search's own columns
        x, y, width, height = detections[:4]
    else:
        x, y, width, height = (
            np.array([(d.x, d.y, d.width, d.height) for d in detections], dtype=np.float64)
            .reshape(-1, 4)
            .T
        )
    if len(x) == 0 or count == 0:
        return []
    right, bottom, area = x + width, y + height, width * height
    centre_x, centre_y = x + (width - 1) / 2, y + (height - 1) / 2

    def clashes(later, earlier):
        """``[i, j]``: detection ``later[i]`` is dropped if ``earlier[j]`` is kept."""
        drop = np.zeros((len(later), len(earlier)), dtype=bool)
        a, b = later[:, None], earlier[None, :]
        if overlap is not None:
            inter = np.clip(np.minimum(right[a], right[b]) - np.maximum(x[a], x[b]), 0, None)
            inter *= np.clip(np.minimum(bottom[a], bottom[b]) - np.maximum(y[a], y[b]), 0, None)
            drop |= inter > overlap * (area[a] + area[b] - inter)
        if separation is not None:
            distance = np.hypot(centre_x[a] - centre_x[b], centre_y[a] - centre_y[b])
            near = distance <= separation * width[b]
            drop |= near & (width[a] <= width[b]) if parts_only else near
        return drop

    # By overlap alone, boxes whose areas differ by more than 1 / overlap times never clash
    # (IoU <= smaller area / larger): with areas binned by that ratio (and a margin against
    # round-off), only neighbouring bins are compared.
    bins = None
    if separation is None and overlap is not None and overlap < 1 and np.all(area > 0):
        bins = np.floor(np.log(area) / (-np.log(overlap) * 1.001)).astype(np.intp)

    def dropped(block, kept):
        """Which of ``block`` a detection in ``kept`` drops."""
        if bins is None:
            return clashes(block, kept).any(axis=1)
        out = np.zeros(len(block), dtype=bool)
        block_bins, kept_bins = bins[block], bins[kept]
        for value in np.unique(block_bins):
            rows = block_bins == value
            near = kept[np.abs(kept_bins - value) <= 1]
            if len(near):
                out[rows] = clashes(block[rows], near).any(axis=1)
        return out

    # Greedy, one block of candidates at a time: those a kept detection drops go at once, the
    # rest are settled among themselves. A numpy call per candidate cost most of stage 1's
    # suppression (thousands of local minima per photo); this gives the same answer, faster
    # (benchmarks/bench_suppression.py).
    kept = np.zeros(0, dtype=np.intp)
    for start in range(0, len(x), _SUPPRESSION_BLOCK):
        block = np.arange(start, min(start + _SUPPRESSION_BLOCK, len(x)))
        if len(kept):
            block = block[~dropped(block, kept)]
        # earlier[i]: the block's earlier detections that would drop detection i (few)
        later, earlier = np.nonzero(np.tril(clashes(block, block), -1))
        bounds = np.searchsorted(later, np.arange(len(block) + 1)).tolist()
        earlier = earlier.tolist()
        chosen = [True] * len(block)
        for i in range(len(block)):
            chosen[i] = not any(chosen[j] for j in earlier[bounds[i] : bounds[i + 1]])
        kept = np.concatenate([kept, block[np.array(chosen, dtype=bool)]])
        if len(kept) >= count:
            break
    return kept[:count].tolist()


#: Candidates :func:`kept_indices` settles at once.
_SUPPRESSION_BLOCK = 256
