"""Every geometric step: resize, crop, warp, rotate, align on the eyes, move landmarks.

One resampler for each kind of step: Pillow's antialiased bilinear filter for
resizing (:func:`resize`), a bilinear similarity warp (scikit-image's
``warp(order=1, mode="edge")`` to round-off, in a compiled loop:
:func:`sample_grids`), smoothed first where it shrinks, for everything turned
or aligned (:func:`warp`).
Points are ``(x, y)`` pixels, origin top-left, pixel centres at integer
coordinates (scikit-image's convention).
"""

from __future__ import annotations

import functools
import os
from numbers import Integral, Real

import numpy as np
from PIL import Image
from scipy.ndimage import map_coordinates
from skimage.transform import SimilarityTransform
from skimage.transform import rescale as _skimage_rescale

from . import _compiled  # numba's loops: numba imported at their first call
from ._errors import refuse_complex
from ._linalg import check_magnitude
from ._parallel import n_threads, run_parallel

__all__ = [
    "MAX_SIDE",
    "DEFAULT_EYE_POSITIONS",
    "as_float_image",
    "check_shape",
    "resize",
    "rescale",
    "sample",
    "sample_grids",
    "crop",
    "eye_transform",
    "eye_matrices",
    "align",
    "warp",
    "warp_many",
    "rotated",
    "resize_points",
]

#: The largest image side any size parameter may ask for (a 16384^2 float32 image is 1 GiB).
MAX_SIDE = 16384

#: Where :func:`align` puts the eyes, as fractions of the output (x / W, y / H).
DEFAULT_EYE_POSITIONS = ((0.3, 0.4), (0.7, 0.4))


def as_float_image(image, *, allow_colour: bool = False, name: str = "image") -> np.ndarray:
    """An image as float (``uint8`` and other unsigned ints scaled to [0, 1]), checked.

    Parameters
    ----------
    image : array-like
    allow_colour : bool, default False
        Accept ``(H, W, 3)`` and ``(H, W, 4)`` as well as ``(H, W)``.
    name : str, default "image"
        How messages name it.

    Returns
    -------
    ndarray
        float32 or float64.

    Raises
    ------
    TypeError
        A file name, complex values, or no numbers.
    ValueError
        Another shape, empty, or non-finite values.
    """
    if isinstance(image, (str, bytes, os.PathLike)):
        raise TypeError(
            f"{name} is a file name ({image!r}), not an image: read it first, "
            "ev.load_image(path, as_gray=False)"
        )
    image = np.asarray(image)
    refuse_complex(image, name)
    if image.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of numbers, got an array of {image.dtype}")
    if image.dtype == np.uint8:
        image = image.astype(np.float32) / np.float32(255)
    elif image.dtype.kind == "u":  # 16- and 32-bit photos: their full range is [0, 1] too
        image = image.astype(np.float64) / np.iinfo(image.dtype).max
    elif image.dtype not in (np.float32, np.float64):
        image = image.astype(np.float64)
    if image.ndim == 3 and allow_colour and image.shape[2] in (3, 4):
        pass
    elif image.ndim != 2:
        expected = "(H, W) or (H, W, 3)" if allow_colour else "(H, W) grey"
        raise ValueError(
            f"{name} must be {expected}, got shape {image.shape}; "
            "convert colour images with to_gray(image) first"
        )
    if image.size == 0:
        raise ValueError(f"{name} is empty (shape {image.shape})")
    if not np.all(np.isfinite(image)):
        raise ValueError(f"{name} contains NaN or infinite values; clean or mask them first")
    largest = max(-float(image.min()), float(image.max()))  # no |image| copy: called per crop
    check_magnitude(largest, image.dtype, image.shape[:2], name)
    return image


def check_shape(shape, name: str = "shape") -> tuple[int, int]:
    """An output size ``(H, W)`` as two ints in ``[1, MAX_SIDE]``.

    Parameters
    ----------
    shape : (H, W)
    name : str
        The parameter's name, for the message.

    Returns
    -------
    (int, int)

    Examples
    --------
    >>> check_shape((64.0, 48))
    (64, 48)
    """
    try:
        height, width = (_whole(v) for v in shape)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be (H, W) whole numbers, got {shape!r}") from None
    if not (1 <= height <= MAX_SIDE and 1 <= width <= MAX_SIDE):
        raise ValueError(f"{name} must be (H, W) with sides in [1, {MAX_SIDE}], got {shape!r}")
    return height, width


def _whole(value) -> int:
    """``value`` as an int when it is a whole number (``64`` or ``64.0``, not ``1.5`` or True)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("a side is a number of pixels, not True or False")
    if isinstance(value, (Integral, np.integer)):
        return int(value)
    if isinstance(value, (Real, np.floating)) and float(value).is_integer():
        return int(value)
    raise ValueError(f"{value!r} is not a whole number")


def _resize_plane(image: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Resize one float ``(H, W)`` plane to ``shape = (H, W)``, antialiased bilinear.

    Pillow widens its kernel when shrinking, so downsampling averages instead
    of aliasing; the triangle kernel never overshoots. The dtype is kept.
    """
    height, width = check_shape(shape)
    out = Image.fromarray(np.asarray(image, dtype=np.float32), mode="F").resize(
        (int(width), int(height)), resample=Image.Resampling.BILINEAR
    )
    return np.array(out, dtype=image.dtype)  # a writable copy (Pillow's buffer is read-only)


def resize(image: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Resize to ``shape = (H, W)`` with an antialiased bilinear filter (Pillow's).

    Parameters
    ----------
    image : (H, W) or (H, W, C) ndarray
    shape : (H, W)

    Returns
    -------
    ndarray of shape ``shape`` (plus channels), float32 or float64 as the input.
    """
    image = as_float_image(image, allow_colour=True)
    height, width = check_shape(shape)
    if image.shape[:2] == (height, width):
        return image.copy()
    if image.ndim == 3:
        return np.stack([resize(image[..., c], shape) for c in range(image.shape[2])], axis=-1)
    return _resize_plane(image, (height, width))


def rescale(image: np.ndarray, scale: float) -> np.ndarray:
    """``image`` resized by ``scale``: bilinear, smoothed by a Gaussian where it shrinks.

    scikit-image's ``rescale`` (``order=1``, ``anti_aliasing=True``: the Gaussian's
    ``sigma = (1 / scale - 1) / 2``), the resampling the identity model's descriptors were
    trained with (:func:`resize` smooths with Pillow's triangle instead).

    Parameters
    ----------
    image : (H, W) ndarray
    scale : float
        Output pixels per input pixel along each side.

    Returns
    -------
    (round(H * scale), round(W * scale)) ndarray of float64
    """
    return _skimage_rescale(image, float(scale), order=1, anti_aliasing=True)


def sample(image: np.ndarray, rows, cols) -> np.ndarray:
    """Bilinear values of ``image`` at the points ``(rows, cols)``, its edge repeated beyond it.

    The sampling under every many-crop warp here (:func:`warp_many`), the finder's face
    windows (:func:`~eigenvision.faces.geometry.face_windows_at`) and the feature patches
    (:class:`~eigenvision.FeatureDetector`).

    Parameters
    ----------
    image : (H, W) ndarray
    rows, cols : ndarray
        The points' row (y) and column (x) coordinates, of one shape.

    Returns
    -------
    ndarray
        The shape of ``rows``; float64 for a float64 image.
    """
    return map_coordinates(image, [rows, cols], order=1, mode="nearest")


def sample_grids(image: np.ndarray, affine, shape) -> np.ndarray:
    """:func:`sample` on many affine grids of one shape: crops cut, turned and scaled at once.

    Grid ``n``'s point ``(i, j)`` lies at row ``affine[n, 0] @ (i, j, 1)`` and column
    ``affine[n, 1] @ (i, j, 1)`` of ``image``. Bilinear, edges repeated, as :func:`sample`
    (``scipy.ndimage.map_coordinates``, to round-off), in one compiled loop that makes no
    coordinate arrays (:mod:`eigenvision._compiled`; ``benchmarks/bench_face_windows.py``
    times the two), many grids shared between two threads.

    Parameters
    ----------
    image : (H, W) ndarray
    affine : (n, 2, 3) array-like
    shape : (h, w)
        Each grid's rows and columns.

    Returns
    -------
    (n, h, w) ndarray
        ``image``'s dtype when float (float64 otherwise); NaN where a point is not finite.
    """
    image = np.asarray(image)
    if image.ndim != 2:
        raise ValueError(f"expected an (H, W) image, got shape {image.shape}")
    if image.dtype not in (np.float32, np.float64):
        image = image.astype(np.float64)
    image = np.ascontiguousarray(image)
    affine = np.ascontiguousarray(affine, dtype=np.float64)
    if affine.ndim != 3 or affine.shape[1:] != (2, 3):
        raise ValueError(f"affine must be (n, 2, 3), got shape {affine.shape}")
    height, width = check_shape(shape)
    out = np.empty((len(affine), height, width), image.dtype)
    threads = min(n_threads(), 2) if out.size >= _PARALLEL_POINTS else 1
    bounds = np.linspace(0, len(affine), threads + 1).astype(int)
    run_parallel(
        functools.partial(_compiled.bilinear_grids, image, affine[start:stop], out[start:stop])
        for start, stop in zip(bounds[:-1], bounds[1:], strict=True)
    )
    return out


# grid points from which sample_grids shares them between two threads (the crossover
# measured: benchmarks/bench_face_windows.py)
_PARALLEL_POINTS = 1_000_000


def crop(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """Cut out ``box = (x, y, width, height)`` (pixels, origin top-left).

    Parameters
    ----------
    image : (H, W) or (H, W, 3) ndarray
    box : (x, y, width, height)

    Returns
    -------
    (height, width[, 3]) ndarray

    Raises
    ------
    ValueError
        The box is empty or reaches outside the image.

    Examples
    --------
    >>> crop(np.arange(12.0).reshape(3, 4), (1, 1, 2, 2))
    array([[ 5.,  6.],
           [ 9., 10.]])
    """
    image = as_float_image(image, allow_colour=True)
    x, y, width, height = (int(round(v)) for v in box)
    H, W = image.shape[:2]
    if width < 1 or height < 1:
        raise ValueError(f"crop box {box} is empty; width and height must be positive")
    if x < 0 or y < 0 or x + width > W or y + height > H:
        raise ValueError(
            f"crop box (x={x}, y={y}, w={width}, h={height}) reaches outside the "
            f"{W}x{H} image; shrink the box or pad the image first"
        )
    return image[y : y + height, x : x + width].copy()


def eye_points(left_eye, right_eye) -> np.ndarray:
    """Two eye centres as a ``(2, 2)`` float array, or a ``ValueError`` saying what is wrong.

    Parameters
    ----------
    left_eye, right_eye : (x, y)
        Finite numbers, the two eyes apart.

    Returns
    -------
    (2, 2) ndarray of float64
        ``[left, right]``.

    Examples
    --------
    >>> eye_points((10, 20), (30, 20)).tolist()
    [[10.0, 20.0], [30.0, 20.0]]
    """
    try:
        points = np.array([left_eye, right_eye], dtype=np.float64)
    except (TypeError, ValueError):
        points = None
    if points is None or points.shape != (2, 2) or not np.all(np.isfinite(points)):
        raise ValueError(f"eyes must be two finite (x, y) points, got {left_eye!r}, {right_eye!r}")
    if np.allclose(points[0], points[1]):
        raise ValueError(f"left and right eye coincide at {points[0].tolist()}; cannot align")
    return points


def unit_light(image: np.ndarray) -> np.ndarray:
    """A float image outside [0, 1] (centred at 0, or 0-255) brought to [0, 1] by its own range.

    Where photos enter the face pipeline: every stage reads light as [0, 1].
    An image already within [0, 1] is returned as it is.

    Parameters
    ----------
    image : ndarray
        Float, finite (:func:`as_float_image`'s).

    Returns
    -------
    ndarray

    Examples
    --------
    >>> unit_light(np.array([[0.0, 127.5, 255.0]])).tolist()
    [[0.0, 0.5, 1.0]]
    """
    low, high = float(image.min()), float(image.max())
    if low >= 0 and high <= 1:
        return image
    return (image - low) / (high - low) if high > low else np.zeros_like(image)


def eye_transform(
    left_eye,
    right_eye,
    *,
    shape: tuple[int, int],
    eye_positions=DEFAULT_EYE_POSITIONS,
) -> SimilarityTransform:
    """The similarity transform taking the eyes to their canonical positions.

    Parameters
    ----------
    left_eye, right_eye : (x, y)
        Eye centres in the input (left = the image's left).
    shape : (H, W)
        The output's shape.
    eye_positions : ((x, y), (x, y)), default ((0.3, 0.4), (0.7, 0.4))
        Where the eyes go, as fractions of the output's ``(W - 1, H - 1)``.

    Returns
    -------
    skimage.transform.SimilarityTransform
        Maps input ``(x, y)`` to output ``(x, y)``.
    """
    eyes = eye_points(left_eye, right_eye)[None]
    return SimilarityTransform(
        matrix=eye_matrices(eyes, shape=shape, eye_positions=eye_positions)[0]
    )


def eye_matrices(eyes, *, shape: tuple[int, int], eye_positions=DEFAULT_EYE_POSITIONS):
    """:func:`eye_transform`'s matrices of many eye pairs, checked at once.

    Parameters
    ----------
    eyes : (n, 2, 2) array-like
        ``[left, right]`` eye centres ``(x, y)`` of each face.
    shape : (H, W)
        The output's shape.
    eye_positions : ((x, y), (x, y)), default ((0.3, 0.4), (0.7, 0.4))
        Where the eyes go, as fractions of the output's ``(W - 1, H - 1)``.

    Returns
    -------
    (n, 3, 3) ndarray
        Each maps input ``(x, y, 1)`` to output ``(x, y, 1)``: the matrix
        :func:`eye_transform` wraps.
    """
    height, width = check_shape(shape)
    try:
        src = np.array(eyes, dtype=np.float64)
    except (TypeError, ValueError):
        src = None
    if src is not None and src.size == 0:
        src = src.reshape(0, 2, 2)
    if src is None or src.ndim != 3 or src.shape[1:] != (2, 2):
        got = "pairs of other lengths or not numbers" if src is None else f"shape {src.shape}"
        raise ValueError(f"eyes must be (n, 2, 2) eye pairs [(x, y), (x, y)], got {got}")
    bad = ~np.isfinite(src).all(axis=(1, 2)) | np.isclose(src[:, 0], src[:, 1]).all(axis=1)
    if bad.any():
        eye_points(*src[np.argmax(bad)])  # its error: not finite, or the eyes coincide
    apart = np.hypot(*(src[:, 1] - src[:, 0]).T)
    if (apart > 4 * MAX_SIDE).any():
        raise ValueError(
            f"the eyes are {apart.max():.3g} pixels apart, beyond any image eigenvision reads "
            f"(sides up to {MAX_SIDE}); give them in the image's pixels"
        )
    relative = np.array(eye_positions, dtype=np.float64)
    if relative.shape != (2, 2):
        raise ValueError(f"eye_positions must be ((x, y), (x, y)), got {eye_positions!r}")
    dst = relative * [width - 1, height - 1]
    d0, d1 = complex(*dst[0]), complex(*dst[1])
    matrices = np.zeros((len(src), 3, 3))
    matrices[:, 2, 2] = 1.0
    # Two point pairs fix a similarity exactly: in complex numbers z' = a z + b (Python's
    # complex arithmetic, one pair at a time: numpy's complex division differs in the last bit).
    for matrix, ((x0, y0), (x1, y1)) in zip(matrices, src.tolist(), strict=True):
        s0 = complex(x0, y0)
        a = (d1 - d0) / (complex(x1, y1) - s0)
        b = d0 - a * s0
        matrix[:2] = [[a.real, -a.imag, b.real], [a.imag, a.real, b.imag]]
    return matrices


def align(
    image: np.ndarray,
    left_eye,
    right_eye,
    *,
    shape: tuple[int, int],
    eye_positions=DEFAULT_EYE_POSITIONS,
    antialias: bool = True,
) -> np.ndarray:
    """Rotate, scale and shift a face so the eyes land at canonical positions.

    Parameters
    ----------
    image : (H, W) ndarray
    left_eye, right_eye : (x, y)
        Eye centres in ``image`` (left = the image's left).
    shape : (H, W)
        Output shape.
    eye_positions : ((x, y), (x, y)), default ((0.3, 0.4), (0.7, 0.4))
        Where the eyes go, as fractions of the output's ``(W - 1, H - 1)``.
    antialias : bool, default True
        When the face shrinks by a factor ``s > 1``, smooth it first with a
        Gaussian of standard deviation ``(s - 1) / 2`` input pixels
        (scikit-image's ``resize(anti_aliasing=True)``; beyond ``s = 8``,
        blocks of ``floor(s / 4)`` pixels are averaged first, so the time
        does not grow with ``s``). Bilinear sampling alone reads one input
        pixel in ``s``: the crop of a face several times its size aliases.

    Returns
    -------
    (H, W) ndarray
        Bilinear resampling; pixels from outside the input repeat its edge.

    Notes
    -----
    Two point pairs determine a similarity transform (rotation, uniform scale,
    translation) exactly, so the eyes land on their targets up to the
    interpolation of the image itself. Only the part of the image the crop
    reads is smoothed, so the cost does not grow with the photo.
    """
    image = as_float_image(image)
    transform = eye_transform(left_eye, right_eye, shape=shape, eye_positions=eye_positions)
    return warp(image, transform, shape, antialias=antialias)


def warp(image: np.ndarray, transform, shape, *, antialias: bool = True) -> np.ndarray:
    """Resample ``image`` through a similarity ``transform`` into an image of ``shape``.

    The one warp of eigenvision: alignment on the eyes, the datasets' crops
    and the finder's rotations all resample through it.

    Parameters
    ----------
    image : (H, W) ndarray
    transform : skimage.transform.SimilarityTransform
        From input to output ``(x, y)``.
    shape : (H, W)
        The output's shape.
    antialias : bool, default True
        Smooth first where the transform shrinks (see :func:`align`).

    Returns
    -------
    (H, W) ndarray
        Bilinear (:func:`sample_grids`); pixels from outside the input repeat its edge; the
        input's dtype.
    """
    shape = check_shape(shape)
    dtype = image.dtype
    sigma = 0.0
    if antialias:
        image, transform, sigma = _prefiltered(image, transform, shape)
    out = _smoothed_samples(image, sigma, _grid_affines([transform]), shape)[0]
    return out.astype(dtype, copy=False)


def _smoothed_samples(image, sigma, affine, shape):
    """:func:`sample_grids` of ``image`` smoothed by a Gaussian of ``sigma`` pixels (0: none),
    ``gaussian_filter(image, sigma, mode="nearest")``'s smoothing computed only where the grids
    read (:func:`~eigenvision._compiled.smoothed_bilinear_grids`), as float64."""
    if sigma == 0:
        return sample_grids(image, affine, shape)
    # scipy's Gaussian kernel (gaussian_filter1d: truncated at 4 sigma), from its centre out
    radius = int(4.0 * float(sigma) + 0.5)
    x = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 / (sigma * sigma) * x**2)
    kernel = kernel / kernel.sum()
    affine = np.ascontiguousarray(affine, dtype=np.float64)
    height, width = check_shape(shape)
    return _compiled.smoothed_bilinear_grids(
        np.ascontiguousarray(image),
        kernel[radius:],
        affine,
        np.empty((len(affine), height, width)),
    )


def _grid_affines(transforms) -> np.ndarray:
    """``(n, 2, 3)``: each output pixel ``(row, col)``'s place in the input, as
    :func:`sample_grids` reads it, from similarity transforms of input to output ``(x, y)``."""
    return _read_affines(np.linalg.inv(np.stack([transform.params for transform in transforms])))


def _read_affines(inverse) -> np.ndarray:
    """:func:`_grid_affines` from the ``(n, 3, 3)`` inverse matrices (output to input
    ``(x, y)``): rows and columns swapped."""
    return inverse[:, [1, 0]][:, :, [1, 0, 2]]


def warp_many(image: np.ndarray, transforms, shape) -> np.ndarray:
    """:func:`warp` (antialiased) of one image through many similarity transforms, the crops
    that shrink it alike cut together.

    Crops of one face at nearby places and scales read the same part of the photo: the crops
    of one shrinking are cut from one part, over the bounds of them all (the crops that
    enlarge the image read it unsmoothed), in one compiled pass that smooths the pixels any
    of them reads (:func:`_smoothed_samples`). The pixels a crop reads lie as far inside the
    part as :func:`warp` keeps them: the crops are :func:`warp`'s to round-off. Shrinking
    beyond :data:`_BLOCKS_BEYOND`, where the blocks averaged depend on the part's corner,
    each crop is warped alone.

    Parameters
    ----------
    image : (H, W) ndarray
        Float.
    transforms : sequence of skimage.transform.SimilarityTransform, or (n, 3, 3) ndarray
        Each from input to output ``(x, y)`` (or its matrix, as :func:`eye_matrices` gives).
    shape : (H, W)

    Returns
    -------
    (n, H, W) ndarray
        ``image``'s dtype.
    """
    height, width = shape = check_shape(shape)
    if isinstance(transforms, np.ndarray):
        matrices = transforms.reshape(-1, 3, 3).astype(np.float64, copy=False)
    else:
        matrices = np.array([transform.params for transform in transforms]).reshape(-1, 3, 3)
    out = np.empty((len(matrices), *shape), dtype=image.dtype)
    if not len(matrices):
        return out
    inverse = np.linalg.inv(matrices)
    # one shrinking to 9 places: the same eye distance computed at other places differs in
    # its last bits (the scale as SimilarityTransform.scale computes it)
    factors = np.round(np.maximum(1 / np.sqrt(np.linalg.det(matrices)), 1.0), 9)
    box = np.array([[0, 0, 1], [width - 1, 0, 1], [0, height - 1, 1], [width - 1, height - 1, 1]])
    for factor in np.unique(factors):
        chosen = np.flatnonzero(factors == factor)
        if factor > _BLOCKS_BEYOND:
            for i in chosen:
                out[i] = warp(image, SimilarityTransform(matrix=matrices[i]), shape)
            continue
        sigma = (factor - 1) / 2
        corners = box @ inverse[chosen].transpose(0, 2, 1)  # as SimilarityTransform.inverse
        corners = (corners[..., :2] / corners[..., 2:]).reshape(-1, 2)
        (x0, x1), (y0, y1) = _read_bounds(corners, int(np.ceil(4 * sigma)) + 2, image.shape)
        # every crop's pixels back in the part, smoothed and read in one call (edges repeated)
        affine = _read_affines(inverse[chosen])
        affine[:, :, 2] -= [y0, x0]
        out[chosen] = _smoothed_samples(image[y0:y1, x0:x1], sigma, affine, shape)
    return out


#: Beyond this shrinking ``s``, :func:`align` first averages blocks of ``floor(s / 4)``
#: pixels, so its time does not grow with ``s`` (the Gaussian's kernel has ``4 (s - 1)`` taps;
#: ``benchmarks/bench_align.py``).
_BLOCKS_BEYOND = 8


def _prefiltered(image, transform, shape):
    """The part of ``image`` a similarity warp to ``shape`` reads, smoothed for its shrinking.

    Returns the part, the transform from its pixels and the standard deviation of the
    Gaussian that smooths it (:func:`_smoothed_samples`; 0: none). Shrinking by
    ``s <= 8``, it equals smoothing the whole image (``mode="nearest"``) where
    the warp reads; beyond, blocks of ``b = floor(s / 4)`` pixels are averaged
    first and the Gaussian of ``(s / b - 1) / 2`` blocks smooths those.
    """
    factor = 1 / transform.scale
    if factor <= 1:
        return image, transform, 0.0
    block = min(int(factor // 4), *image.shape) if factor > _BLOCKS_BEYOND else 1
    sigma = (factor / block - 1) / 2
    height, width = shape
    corners = transform.inverse([[0, 0], [width - 1, 0], [0, height - 1], [width - 1, height - 1]])
    (x0, x1), (y0, y1) = _read_bounds(corners, block * (int(np.ceil(4 * sigma)) + 2), image.shape)
    part = image[y0:y1, x0:x1]
    if block > 1:
        part = _block_means(_block_means(part, block, axis=0), block, axis=1)
    # a block's mean sits at its centre: (block - 1) / 2 past its first pixel
    start = np.array([x0, y0]) + (block - 1) / 2
    from_part = np.array([[block, 0.0, start[0]], [0.0, block, start[1]], [0.0, 0.0, 1.0]])
    return part, SimilarityTransform(matrix=transform.params @ from_part), sigma


def _read_bounds(corners, reach, shape):
    """``((x0, x1), (y0, y1))``: the part of an image of ``shape`` that bilinear reads at
    ``corners`` (``(n, 2)`` input ``(x, y)``) take, ``reach`` pixels wider on every side (a
    filter's kernel and the next pixel), clipped to the image."""
    bounds = []
    for axis, size in ((0, shape[1]), (1, shape[0])):
        low, high = np.clip([corners[:, axis].min(), corners[:, axis].max()], 0, size - 1)
        bounds.append(
            (max(int(np.floor(low)) - reach, 0), min(int(np.ceil(high)) + reach + 1, size))
        )
    return tuple(bounds)


def _block_means(array, block, axis):
    """Means of ``block`` consecutive rows (``axis=0``) or columns; a last, part block is
    completed by repeating its last row or column (the photo's edge, as ``mode="edge"``)."""
    array = np.moveaxis(array, axis, 0)
    whole = len(array) // block * block
    means = array[:whole].reshape(whole // block, block, *array.shape[1:]).mean(axis=1)
    rest = array[whole:]
    if len(rest):
        last = (rest.sum(axis=0) + (block - len(rest)) * rest[-1]) / block
        means = np.concatenate([means, last[None]])
    return np.moveaxis(means, 0, axis)


def resize_points(points, from_shape, to_shape) -> np.ndarray:
    """Move ``(x, y)`` points with an image resized from ``from_shape`` to ``to_shape``.

    Pixel centres map to pixel centres: ``x_out + 0.5 = (x_in + 0.5) * W_out / W_in``.

    Parameters
    ----------
    points : (..., 2) array-like
    from_shape, to_shape : (H, W)

    Returns
    -------
    (..., 2) ndarray of float64

    Examples
    --------
    >>> resize_points([[0.0, 0.0], [3.0, 1.0]], (2, 4), (4, 8)).tolist()
    [[0.5, 0.5], [6.5, 2.5]]
    """
    scale = np.array([to_shape[1] / from_shape[1], to_shape[0] / from_shape[0]])
    return (np.asarray(points, dtype=np.float64) + 0.5) * scale - 0.5


def rotated(image, angle):
    """``image`` turned by ``angle`` degrees about its centre on a canvas that holds all of it.

    Parameters
    ----------
    image : (H, W) ndarray
    angle : float
        Degrees.

    Returns
    -------
    image : (H', W') ndarray
    transform : skimage.transform.SimilarityTransform
        From input to output pixels.
    """
    height, width = image.shape
    theta = np.deg2rad(angle)
    cos, sin = abs(np.cos(theta)), abs(np.sin(theta))
    # rounded first: cos(pi / 2) is 6e-17, not 0, and a quarter turn must not gain a column
    out_w = int(np.ceil(np.round(width * cos + height * sin, 9)))
    out_h = int(np.ceil(np.round(width * sin + height * cos, 9)))
    transform = (
        SimilarityTransform(translation=(-(width - 1) / 2, -(height - 1) / 2))
        + SimilarityTransform(rotation=theta)
        + SimilarityTransform(translation=((out_w - 1) / 2, (out_h - 1) / 2))
    )
    if angle == 0:
        return image, transform
    return warp(image, transform, (out_h, out_w), antialias=False), transform
