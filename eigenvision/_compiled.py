"""The package's compiled loops (numba), imported only when first needed.

Each loop here replaces numpy or scipy code that spends its time on
temporaries or on generality a hot path does not need; each is checked
against that code in the tests and timed against it in ``benchmarks/``.
Importing this module imports no numba: the loops are written here as
Python, and the first call of any of them imports numba and makes them
numba functions (:func:`_compile`), compiled at their first call. Compiled
once per machine: numba caches the machine code beside this file
(``cache=True``). The loops release the GIL (``nogil=True``): callers may
share large inputs between threads (:func:`~eigenvision._parallel.run_parallel`).
"""

from __future__ import annotations

import functools
import threading

import numpy as np

__all__ = [
    "bilinear_grids",
    "ranks_in_order",
    "log_distance_pixels",
    "grid_inverse_norms",
    "best_in_cells",
    "smoothed_bilinear_grids",
    "hog_cells",
    "hog_blocks",
]

#: The loops' Python (their names here) and the helpers they call, made numba functions by
#: :func:`_compile`: the helpers in place (the loops find them by name when they compile), the
#: loops in ``_NUMBA`` (their names here call them through :func:`_loop`'s wrapper).
_HELPERS, _LOOPS, _NUMBA = {}, {}, {}
_lock = threading.Lock()


def _helper(function):
    """A function the loops call: a numba function (inlined) once :func:`_compile` ran."""
    _HELPERS[function.__name__] = function
    return function


def _loop(function):
    """A loop callable from Python: compiled by numba at its first call."""
    _LOOPS[function.__name__] = function

    @functools.wraps(function)
    def call(*args):
        if not _NUMBA:
            _compile()
        return _NUMBA[function.__name__](*args)

    return call


def _compile():
    """numba imported and every loop and helper here made a numba function (once)."""
    import numba  # the one place numba is imported: at the first call of a loop

    with _lock:
        if _NUMBA:
            return
        for name, function in _HELPERS.items():
            inline = "never" if name == "_read_grids" else "always"
            globals()[name] = numba.njit(cache=True, nogil=True, inline=inline)(function)
        _NUMBA.update({name: numba.njit(cache=True, nogil=True)(f) for name, f in _LOOPS.items()})


@_helper
def _corner(height, width, r, c):  # pragma: no cover - compiled
    """The top-left pixel ``(r0, c0)`` of a point's bilinear read in a ``height x width``
    image (clamped to it, so beyond it the edge repeats), the bottom-right one and the
    point's fractions past them."""
    r = min(max(r, 0.0), height - 1.0)
    c = min(max(c, 0.0), width - 1.0)
    r0, c0 = int(r), int(c)  # floor: both are >= 0
    return r0, c0, min(r0 + 1, height - 1), min(c0 + 1, width - 1), r - r0, c - c0


@_helper
def _point(a, i, j):  # pragma: no cover - compiled
    """Grid point ``(i, j)``'s row and column under the ``(2, 3)`` affine ``a``."""
    return a[0, 0] * i + a[0, 2] + a[0, 1] * j, a[1, 0] * i + a[1, 2] + a[1, 1] * j


@_helper
def _blend(top_left, top_right, bottom_left, bottom_right, fr, fc):  # pragma: no cover
    """The bilinear value between four pixels at fractions ``fr`` down and ``fc`` across."""
    top = (1.0 - fc) * top_left + fc * top_right
    bottom = (1.0 - fc) * bottom_left + fc * bottom_right
    return (1.0 - fr) * top + fr * bottom


@_loop
def bilinear_grids(image, affine, out):  # pragma: no cover - compiled; tested through callers
    """Fill ``out[n, i, j]`` with ``image``'s bilinear value at ``affine[n] @ (i, j, 1)``.

    Points beyond the image take its nearest edge's value (SciPy's order-1 interpolation
    with the mode "nearest", :func:`eigenvision.transform.sample`).

    Parameters
    ----------
    image : (H, W) float ndarray
    affine : (n, 2, 3) float64 ndarray
        Row and column of grid point ``(i, j)``.
    out : (n, h, w) ndarray

    Returns
    -------
    (n, h, w) ndarray
        ``out``; NaN where a point is not finite.
    """
    height, width = image.shape
    return _read_grids(image, np.arange(height), height, width, affine, out)


@_helper
def _read_grids(rows, index, height, width, affine, out):  # pragma: no cover - compiled
    """:func:`bilinear_grids` of a ``height x width`` image of which ``rows[index[r]]`` holds
    row ``r`` (the rows read, at least)."""
    for n in range(out.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                r, c = _point(affine[n], i, j)
                if not (np.isfinite(r) and np.isfinite(c)):
                    out[n, i, j] = np.nan
                    continue
                r0, c0, r1, c1, fr, fc = _corner(height, width, r, c)
                top, bottom = rows[index[r0]], rows[index[r1]]
                out[n, i, j] = _blend(top[c0], top[c1], bottom[c0], bottom[c1], fr, fc)
    return out


@_loop
def smoothed_bilinear_grids(image, weights, affine, out):  # pragma: no cover - compiled
    """:func:`bilinear_grids` of ``image`` smoothed by a symmetric kernel along each axis,
    the smoothing computed only where the grids read.

    The smoothing is ``scipy.ndimage.correlate1d``'s of such a kernel with
    ``mode="nearest"``, down the columns and then along the rows, in its order of sums (the
    centre, then each pair from the farthest in): ``gaussian_filter(image, sigma,
    mode="nearest")`` where read (bit for bit where neither compiler fuses a multiply-add).
    Grids reading a few pixels of a large image (a face shrunk many times) cost those pixels'
    smoothing, not the image's.

    Parameters
    ----------
    image : (H, W) float ndarray
    weights : (R + 1,) float64 ndarray
        ``weights[j]`` weighs the pixels ``j`` away.
    affine : (n, 2, 3) float64 ndarray
    out : (n, h, w) float64 ndarray

    Returns
    -------
    (n, h, w) ndarray
        ``out``.
    """
    height, width = image.shape
    reach = len(weights) - 1
    needed = np.zeros((height, width), dtype=np.bool_)
    low = np.full(height, width)  # each row's first and last pixel read
    high = np.full(height, -1)
    for n in range(out.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                r, c = _point(affine[n], i, j)
                if not (np.isfinite(r) and np.isfinite(c)):
                    continue  # NaN, reading nothing
                r0, c0, r1, c1, fr, fc = _corner(height, width, r, c)
                needed[r0, c0] = needed[r0, c1] = needed[r1, c0] = needed[r1, c1] = True
                for read in (r0, r1):
                    low[read] = min(low[read], c0)
                    high[read] = max(high[read], c1)
    index = np.full(height, -1)  # the rows read, numbered: only they are smoothed and kept
    count = 0
    for r in range(height):
        if high[r] >= 0:
            index[r] = count
            count += 1
    down = np.empty((count, width))  # smoothed down the columns
    smoothed = np.empty((count, width))  # and then along the rows, where read
    for r in range(height):
        if high[r] < 0:
            continue
        kept = index[r]
        start, stop = max(low[r] - reach, 0), min(high[r] + reach, width - 1) + 1
        for c in range(start, stop):
            down[kept, c] = image[r, c] * weights[0]
        for k in range(reach, 0, -1):  # a row at a time: the inner loop reads along memory
            above, below = max(r - k, 0), min(r + k, height - 1)
            for c in range(start, stop):
                down[kept, c] += (image[above, c] + image[below, c]) * weights[k]
        for c in range(low[r], high[r] + 1):
            if needed[r, c]:
                total = down[kept, c] * weights[0]
                for k in range(reach, 0, -1):
                    left, right = max(c - k, 0), min(c + k, width - 1)
                    total += (down[kept, left] + down[kept, right]) * weights[k]
                smoothed[kept, c] = total
    return _read_grids(smoothed, index, height, width, affine, out)


@_loop
def ranks_in_order(rows, order, out, standardise):  # pragma: no cover - compiled
    """Each row's ranks from 1 (``scipy.stats.rankdata(method="average")``): a run of equal
    values shares the mean of its ranks.

    Parameters
    ----------
    rows : (n, d) ndarray
    order : (n, d) int ndarray
        ``np.argsort(rows, axis=1)``.
    out : (n, d) float64 ndarray
    standardise : bool
        Each row of ranks made zero-mean (their mean is ``(d + 1) / 2``, ties or not) and of
        unit norm (all zero when every value ties).

    Returns
    -------
    (n, d) ndarray
        ``out``.
    """
    n, d = rows.shape
    middle = (d + 1) / 2
    for k in range(n):
        first = 0
        squares = 0.0
        while first < d:
            last = first
            value = rows[k, order[k, first]]
            while last + 1 < d and rows[k, order[k, last + 1]] == value:
                last += 1
            rank = (first + last) / 2 + 1
            if standardise:
                rank -= middle
                squares += rank * rank * (last - first + 1)
            for position in range(first, last + 1):
                out[k, order[k, position]] = rank
            first = last + 1
        if standardise:
            scale = 1.0 / np.sqrt(squares) if squares > 0.0 else 0.0
            for j in range(d):
                out[k, j] *= scale
    return out


@_loop
def log_distance_pixels(
    products, flat, shifts, bounds, mean_norms, inverse_variances, floor, out
):  # pragma: no cover - compiled; tested through callers
    """Each window's ``log`` DFFS and DIFS to ``S`` spaces from its projections
    (:func:`~eigenvision.faces.decision.log_distance_maps`).

    With ``z = u . x - shifts`` for each component ``u``, ``DFFS_s = 1 - 2 m_s . x +
    mean_norms[s] - sum z^2`` and ``DIFS_s = sum z^2 inverse_variances``, floored at
    ``floor`` before the log.

    Parameters
    ----------
    products : (t, H, W) float64 ndarray
        ``u . x`` of the standardised window ``x`` for every space's components, stacked,
        then each space's mean ``m_s``.
    flat : (H, W) bool ndarray
        Windows without contrast: DFFS ``inf``, DIFS the floor.
    shifts : (t - S,) float64 ndarray
        ``u . m_s`` of each component and its space's mean.
    bounds : (S + 1,) int ndarray
        Space ``s`` holds the components ``bounds[s]:bounds[s + 1]``.
    mean_norms : (S,) float64 ndarray
        ``m_s . m_s``.
    inverse_variances : (t - S,) float64 ndarray
    floor : float
    out : (2 S, H, W) float64 ndarray

    Returns
    -------
    (2 S, H, W) ndarray
        ``out``: ``[log dffs_1, log difs_1, ...]``.
    """
    n_spaces = len(mean_norms)
    means_from = bounds[n_spaces]
    height, width = flat.shape
    energy = np.empty(width)
    difs = np.empty(width)
    log_floor = np.log(floor)
    for i in range(height):  # a row at a time: the inner loops run along contiguous memory
        for s in range(n_spaces):
            energy[:] = 0.0
            difs[:] = 0.0
            for k in range(bounds[s], bounds[s + 1]):
                for j in range(width):
                    z = products[k, i, j] - shifts[k]
                    energy[j] += z * z
                    difs[j] += z * z * inverse_variances[k]
            for j in range(width):
                if flat[i, j]:
                    out[2 * s, i, j] = np.inf
                    out[2 * s + 1, i, j] = log_floor
                else:
                    dffs = 1.0 - 2.0 * products[means_from + s, i, j] + mean_norms[s] - energy[j]
                    out[2 * s, i, j] = np.log(max(dffs, floor))
                    out[2 * s + 1, i, j] = np.log(max(difs[j], floor))
    return out


@_loop
def grid_inverse_norms(image, h, w, stride, min_norm):  # pragma: no cover - compiled
    """``1 / ||x - mean(x)||`` of the ``h x w`` windows ``x`` of ``image`` whose top-left
    pixels lie on a ``stride`` grid, and which are flat.

    From integral images of the pixels and their squares (summed-area tables, Crow 1984):
    four reads per window for each sum, whatever its size.

    Parameters
    ----------
    image : (H, W) float64 ndarray
    h, w : int
    stride : int
    min_norm : float
        Windows of norm at most this are flat (inverse 0).

    Returns
    -------
    inverse : ((H - h) // stride + 1, (W - w) // stride + 1) float64 array
    flat : bool array of the same shape
    """
    height, width = image.shape
    sums = np.zeros((height + 1, width + 1))
    squares = np.zeros((height + 1, width + 1))
    for i in range(height):
        run = 0.0
        run_squares = 0.0
        for j in range(width):
            value = image[i, j]
            run += value
            run_squares += value * value
            sums[i + 1, j + 1] = sums[i, j + 1] + run
            squares[i + 1, j + 1] = squares[i, j + 1] + run_squares
    rows, cols = (height - h) // stride + 1, (width - w) // stride + 1
    inverse = np.empty((rows, cols))
    flat = np.empty((rows, cols), dtype=np.bool_)
    n_pixels = h * w
    for r in range(rows):
        top, bottom = r * stride, r * stride + h
        for c in range(cols):
            left, right = c * stride, c * stride + w
            total = sums[bottom, right] - sums[top, right] - sums[bottom, left] + sums[top, left]
            total_squares = (
                squares[bottom, right]
                - squares[top, right]
                - squares[bottom, left]
                + squares[top, left]
            )
            norm = np.sqrt(max(total_squares - total * total / n_pixels, 0.0))
            flat[r, c] = norm <= min_norm
            inverse[r, c] = 0.0 if flat[r, c] else 1.0 / norm
    return inverse, flat


@_loop
def best_in_cells(
    image, weights, bias, stride, rows, cols, min_norm, valid
):  # pragma: no cover - compiled; tested through callers
    """Each grid survivor moved to the window of its ``stride x stride`` cell that the linear
    test ``weights . x~ + bias`` scores highest (``x~``: the window zero-mean, of unit norm).

    Parameters
    ----------
    image : (H, W) float64 ndarray
    weights : (h, w) float64 ndarray
        Zero-mean.
    bias : float
    stride : int
    rows, cols : (n,) int ndarray
        The survivors' grid cells: a cell's windows start at ``stride`` times them plus
        ``0 .. stride - 1``, clipped to the last window of ``image``.
    min_norm : float
        Windows of norm at most this are flat: score ``-inf``.
    valid : (H - h + 1, W - w + 1) bool ndarray
        The windows allowed (others ``-inf``); empty: all.

    Returns
    -------
    at_rows, at_cols : (n,) int arrays
        The best windows' top-left pixels (the first of equal scores, row-major in the cell).
    linear : (n,) float64 array
    standardised : (n, h, w) float64 array
        The best windows, zero-mean and of unit norm (zero when flat).
    """
    h, w = weights.shape
    last_row, last_col = image.shape[0] - h, image.shape[1] - w
    n_pixels = h * w
    n = len(rows)
    at_rows = np.empty(n, dtype=np.int64)
    at_cols = np.empty(n, dtype=np.int64)
    linear = np.empty(n)
    standardised = np.empty((n, h, w))
    for index in range(n):
        best = -np.inf
        best_row = min(rows[index] * stride, last_row)
        best_col = min(cols[index] * stride, last_col)
        for a in range(stride):
            row = min(rows[index] * stride + a, last_row)
            for b in range(stride):
                col = min(cols[index] * stride + b, last_col)
                if valid.size and not valid[row, col]:
                    continue
                total = 0.0
                total_squares = 0.0
                product = 0.0
                for i in range(h):
                    for j in range(w):
                        value = image[row + i, col + j]
                        total += value
                        total_squares += value * value
                        product += weights[i, j] * value
                norm = np.sqrt(max(total_squares - total * total / n_pixels, 0.0))
                if norm <= min_norm:
                    continue
                score = product / norm + bias
                if score > best:
                    best, best_row, best_col = score, row, col
        at_rows[index], at_cols[index], linear[index] = best_row, best_col, best
        mean = 0.0
        for i in range(h):
            for j in range(w):
                mean += image[best_row + i, best_col + j]
        mean /= n_pixels
        squares = 0.0
        for i in range(h):
            for j in range(w):
                centred = image[best_row + i, best_col + j] - mean
                standardised[index, i, j] = centred
                squares += centred * centred
        scale = 1.0 / np.sqrt(squares) if np.sqrt(squares) > 1e-12 else 0.0
        for i in range(h):
            for j in range(w):
                standardised[index, i, j] *= scale
    return at_rows, at_cols, linear, standardised


@_loop
def hog_cells(images, cell, cosines, sines, root, out):  # pragma: no cover - compiled
    """Sums of the gradient magnitudes of each cell of each image by unsigned orientation: the
    cells of histograms of oriented gradients (Dalal & Triggs 2005) before their mean.

    Central differences (zero on the border rows and columns); each pixel counted in the bin
    ``b`` with ``edge_b <= angle < edge_(b+1)``, the angle in ``[0, 180)`` degrees. The
    angle is compared with each edge by the sign of a cross product, with no arctangent:
    the pixels whose angle lies within 1e-9 radians of an edge (other than 0 and 90
    degrees, which are exact) are left out and returned, to be binned by the caller as its
    arctangent bins them. The pixels past the last whole cell are left out.

    Parameters
    ----------
    images : (n, H, W) float ndarray
    cell : int
        Cell side, pixels.
    cosines, sines : (bins,) float64 ndarray
        Of the bins' lower edges, from 0 degrees.
    root : bool
        Square roots of the grey levels first (scikit-image's ``transform_sqrt``).
    out : (n, H // cell, W // cell, bins) float64 ndarray
        Zeroed here.

    Returns
    -------
    out : ndarray
    doubtful : (m, 5) float64 ndarray
        The pixels left out: image, row, column, gradient down and across.
    """
    n, height, width = images.shape
    rows, cols, bins = out.shape[1], out.shape[2], out.shape[3]
    right_angle = 0  # the bin of 90 degrees: the edges at most 90 degrees, but the first
    for b in range(1, bins):
        right_angle += cosines[b] >= 0.0
    levels = np.empty((height, width))
    doubtful = np.empty((64, 5))
    count = 0
    for k in range(n):
        for i in range(height):
            for j in range(width):
                value = np.float64(images[k, i, j])
                levels[i, j] = np.sqrt(value) if root else value
        out[k] = 0.0
        for i in range(rows * cell):
            for j in range(cols * cell):
                g_row = 0.0
                g_col = 0.0
                if 0 < i < height - 1:
                    g_row = levels[i + 1, j] - levels[i - 1, j]
                if 0 < j < width - 1:
                    g_col = levels[i, j + 1] - levels[i, j - 1]
                magnitude = np.sqrt(g_row * g_row + g_col * g_col)
                if magnitude == 0.0:
                    continue
                if g_row == 0.0:  # 0 or 180 degrees
                    which = 0
                elif g_col == 0.0:  # 90 degrees
                    which = right_angle
                else:
                    # the direction turned into [0, 180) degrees; branch-free (a pixel's bin
                    # is unpredictable): the edges its angle reaches (angle >= edge where
                    # sin(angle - edge) >= 0), and how near the nearest edge is (the first
                    # edge, 0 and 180 degrees, is as near as the gradient is down)
                    down, across = (g_row, g_col) if g_row > 0 else (-g_row, -g_col)
                    which = 0
                    nearest = down
                    for b in range(1, bins):
                        cross = down * cosines[b] - across * sines[b]
                        which += cross >= 0.0
                        nearest = min(nearest, abs(cross))
                    if nearest <= 1e-9 * magnitude:
                        if count == len(doubtful):
                            grown = np.empty((2 * count, 5))
                            grown[:count] = doubtful
                            doubtful = grown
                        doubtful[count, 0] = k
                        doubtful[count, 1] = i
                        doubtful[count, 2] = j
                        doubtful[count, 3] = g_row
                        doubtful[count, 4] = g_col
                        count += 1
                        continue
                out[k, i // cell, j // cell, which] += magnitude
    return out, doubtful[:count]


@_loop
def hog_blocks(cells, out):  # pragma: no cover - compiled
    """Blocks of 2 x 2 cells normalised by L2-Hys (Dalal & Triggs 2005), as scikit-image's
    ``hog`` orders and normalises them (``eps`` 1e-5, clipped at 0.2, normalised again).

    Parameters
    ----------
    cells : (n, rows, cols, bins) float64 ndarray
        The cells' histograms (:func:`hog_cells`, each divided by its pixels).
    out : (n, (rows - 1) * (cols - 1) * 4 * bins) float64 ndarray

    Returns
    -------
    ndarray
        ``out``.
    """
    n, rows, cols, bins = cells.shape
    eps_squared = 1e-5 * 1e-5
    block = np.empty(4 * bins)
    for k in range(n):
        at = 0
        for r in range(rows - 1):
            for c in range(cols - 1):
                for d in range(4):
                    for b in range(bins):
                        block[d * bins + b] = cells[k, r + d // 2, c + d % 2, b]
                total = 0.0
                for v in range(4 * bins):
                    total += block[v] * block[v]
                scale = 1.0 / np.sqrt(total + eps_squared)
                total = 0.0
                for v in range(4 * bins):
                    block[v] = min(block[v] * scale, 0.2)
                    total += block[v] * block[v]
                scale = 1.0 / np.sqrt(total + eps_squared)
                for v in range(4 * bins):
                    out[k, at + v] = block[v] * scale
                at += 4 * bins
    return out
