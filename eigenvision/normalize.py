"""Photometric normalisation of images and image sets: grey, equalise, standardise, light.

Stateless functions take the image first and options keyword-only. The
geometric steps (resize, crop, align on the eyes) are :mod:`eigenvision.transform`'s;
:func:`normalize_image` chains both.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
from scipy.ndimage import gaussian_filter
from skimage import exposure
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import validate_data

from . import _compiled  # numba's loops: numba imported at their first call
from ._base import NotFittedError, flatten_images
from ._parallel import n_threads, run_on_row_parts
from ._spec import INPUT_STATE, Param, State, check_params
from .imageset import ImageSet
from .transform import (
    DEFAULT_EYE_POSITIONS,
    as_float_image,
    check_shape,
    eye_transform,
    resize,
    resize_points,
    warp,
)

__all__ = [
    "to_gray",
    "equalize",
    "illumination",
    "standardize",
    "unit_norm",
    "equalize_windows",
    "mask_ellipse",
    "normalize_image",
    "normalize_images",
    "PixelStandardizer",
]

LUMA = np.array([0.299, 0.587, 0.114])


def to_gray(image: np.ndarray) -> np.ndarray:
    """Convert an RGB(A) image to grey luminance (ITU-R BT.601 weights).

    Parameters
    ----------
    image : (H, W), (H, W, 3) or (H, W, 4) ndarray
        ``uint8`` or float in ``[0, 1]``. Alpha is composited on white.

    Returns
    -------
    (H, W) ndarray
        float32 for float32 or uint8 input, float64 otherwise.

    Examples
    --------
    >>> to_gray(np.array([[[1.0, 0.0, 0.0]]]))
    array([[0.299]])
    """
    image = as_float_image(image, allow_colour=True)
    if image.ndim == 2:
        return image
    rgb = image[..., :3]
    if image.shape[2] == 4:
        alpha = image[..., 3:]
        rgb = rgb * alpha + (1 - alpha)
    return (rgb @ LUMA.astype(image.dtype)).astype(image.dtype)


def equalize(image: np.ndarray, *, n_bins: int = 256, mask: np.ndarray | None = None) -> np.ndarray:
    """Histogram equalisation (scikit-image's ``equalize_hist``), keeping the dtype.

    Parameters
    ----------
    image : (H, W) ndarray
    n_bins : int, default 256
    mask : (H, W) bool ndarray, optional
        Equalise by the histogram of these pixels only.

    Returns
    -------
    (H, W) ndarray
    """
    image = as_float_image(image)
    return exposure.equalize_hist(image, nbins=n_bins, mask=mask).astype(image.dtype)


def standardize(image: np.ndarray, *, method: str = "norm") -> np.ndarray:
    """Photometric normalisation of one image: zero mean, then unit norm or variance.

    Parameters
    ----------
    image : (H, W) ndarray
    method : {"norm", "variance"}
        ``"norm"``: ``(x - mean) / ||x - mean||``; ``"variance"``:
        ``(x - mean) / std``. A constant image becomes all zeros.

    Returns
    -------
    (H, W) ndarray

    Examples
    --------
    >>> out = standardize(np.array([[0.0, 2.0]]))
    >>> out, round(float(np.linalg.norm(out)), 12)
    (array([[-0.70710678,  0.70710678]]), 1.0)
    """
    image = as_float_image(image)
    centred = image - image.mean(dtype=np.float64)
    if method == "norm":
        scale = np.sqrt(np.sum(centred.astype(np.float64) ** 2))
    elif method == "variance":
        scale = centred.astype(np.float64).std()
    else:
        raise ValueError(f"method must be 'norm' or 'variance', got {method!r}")
    if scale == 0:
        return np.zeros_like(image)
    return (centred / scale).astype(image.dtype)


def unit_norm(stack: np.ndarray) -> np.ndarray:
    """Each window zero-mean and of unit norm (flat ones all zero), as
    ``dffs_map(..., normalize="window")`` sees windows.

    Parameters
    ----------
    stack : (n, ...) ndarray
        Windows or patches.

    Returns
    -------
    (n, ...) ndarray of float64

    Examples
    --------
    >>> unit_norm(np.array([[0.0, 2.0], [1.0, 1.0]]))
    array([[-0.70710678,  0.70710678],
           [ 0.        ,  0.        ]])
    """
    stack = np.asarray(stack)
    flat = stack.reshape(len(stack), -1).astype(np.float64)
    flat = flat - flat.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)
    flat = np.divide(flat, norms, out=np.zeros_like(flat), where=norms > 1e-12)
    return flat.reshape(stack.shape)


def equalize_windows(stack: np.ndarray) -> np.ndarray:
    """Each window histogram-equalised, then zero-mean and of unit norm.

    Equalisation to the window's own histogram replaces every grey level by
    its rank among the window's pixels (tied levels share their mean rank):
    the output depends on the order of the grey levels only, so it is the
    same under any increasing change of contrast (gamma, exposure,
    saturation). Sung & Poggio (1998) equalise every window before their
    face/non-face decision; on held-out HELEN photos it raised the finder's
    detection rate by 7 to 9 points on each of three sets (``FaceFinder``).

    Parameters
    ----------
    stack : (n, ...) ndarray
        Windows or patches; NaN-free.

    Returns
    -------
    (n, ...) ndarray of float64
        Flat windows (one grey level) all zero, as :func:`unit_norm` gives.

    References
    ----------
    K.-K. Sung and T. Poggio (1998), Example-based learning for view-based
    human face detection, IEEE TPAMI 20(1).

    Examples
    --------
    >>> equalize_windows(np.array([[0.0, 0.1, 0.9], [0.0, 0.2, 0.3], [5.0, 5.0, 5.0]]))
    array([[-0.70710678,  0.        ,  0.70710678],
           [-0.70710678,  0.        ,  0.70710678],
           [ 0.        ,  0.        ,  0.        ]])
    """
    stack = np.asarray(stack)
    if stack.ndim < 2 or stack.size == 0:
        raise ValueError(f"stack must be (n, ...) windows, non-empty, got shape {stack.shape}")
    return _mean_ranks(stack.reshape(len(stack), -1), standardise=True).reshape(stack.shape)


def _mean_ranks(rows, *, standardise=False):
    """``scipy.stats.rankdata(rows, axis=1, method="average")``, faster.

    One sort per row, then one pass over it that gives each run of tied
    values its mean rank; many rows are split between threads
    (``FaceFinder.find`` equalises every candidate;
    ``benchmarks/bench_equalize.py`` compares it with scipy).

    Parameters
    ----------
    rows : (n, d) ndarray
        NaN-free.
    standardise : bool, default False
        Each row of ranks made zero-mean and of unit norm (:func:`equalize_windows`), in
        the same pass.

    Returns
    -------
    (n, d) ndarray of float64
        Ranks from 1 to ``d`` in each row; tied values share their mean rank.
    """
    # argsort and the ranks' pass release the GIL: rows split between threads pay
    # (benchmarks/bench_equalize.py)
    return run_on_row_parts(
        lambda part: _serial_mean_ranks(rows[part], standardise),
        len(rows),
        min(n_threads(), 4) if len(rows) >= 1024 else 1,
    )


def _serial_mean_ranks(rows, standardise=False):
    """:func:`_mean_ranks` on the calling thread: numpy's sort, then each run of tied values
    given its mean rank in one compiled pass (:func:`~eigenvision._compiled.ranks_in_order`)."""
    rows = np.ascontiguousarray(rows)
    return _compiled.ranks_in_order(
        rows, np.argsort(rows, axis=1), np.empty(rows.shape), standardise
    )


def mask_ellipse(image: np.ndarray, *, fill: float | None = None) -> np.ndarray:
    """Blank the corners outside the ellipse inscribed in the image.

    Parameters
    ----------
    image : (H, W) ndarray
    fill : float, optional
        Value outside the ellipse; the mean inside it by default, so the
        mask adds no edge of its own.

    Returns
    -------
    (H, W) ndarray
    """
    image = as_float_image(image)
    inside = ellipse_mask(image.shape)
    out = image.copy()
    out[~inside] = image[inside].mean() if fill is None else fill
    return out


def ellipse_mask(shape: tuple[int, int]) -> np.ndarray:
    """Boolean ``(H, W)`` mask of the ellipse inscribed in the image."""
    height, width = check_shape(shape)
    rows = (np.arange(height) - (height - 1) / 2) / (height / 2)
    cols = (np.arange(width) - (width - 1) / 2) / (width / 2)
    return rows[:, None] ** 2 + cols[None, :] ** 2 <= 1.0


# The pipeline's keyword arguments shadow these function names.
_equalize_image, _standardize_image = equalize, standardize


def illumination(
    image,
    *,
    gamma: float = 0.2,
    sigma_inner: float = 1.0,
    sigma_outer: float = 2.0,
    alpha: float = 0.1,
    tau: float = 10.0,
) -> np.ndarray:
    """Illumination normalisation of Tan & Triggs (2010): gamma, difference of Gaussians,
    contrast equalisation.

    The chain that holds a face's appearance under side light: ``I ** gamma``
    compresses the dynamic range (shadows lifted), a difference of Gaussians
    (``sigma_inner``, ``sigma_outer``) removes the slow shading and the finest
    noise, and two stages of contrast equalisation rescale by a robust mean,
    ``I / mean(|I| ** alpha) ** (1 / alpha)`` then ``I / mean(min(tau, |I|) **
    alpha) ** (1 / alpha)``; ``tau tanh(I / tau)`` finally squashes extremes.

    Parameters
    ----------
    image : (H, W) ndarray
        Grey, in [0, 1] (8-bit and 16-bit images are scaled to it).
    gamma : float, default 0.2
        In ``(0, 1]``; the paper's values are the defaults.
    sigma_inner, sigma_outer : float, default 1.0 and 2.0
    alpha : float, default 0.1
    tau : float, default 10.0

    Returns
    -------
    (H, W) ndarray
        Values in ``(-tau, tau)``, about zero-mean; float32 for float32 input.

    References
    ----------
    X. Tan and B. Triggs (2010), Enhanced local texture feature sets for face
    recognition under difficult lighting conditions, IEEE TIP 19(6).

    Examples
    --------
    >>> face = np.random.default_rng(0).random((16, 16))
    >>> bool(np.allclose(illumination(0.3 * face), illumination(face)))  # a darker photo
    True
    """
    image = as_float_image(image)
    if not (0.0 < gamma <= 1.0 and 0.0 < sigma_inner < sigma_outer and alpha > 0 and tau > 0):
        raise ValueError(
            "illumination needs 0 < gamma <= 1, 0 < sigma_inner < sigma_outer, alpha > 0 and "
            f"tau > 0, got {gamma}, {sigma_inner}, {sigma_outer}, {alpha}, {tau}"
        )
    dtype = image.dtype
    values = np.maximum(image.astype(np.float64), 0.0) ** gamma
    values = gaussian_filter(values, sigma_inner) - gaussian_filter(values, sigma_outer)
    values /= max(np.mean(np.abs(values) ** alpha) ** (1 / alpha), 1e-12)
    values /= max(np.mean(np.minimum(tau, np.abs(values)) ** alpha) ** (1 / alpha), 1e-12)
    return (tau * np.tanh(values / tau)).astype(dtype)


def normalize_image(
    image: np.ndarray,
    *,
    shape: tuple[int, int] | None = None,
    eyes=None,
    eye_positions=DEFAULT_EYE_POSITIONS,
    equalize: bool = False,
    standardize: str | None = None,
    mask: bool = False,
) -> np.ndarray:
    """Apply the normalisation pipeline to one image.

    The steps run in this order: grey, align on ``eyes = (left, right)`` or
    resize to ``shape`` (both antialiased: :func:`align`, :func:`resize`),
    histogram equalisation, elliptical mask, per-image standardisation
    (``"norm"`` or ``"variance"``).

    Parameters
    ----------
    image : (H, W) or (H, W, 3) ndarray
    shape : (H, W), optional
        Output size (with ``eyes``: the aligned crop's size; required then).
    eyes : ((x, y), (x, y)), optional
        The left and right eye centres in ``image``; align them to ``eye_positions``.
    eye_positions : ((u, v), (u, v)), default ((0.3, 0.4), (0.7, 0.4))
        Where the eyes land, as fractions of the output's width and height.
    equalize : bool, default False
    standardize : {"norm", "variance"}, optional
    mask : bool, default False
        Blank the corners outside the inscribed ellipse.

    Returns
    -------
    (H', W') ndarray
        Grey, float.
    """
    image, _ = _normalize_one(
        image,
        shape=shape,
        eyes=eyes,
        eye_positions=eye_positions,
        equalize=equalize,
        standardize=standardize,
        mask=mask,
    )
    return image


def _normalize_one(image, *, shape, eyes, eye_positions, equalize, standardize, mask):
    image = to_gray(image)
    transform = None
    if eyes is not None:
        if shape is None:
            raise ValueError("aligning on the eyes needs an output shape=(H, W)")
        transform = eye_transform(eyes[0], eyes[1], shape=shape, eye_positions=eye_positions)
        image = warp(image, transform, shape, antialias=True)
    elif shape is not None and tuple(shape) != image.shape:
        transform = partial(resize_points, from_shape=image.shape, to_shape=tuple(shape))
        image = resize(image, shape)
    if equalize:
        image = _equalize_image(image)
    if mask:
        image = mask_ellipse(image)
    if standardize is not None:
        image = _standardize_image(image, method=standardize)
    return image, transform


def normalize_images(
    images,
    *,
    shape: tuple[int, int] | None = None,
    align_on: tuple[str, str] | None = None,
    eye_positions=DEFAULT_EYE_POSITIONS,
    equalize: bool = False,
    standardize: str | None = None,
    mask: bool = False,
):
    """Apply :func:`normalize_image` to a whole set, keeping landmarks consistent.

    Parameters
    ----------
    images : ImageSet or (n, H, W) ndarray
    shape : (H, W), optional
        Output shape (resize, or the aligned face's shape).
    align_on : (str, str), optional
        Names of the two landmarks to align on, e.g. ``("left_eye",
        "right_eye")``; needs an :class:`ImageSet` with those landmarks.
    eye_positions, equalize, standardize, mask
        As :func:`normalize_image`.

    Returns
    -------
    ImageSet or ndarray
        The same kind as the input. For an ImageSet every landmark and point
        goes through the same geometric transform as its image.
    """
    is_set = isinstance(images, ImageSet)
    stack = images.images if is_set else np.asarray(images)
    if stack.ndim != 3 or len(stack) == 0:
        raise ValueError(f"images must be a non-empty (n, H, W) stack, got shape {stack.shape}")
    if align_on is not None:
        if not is_set or not images.landmarks or any(k not in images.landmarks for k in align_on):
            have = sorted(images.landmarks) if is_set and images.landmarks else []
            raise ValueError(
                f"align_on={align_on} needs an ImageSet with those landmarks; it has {have}"
            )
    outputs, transforms = [], []
    for i, image in enumerate(stack):
        eyes = None
        if align_on is not None:
            eyes = (images.landmarks[align_on[0]][i], images.landmarks[align_on[1]][i])
        out, transform = _normalize_one(
            image,
            shape=shape,
            eyes=eyes,
            eye_positions=eye_positions,
            equalize=equalize,
            standardize=standardize,
            mask=mask,
        )
        outputs.append(out)
        transforms.append(transform)
    result = np.stack(outputs)
    if not is_set:
        return result

    def moved(points: np.ndarray, apply: Callable) -> np.ndarray:
        return np.stack([apply(t, p) for t, p in zip(transforms, points, strict=True)])

    def apply_point(t, p):
        return p if t is None else np.asarray(t(np.atleast_2d(p))).reshape(np.shape(p))

    landmarks = None
    if images.landmarks is not None:
        landmarks = {k: moved(v, apply_point) for k, v in images.landmarks.items()}
    points = None if images.points is None else moved(images.points, apply_point)
    return images.replace(images=result, landmarks=landmarks, points=points)


class PixelStandardizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Per-pixel standardisation across a set: zero mean, unit variance per feature.

    The pre-processing step of the lecture notes (subtract each feature's
    mean, divide by its standard deviation) as a fitted transform. Pixels
    that are constant in the training set keep scale 1.

    Parameters
    ----------
    with_mean, with_std : bool, default True

    Attributes
    ----------
    mean_ : (d,) ndarray
    scale_ : (d,) ndarray
    image_shape_ : (H, W) or None
    n_features_in_ : int

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [2.0, 1.0]])
    >>> PixelStandardizer().fit(X).transform(X)
    array([[-1.,  0.],
           [ 1.,  0.]])
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "with_mean": Param("bool"),
        "with_std": Param("bool"),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        **INPUT_STATE,
        "mean_": State(shape=("d",)),
        "scale_": State(shape=("d",), positive=True),
    }

    def __init__(self, *, with_mean: bool = True, with_std: bool = True):
        self.with_mean = with_mean
        self.with_std = with_std

    def fit(self, X, y=None) -> PixelStandardizer:
        """Learn each pixel's mean and standard deviation.

        Parameters
        ----------
        X : (n, d) ndarray, (n, H, W) image stack or ImageSet
        y : ignored

        Returns
        -------
        self
        """
        check_params(self)
        X, shape = _flatten(self, X, reset=True)
        self.mean_ = X.mean(axis=0, dtype=np.float64) if self.with_mean else np.zeros(X.shape[1])
        std = X.std(axis=0, dtype=np.float64) if self.with_std else np.ones(X.shape[1])
        std[std == 0] = 1.0
        self.scale_ = std
        self.image_shape_ = shape
        return self

    def _check(self, X):
        if not hasattr(self, "mean_"):
            raise NotFittedError("this PixelStandardizer is not fitted yet; call fit(X) first")
        return _flatten(self, X, reset=False)

    def transform(self, X) -> np.ndarray:
        """Standardise: ``(x - mean_) / scale_``.

        Parameters
        ----------
        X : (n, d) ndarray, (n, H, W) image stack or ImageSet

        Returns
        -------
        ndarray
            In ``X``'s shape and float dtype.
        """
        X, shape = self._check(X)
        out = ((X - self.mean_) / self.scale_).astype(X.dtype, copy=False)
        return out if shape is None else out.reshape((-1, *shape))

    def inverse_transform(self, X) -> np.ndarray:
        """Undo :meth:`transform`: ``x scale_ + mean_``.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        ndarray
            In ``X``'s shape and float dtype.
        """
        X, shape = self._check(X)
        out = (X * self.scale_ + self.mean_).astype(X.dtype, copy=False)
        return out if shape is None else out.reshape((-1, *shape))


def _flatten(model, X, *, reset):
    """``(X, image_shape)``: validated ``(n, d)`` float rows of data or an image stack."""
    X, shape = flatten_images(X)
    return validate_data(model, X, dtype=[np.float64, np.float32], reset=reset), shape
