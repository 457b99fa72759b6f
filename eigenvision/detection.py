"""Distance-from-feature-space maps over whole images, and the one multi-scale search.

For every window ``x`` of the eigenspace's image shape ``(h, w)`` the map
holds ``DFFS(x) = ||x - m||^2 - sum_i (u_i . (x - m))^2`` (Moghaddam &
Pentland 1997). All window projections come from FFT cross-correlations that
share one transform of the image; window energies and sums come from
integral images. Nothing loops over windows.

:func:`detect` searches these maps over an image pyramid with the one
multi-scale search of the package (:mod:`eigenvision.search`, whose names
this module also gives).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from scipy import fft, ndimage

from . import _compiled  # numba's loops: numba imported at their first call
from ._base import BoundedCache, check_fitted
from ._errors import refuse_complex
from ._linalg import check_magnitude
from ._parallel import MAP_PARALLEL_PIXELS as _PARALLEL_PIXELS
from ._parallel import n_threads, run_parallel
from ._spec import Param, check_arguments
from .search import (
    Detection,
    box_iou,
    kept_indices,
    multiscale_minima,
    pyramid_scales,
    suppress,
)

__all__ = [
    "dffs_map",
    "difs_map",
    "likelihood_map",
    "window_maps",
    "WindowMaps",
    "linear_score_map",
    "standardized_correlations",
    "detect",
    "Detection",
    "multiscale_minima",
    "suppress",
    "kept_indices",
    "pyramid_scales",
    "box_iou",
]

_MODES = ("valid", "same")
_NORMALIZATIONS = ("none", "window")
# The templates' spectra the process keeps, least recently used out first, whatever the models:
# a k = 20 float64 space's spectra at 1024^2 take 176 MB, and recomputing them costs as much as
# the map itself. Only spectra asked for a second time are kept: a face finder asks for many
# per photo, seldom again, and one cache per eigenspace held gigabytes (docs/architecture.md,
# "Why the fast paths").
_SPECTRUM_CACHE_BYTES = 256 << 20
# Maps too small for threads correlate every template in one batched transform per axis:
# per-call overhead is most of a small map's time. Alone, DFFS maps of 20 components (26 x 22
# and 20 x 32 windows) take 0.6-0.8x the time of one template at a time at 40-72 pixels a side,
# about as long at 96-160. ``benchmarks/bench_batched_maps.py`` (12 test photos, two runs):
# ``FaceFinder.place`` (two locates) 0.79x and 0.87x, ``find`` 0.97x and 0.99x.
_BATCHED_PIXELS = _PARALLEL_PIXELS
_SPECTRA = BoundedCache(_SPECTRUM_CACHE_BYTES, min_requests=2)
if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork
    os.register_at_fork(after_in_child=_SPECTRA.after_fork)


@dataclass(frozen=True)
class WindowMaps:
    """Per-window quantities of an eigenspace over an image (``window_maps``'s result).

    Attributes
    ----------
    codes : (k, H', W') ndarray
        ``z_i = u_i . (x - m)`` for every window (of the normalised window
        with ``normalize="window"``).
    residual_energy : (H', W') ndarray
        ``||x - m||^2`` for every window.
    """

    codes: np.ndarray
    residual_energy: np.ndarray

    @property
    def dffs(self) -> np.ndarray:
        """``residual_energy - sum_i codes_i^2``, clipped at 0: the DFFS map, (H', W')."""
        out = self.residual_energy - np.einsum("kij,kij->ij", self.codes, self.codes)
        return np.maximum(out, 0, out=out)  # clip round-off below zero


def _check(image, space):
    check_fitted(space)
    shape = getattr(space, "image_shape_", None)
    if shape is None:
        raise ValueError(
            "the eigenspace was fitted on flattened data and has no window shape; "
            "fit it on an image stack (n, h, w)"
        )
    image = np.asarray(image)
    refuse_complex(image, "the image")
    if image.ndim == 3:
        raise ValueError(
            f"expected a grey (H, W) image, got shape {image.shape}; convert it with to_gray(image)"
        )
    if image.ndim != 2:
        raise ValueError(f"expected a grey (H, W) image, got shape {image.shape}")
    if image.dtype not in (np.float32, np.float64):
        image = image.astype(np.float64)
    if not np.all(np.isfinite(image)):
        raise ValueError("the image contains NaN or infinite values; fill or mask them first")
    check_magnitude(float(np.abs(image).max()), image.dtype, image.shape, "the image")
    h, w = shape
    if image.shape[0] < h or image.shape[1] < w:
        raise ValueError(
            f"the image {image.shape} is smaller than the eigenspace's window {shape}; "
            "use a larger image or a smaller eigenspace"
        )
    return image, (h, w)


def _box_sum(values, h, w):
    """Sums of ``values`` over every h x w window (valid positions), in float64.

    Running sums down the rows (:func:`_running_sum_down`, faster than numpy's
    ``cumsum`` along the first axis), differenced in place; then scipy's
    running-sum ``uniform_filter1d`` along the rows, in place (faster than
    ``cumsum`` and a difference, exact to round-off). One float64 array
    throughout: fresh memory costs page faults, as much as the sums themselves.
    Returns a view into it.
    """
    running = values.astype(np.float64)
    _running_sum_down(running)
    _difference_in_place(running, h, axis=0)
    columns = running[h - 1 :]
    ndimage.uniform_filter1d(columns, w, axis=1, output=columns, mode="constant")
    sums = columns[:, w // 2 : w // 2 + columns.shape[1] - w + 1]  # window means
    sums *= w
    return sums


def _running_sum_down(values):
    """``values[i] += values[i - 1]`` down the rows, in place.

    Blocks of about sqrt(n) rows take their own running sums side by side,
    then each block adds the total before it: 2 sqrt(n) numpy calls instead of
    n (fewer Python steps holding the GIL while other threads wait for it).
    """
    n = len(values)
    size = max(1, int(np.sqrt(n)))
    blocks = values[: n // size * size].reshape(n // size, size, *values.shape[1:])
    for row in range(1, size):
        blocks[:, row] += blocks[:, row - 1]
    for block in range(1, len(blocks)):
        blocks[block] += blocks[block - 1, -1]
    for row in range(max(len(blocks) * size, 1), n):
        values[row] += values[row - 1]


def _difference_in_place(running, size, axis):
    """``running[i] -= running[i - size]`` for ``i >= size`` along ``axis``, without a copy.

    Blocks of ``size`` are updated from the far end, so each reads entries
    not yet changed (numpy would copy an overlapping operand).
    """
    view = np.moveaxis(running, axis, 0)
    for end in range(len(view), size, -size):
        start = max(end - size, size)
        view[start:end] -= view[start - size : end - size]


def _template_spectra(templates, fft_shape):
    """Conjugated spectra of the templates at ``fft_shape``, kept from their second request
    on (by the templates' bytes: a refit never reads a stale entry; ``_SPECTRA``)."""

    def compute():
        # rfft2 by axes, the rows first while only the template's h rows are non-zero (the
        # zero rows' transforms are zero): the same numbers as scipy's rfft2 bit for bit, faster.
        rows = fft.rfft(templates, n=fft_shape[1], axis=-1)
        spectra = fft.fft(rows, n=fft_shape[0], axis=-2, overwrite_x=True)
        return np.conj(spectra, out=spectra)

    key = (templates.tobytes(), templates.dtype.str, templates.shape, tuple(fft_shape))
    return _SPECTRA.get(key, compute)


def _correlator(image, templates, offsets):
    """Valid cross-correlations of ``image`` with each template, one image transform shared.

    Parameters
    ----------
    image : (H, W) ndarray
    templates : (t, h, w) ndarray
    offsets : (t,) sequence of float
        Added to every value of map ``t`` (through the spectrum's DC term: free).

    Returns
    -------
    callable
        ``correlation(t)`` gives ``out[i, j] = offsets[t] + sum_ab image[i + a, j + b] *
        templates[t, a, b]``, ``(H - h + 1, W - w + 1)``: a view into a fresh
        array the caller may overwrite. A circular correlation of size >= the
        image has no wrap-around at valid positions, so the transform size is
        ``next_fast_len`` of the image's. Safe to call from several threads at
        once: each multiplies spectra in a buffer of its own, reused across its
        calls (fresh memory costs page faults: measured 2x the whole map).
        Images of fewer than ``_BATCHED_PIXELS`` are correlated with every
        template at the first call, in one batched transform of each axis
        (the same numbers); each ``t`` may then be asked for once.
    """
    (H, W), (h, w) = image.shape, templates.shape[1:]
    fft_shape = (fft.next_fast_len(H, real=True), fft.next_fast_len(W, real=True))
    spectra = _template_spectra(np.ascontiguousarray(templates), fft_shape)
    image_spectrum = fft.rfft2(image, s=fft_shape, workers=1)
    dc_offsets = np.asarray(offsets, dtype=np.float64) * (fft_shape[0] * fft_shape[1])
    if image.size < _BATCHED_PIXELS:
        batch, lock = [], threading.Lock()

        def batched(index):
            with lock:  # made once, whichever thread asks first
                if not batch:
                    product = np.multiply(image_spectrum, spectra)
                    product[:, 0, 0] += dc_offsets
                    columns = fft.ifft(product, axis=1, workers=1, overwrite_x=True)
                    rows = fft.irfft(columns[:, : H - h + 1], n=fft_shape[1], axis=2, workers=1)
                    batch.append(rows[:, :, : W - w + 1])
            return batch[0][index]

        return batched
    local = threading.local()

    def correlation(index):
        product = getattr(local, "product", None)
        if product is None:
            product = local.product = np.empty_like(image_spectrum)
        np.multiply(image_spectrum, spectra[index], out=product)
        product[0, 0] += dc_offsets[index]
        # irfft2 by axes, the second transform only over the valid rows (faster on large maps).
        columns = fft.ifft(product, axis=0, workers=1, overwrite_x=True)  # in place
        rows = fft.irfft(columns[: H - h + 1], n=fft_shape[1], axis=1, workers=1)
        return rows[:, : W - w + 1]

    return correlation


def window_maps(image, space, *, normalize="none", min_contrast=1e-3) -> WindowMaps:
    """Codes and residual energies of every window (shared by the DFFS/DIFS/likelihood maps).

    Parameters
    ----------
    image : (H, W) ndarray
    space : Eigenspace
        Fitted on an image stack of window shape ``(h, w)``.
    normalize : {"none", "window"}
        ``"window"`` projects each window after making it zero-mean and
        unit-norm (``x~ = (x - mean(x)) / ||x - mean(x)||``; a flat window
        becomes zero), as the eigenspace should then have been trained on
        such windows. Still exact: ``u . x~ = (u . x - mean(x) sum(u)) / s``.
        A flat window has no pattern: its DFFS is ``+inf``.
    min_contrast : float, default 1e-3
        With ``normalize="window"``: windows whose pixel standard deviation
        is at most this are flat (1e-3 is a quarter of one 8-bit grey level
        for images in [0, 1]). Dividing by a smaller contrast would only
        amplify round-off.

    Returns
    -------
    WindowMaps
        ``codes`` (k, H-h+1, W-w+1) and ``residual_energy`` (H-h+1, W-w+1).
    """
    image, _ = _check(image, space)
    maps = _projections(image, space, normalize, min_contrast)
    energy, k = maps.energy, space.n_components_
    codes = np.empty((k, *energy.shape), dtype=image.dtype)

    def fill(indices):
        out = np.empty(energy.shape)
        for index in indices:
            if index == k:  # one thread only
                energy[...] += maps.mean_term(out)
            else:
                np.copyto(codes[index], maps.code(index, out), casting="same_kind")

    _over_maps(image, k + 1, fill)
    if maps.flat is not None:
        codes[:, maps.flat] = 0.0
        energy[maps.flat] = np.inf
    return WindowMaps(codes, energy.astype(image.dtype, copy=False))


def standardized_correlations(image, templates, *, min_contrast=1e-3):
    """``u . x~`` of every zero-mean, unit-norm window ``x~`` of ``image``, for each template.

    One transform of the image and one pair of box sums serve every template
    (several spaces' components and means stacked: the feature and non-feature
    spaces of a feature's decision, :func:`~eigenvision.faces.decision.log_distance_maps`).

    Parameters
    ----------
    image : (H, W) ndarray
    templates : (t, h, w) ndarray
        Only their zero-mean part counts (``x~`` is zero-mean).
    min_contrast : float, default 1e-3
        Windows whose pixel standard deviation is at most this are flat.

    Returns
    -------
    products : (t, H - h + 1, W - w + 1) ndarray of float64
        Zero on flat windows.
    flat : (H - h + 1, W - w + 1) ndarray of bool
    """
    templates = np.asarray(templates, dtype=np.float64)
    if templates.ndim != 3 or not np.all(np.isfinite(templates)):
        raise ValueError(f"templates must be a finite (t, h, w) array, got {templates.shape}")
    image = _standardizable(image, templates.shape[1:])
    n, (h, w) = len(templates), templates.shape[1:]
    n_pixels = h * w
    # a centred image keeps the FFT's error small relative to the window contrast
    shifted = image - float(image.mean())
    sums, squares = _box_sum(shifted, h, w), _box_sum(np.square(shifted), h, w)
    inverse, flat = inverse_norms(sums, squares, n_pixels, min_contrast)
    # u . (x - mean(x)) = (u - mean(u)) . x: zero-mean templates standardise for free
    correlation = _correlator(
        shifted, templates - templates.mean(axis=(1, 2), keepdims=True), np.zeros(n)
    )
    products = np.empty((n, *inverse.shape))

    def fill(indices):
        for index in indices:
            np.multiply(correlation(index), inverse, out=products[index])

    _over_maps(image, n, fill)
    return products, flat


def inverse_norms(sums, squares, n_pixels, min_contrast):
    """``1 / ||x - mean(x)||`` of windows from their sums and sums of squares, and which are flat.

    Parameters
    ----------
    sums, squares : ndarray
        Each window's ``sum(x)`` and ``sum(x^2)`` (any shape, the same); ``squares`` is
        overwritten.
    n_pixels : int
        Pixels of a window.
    min_contrast : float
        Windows whose pixel standard deviation is at most this are flat.

    Returns
    -------
    inverse : ndarray
        0 on flat windows.
    flat : ndarray of bool
    """
    scale = np.subtract(squares, sums**2 / n_pixels, out=squares)
    np.sqrt(np.maximum(scale, 0.0, out=scale), out=scale)  # ||x - mean(x)||
    flat = scale <= min_contrast * np.sqrt(n_pixels)
    inverse = np.divide(1.0, scale, out=scale, where=~flat)
    inverse[flat] = 0.0
    return inverse, flat


def _standardizable(image, window):
    """``image`` as float64, checked to be a real 2-D image at least ``window = (h, w)``."""
    image = np.asarray(image)
    refuse_complex(image, "image")
    if image.ndim != 2 or image.shape[0] < window[0] or image.shape[1] < window[1]:
        raise ValueError(
            f"the image must be 2-D and at least the window {tuple(window)}, got {image.shape}"
        )
    return image.astype(np.float64, copy=False)


def _over_maps(image, n_maps, task):
    """Results of ``task(indices)`` over round-robin shares of ``range(n_maps)``, in parallel
    threads when the image is large enough to pay for them."""
    threads = min(n_threads(), n_maps) if image.size >= _PARALLEL_PIXELS else 1
    return run_parallel(
        functools.partial(task, range(start, n_maps, threads)) for start in range(threads)
    )


class _Projections(NamedTuple):
    """What every window's DFFS, codes and energy are made of (:func:`_projections`)."""

    energy: np.ndarray
    """``||x - m||^2 + 2 m . x`` (normalised ``x`` with ``"window"``), float64."""
    code: Callable[[int, np.ndarray], np.ndarray]
    """``code(i, out)``: the map ``z_i`` (``out``, a float64 array of the map's shape, or a
    fresh array)."""
    mean_term: Callable[[np.ndarray], np.ndarray]
    """``mean_term(out)``: ``-2 m . x`` into ``out``; ``energy + mean_term`` is ``||x - m||^2``."""
    flat: np.ndarray | None
    """Flat windows (no pattern, infinitely far: set to ``+inf`` by the caller) with
    ``"window"``, else None."""


def _projections(image, space, normalize, min_contrast):
    """The :class:`_Projections` of every window of ``image`` (which has passed :func:`_check`).

    ``code`` and ``mean_term`` may be called from several threads at once:
    the ``k + 1`` correlations are the bulk of the work. Everything else is
    computed in place in as few passes as possible: fresh full-size arrays
    cost page faults comparable to the FFTs.
    """
    if normalize not in _NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {_NORMALIZATIONS}, got {normalize!r}")
    h, w = space.image_shape_
    n_pixels = h * w
    components = space.components_.reshape((len(space.components_), h, w)).astype(np.float64)
    mean = space.mean_.reshape(h, w).astype(np.float64)
    templates = np.concatenate([components, mean[None]])  # the mean's map is the last
    mean_shift = components.reshape(len(components), n_pixels) @ mean.ravel()  # u_i . m
    mean_norm = float(np.sum(mean**2))
    # Correlating a centred image keeps the FFT's absolute error small relative to the
    # window contrast (the DC level would otherwise dominate).
    level = float(image.mean())
    shifted = image - level
    if normalize == "window":
        # u . (x - mean(x)) = (u - mean(u)) . x: zero-mean templates normalise for free.
        templates -= templates.mean(axis=(1, 2), keepdims=True)
        offsets = np.zeros(len(templates))
    else:
        # u_i . (x - m) = u_i . (x - level) + level sum(u_i) - u_i . m: a constant per map.
        offsets = level * templates.reshape(len(templates), -1).sum(axis=1)
        mean_offset, offsets[-1] = offsets[-1], 0.0  # added in float64 below
        offsets[:-1] -= mean_shift
    (correlation, sums), squares = _in_parallel(
        image,
        lambda: (
            _correlator(shifted, templates.astype(image.dtype), offsets),
            _box_sum(shifted, h, w),
        ),
        lambda: _box_sum(np.square(shifted, dtype=np.float64), h, w),
    )
    work = np.empty(sums.shape)
    if normalize == "window":
        # ||x - mean(x)|| = sqrt(squares - sums^2 / n), kept in `squares`
        scale = np.subtract(
            squares, np.divide(np.square(sums, out=work), n_pixels, out=work), out=squares
        )
        np.sqrt(np.maximum(scale, 0.0, out=scale), out=scale)
        flat = scale <= min_contrast * np.sqrt(n_pixels)
        inverse = np.divide(1.0, scale, out=scale, where=~flat)
        inverse[flat] = 0.0
        # ||x~ - m||^2 = 1 - 2 m . x~ + ||m||^2, x~ = (x - mean(x)) / ||x - mean(x)||
        energy = sums
        energy.fill(1.0 + mean_norm)

        def mean_term(out):
            return np.multiply(np.multiply(correlation(-1), inverse, out=out), -2.0, out=out)

        def code(index, out):
            z = np.multiply(correlation(index), inverse, out=out)
            z -= mean_shift[index]
            return z
    else:
        flat = None
        # ||x - m||^2 = sum (x - level)^2 + 2 level sum(x - level) + n level^2 - 2 m . x + ||m||^2
        energy = squares
        energy += np.multiply(sums, 2 * level, out=work)
        energy += n_pixels * level**2 - 2 * mean_offset + mean_norm

        def mean_term(out):
            return np.multiply(correlation(-1), -2.0, out=out)

        def code(index, out):
            return correlation(index)

    return _Projections(energy, code, mean_term, flat)


def _in_parallel(image, *calls):
    """``run_parallel(calls)`` when the image is large enough to pay for threads, else in turn."""
    if image.size >= _PARALLEL_PIXELS:
        return run_parallel(calls)
    return [call() for call in calls]


def _finish(values, space, mode):
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
    if mode == "valid":
        return values
    h, w = space.image_shape_
    top, left = (h - 1) // 2, (w - 1) // 2
    pad = ((top, h - 1 - top), (left, w - 1 - left))
    return np.pad(values, pad, mode="constant", constant_values=np.nan)


def dffs_map(image, space, *, normalize="none", mode="valid", min_contrast=1e-3):
    """Distance from feature space of every window, by FFT.

    Parameters
    ----------
    image : (H, W) ndarray
    space : Eigenspace
        Fitted on ``(n, h, w)`` images.
    normalize : {"none", "window"}
        See :func:`window_maps`.
    mode : {"valid", "same"}
        ``"valid"``: one value per window position, ``(H - h + 1, W - w + 1)``,
        entry ``[i, j]`` for the window whose top-left pixel is ``(j, i)``.
        ``"same"``: ``(H, W)``, each value at its window's centre
        (``(h - 1) // 2`` rows and ``(w - 1) // 2`` columns in), NaN where no
        window fits.
    min_contrast : float, default 1e-3
        See :func:`window_maps`.

    Returns
    -------
    ndarray
        ``||x - m||^2 - sum_i (u_i . (x - m))^2 >= 0``; dtype of the image
        (float32 stays float32).

    Notes
    -----
    Equals the brute-force sliding window ``space.dffs`` of every window
    (measured relative error 1e-14 in float64, 2e-7 in float32; tested to
    1e-9 and 1e-4), at the cost of one forward and ``k + 1`` inverse real
    FFTs of the image's size.

    References
    ----------
    B. Moghaddam and A. Pentland (1997), Probabilistic visual learning for
    object representation, IEEE TPAMI 19(7).
    """
    image, _ = _check(image, space)
    maps = _projections(image, space, normalize, min_contrast)
    k = space.n_components_

    def part(indices):
        total, out = np.zeros(maps.energy.shape), np.empty(maps.energy.shape)
        for index in indices:
            if index == k:
                total += maps.mean_term(out)
            else:
                z = maps.code(index, out)
                total -= np.square(z, out=z)
        return total

    dffs = maps.energy
    for term in _over_maps(image, k + 1, part):
        dffs += term
    np.maximum(dffs, 0.0, out=dffs)  # clip round-off below zero
    if maps.flat is not None:
        dffs[maps.flat] = np.inf
    return _finish(dffs.astype(image.dtype, copy=False), space, mode)


def linear_score_map(image, weights, bias=0.0, *, min_contrast=1e-3, stride=1):
    """A linear classifier's score ``w . x~ + b`` of every standardised window, by FFT.

    ``x~ = (x - mean(x)) / ||x - mean(x)||``, each window zero-mean and of unit
    norm, as :func:`dffs_map` with ``normalize="window"`` sees it: a linear
    discriminant of such windows, slid over the image at the cost of one
    correlation (a cascade's first test, Viola & Jones 2004, with one
    full-window feature).

    With ``stride`` s > 1 only the windows on an s-pixel grid are scored, at
    about 1 / s^2 of the cost past the image's own transform: the image and
    the weights are split into their s^2 polyphase components (every s-th
    pixel from each offset), whose correlations, summed in the Fourier
    domain, give the grid's scores (one inverse transform of 1 / s^2 the
    size); the windows' norms come from summed-area tables of the image.

    Parameters
    ----------
    image : (H, W) ndarray
    weights : (h, w) ndarray
        The classifier's weights on a window; only their zero-mean part
        counts (``x~`` is zero-mean).
    bias : float, default 0.0
    min_contrast : float, default 1e-3
        Windows whose pixel standard deviation is at most this are flat: no
        pattern, score ``-inf``.
    stride : int, default 1
        Pixels between the windows scored, in both directions.

    Returns
    -------
    ((H - h) // stride + 1, (W - w) // stride + 1) ndarray of float64
        Entry ``[i, j]`` for the window whose top-left pixel is
        ``(stride j, stride i)``.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or not np.all(np.isfinite(weights)):
        raise ValueError(f"weights must be a finite (h, w) array, got shape {weights.shape}")
    if not (isinstance(bias, Real) and np.isfinite(bias)):
        raise ValueError(f"bias must be a finite number, got {bias!r}")
    if isinstance(stride, bool) or not isinstance(stride, Integral) or stride < 1:
        raise ValueError(f"stride must be a positive int, got {stride!r}")
    if stride == 1:
        (scores,), flat = standardized_correlations(image, weights[None], min_contrast=min_contrast)
    else:
        scores, flat = _strided_correlation(image, weights, int(stride), min_contrast)
    scores += bias
    scores[flat] = -np.inf
    return scores


def _strided_correlation(image, weights, stride, min_contrast):
    """:func:`standardized_correlations` of one template at the windows of a ``stride`` grid.

    ``sum_ab I[s p + a, s q + b] T[a, b]`` is the sum over the s^2 offsets
    ``(a0, b0)`` of the correlations of ``I[a0::s, b0::s]`` with
    ``T[a0::s, b0::s]``: each offset's image and template transformed at
    1 / s^2 the size, their products summed, one inverse transform.
    """
    (h, w), s = weights.shape, stride
    image = _standardizable(image, (h, w))
    H, W = image.shape
    rows, cols = (H - h) // s + 1, (W - w) // s + 1
    shifted = image - float(image.mean())

    def phases(values, height, width):
        """``(s * s, height / s, width / s)``: ``values`` zero-padded, by polyphase offset."""
        padded = np.zeros((-(-height // s) * s, -(-width // s) * s))
        padded[: values.shape[0], : values.shape[1]] = values
        split = padded.reshape(padded.shape[0] // s, s, padded.shape[1] // s, s)
        return np.ascontiguousarray(split.transpose(1, 3, 0, 2)).reshape(s * s, *split.shape[::2])

    image_phases = phases(shifted, H, W)
    fft_shape = tuple(fft.next_fast_len(n, real=True) for n in image_phases.shape[1:])
    template = phases(weights - weights.mean(), h, w)
    spectra = _template_spectra(template, fft_shape)
    product = np.einsum("kij,kij->ij", fft.rfft2(image_phases, s=fft_shape, workers=1), spectra)
    correlation = fft.irfft2(product, s=fft_shape, workers=1)[:rows, :cols]
    inverse, flat = _compiled.grid_inverse_norms(shifted, h, w, s, min_contrast * np.sqrt(h * w))
    return np.multiply(correlation, inverse, out=correlation), flat


def _difs(codes, space):
    eigen = space.explained_variance_.astype(codes.dtype)
    return np.einsum("kij,k->ij", codes * codes, 1.0 / eigen)


def difs_map(image, space, *, normalize="none", mode="valid", min_contrast=1e-3):
    """Distance in feature space ``sum_i z_i^2 / lambda_i`` of every window.

    Parameters as :func:`dffs_map`; equals ``space.difs`` of every window.

    Parameters
    ----------
    image : (H, W) ndarray
    space : Eigenspace
    normalize, mode, min_contrast
        As :func:`dffs_map`.

    Returns
    -------
    ndarray
        ``(H - h + 1, W - w + 1)`` (``"valid"``) or ``(H, W)`` (``"same"``).
    """
    maps = window_maps(image, space, normalize=normalize, min_contrast=min_contrast)
    return _finish(_difs(maps.codes, space), space, mode)


def likelihood_map(image, space, *, normalize="none", mode="valid", min_contrast=1e-3):
    """Log-likelihood of every window; equals ``space.score_samples`` of every window.

    Parameters as :func:`dffs_map`.

    Parameters
    ----------
    image : (H, W) ndarray
    space : Eigenspace
    normalize, mode, min_contrast
        As :func:`dffs_map`.

    Returns
    -------
    ndarray
        ``(H - h + 1, W - w + 1)`` (``"valid"``) or ``(H, W)`` (``"same"``).
    """
    maps = window_maps(image, space, normalize=normalize, min_contrast=min_contrast)
    value = space.log_likelihood(_difs(maps.codes.astype(np.float64), space), maps.dffs)
    return _finish(value.astype(maps.codes.dtype, copy=False), space, mode)


def detect(
    image,
    space,
    *,
    scales=None,
    threshold=None,
    max_detections=10,
    min_distance=None,
    normalize="window",
    score="dffs",
    overlap=0.3,
    min_contrast=1e-3,
):
    """Find windows that look like the eigenspace's class at several scales.

    Parameters
    ----------
    image : (H, W) ndarray
    space : Eigenspace
        Fitted on ``(n, h, w)`` examples (with ``normalize="window"``,
        examples standardised the same way: zero mean, unit norm).
    scales : sequence of float, optional
        Window sizes as multiples of ``(h, w)``. Default: a geometric
        sequence by ``2**0.25`` from 1 up to the largest that fits.
    threshold : float, optional
        Keep detections with score below it.
    max_detections : int, default 10
    min_distance : int, optional
        Radius of the local-minimum search, in map pixels (default: a
        quarter of the window).
    normalize : {"window", "none"}, default "window"
        Photometric normalisation of each window (see :func:`window_maps`).
    score : {"dffs", "likelihood"}
    overlap : float, default 0.3
        Non-maximum suppression across scales: a detection overlapping a
        better one by more than this intersection-over-union is dropped.
    min_contrast : float, default 1e-3
        See :func:`window_maps`.

    Returns
    -------
    list of Detection
        Sorted by score, best first, in the input image's pixel coordinates.
    """
    check_arguments(
        "detect",
        score=(score, Param("choice", choices=("dffs", "likelihood"))),
        threshold=(threshold, Param("real", optional=True)),
        max_detections=(max_detections, Param("int", 1)),
        min_distance=(min_distance, Param("int", 1, optional=True)),
        overlap=(overlap, Param("real", 0, 1)),
        min_contrast=(min_contrast, Param("real", 0)),
    )
    image, window = _check(image, space)
    if scales is None:
        scales = pyramid_scales(image.shape, window)
    scales = np.asarray(scales, dtype=np.float64).ravel()
    if not np.all(np.isfinite(scales) & (scales > 0)):
        raise ValueError(f"scales must be positive finite numbers, got {scales.tolist()}")
    options = dict(normalize=normalize, min_contrast=min_contrast)
    if score == "dffs":

        def score_map(scaled):
            return dffs_map(scaled, space, **options)
    else:

        def score_map(scaled):
            return -likelihood_map(scaled, space, **options)

    found = multiscale_minima(
        image, score_map, window, scales, radius=min_distance, threshold=threshold
    )
    return suppress(found, max_count=max_detections, overlap=overlap)
