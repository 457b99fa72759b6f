"""The last stage of the photo pipeline: the placed eyes refined by cascaded regression.

The placer's eyes are found by a search for eye-like patches; where a brow,
a frame of glasses or a shadow looks as much like an eye, it lands a
tenth of the eye distance off, and a face aligned on those eyes is cut
askew. :class:`EyeRegressor` moves the eyes as the whole face around them
says: the face is cut on the current eyes, described by HOG, and a linear
map, learnt on annotated faces from deliberately misplaced starts, gives
the eyes' displacement; a few such steps in a row (Xiong & De la Torre's
supervised descent) bring them to where the annotators put them. The two
estimates err apart, the search now and then by a whole brow, the
regression by a pixel or two everywhere, and the finder reports their
mean (:meth:`~eigenvision.FaceFinder.place`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import Ridge

from .._base import check_fitted, progress
from .._spec import Param, State, check_params
from ..descriptors import hog_descriptor
from ..normalize import to_gray
from ..transform import as_float_image, eye_transform, unit_light, warp

__all__ = ["EyeRegressor"]

#: The frame each step reads: the eyes 24 pixels apart, level, 26 pixels down a 64 x 64 cut.
FRAME_SHAPE = (64, 64)
FRAME_EYES = ((20.0 / 63, 26.0 / 63), (44.0 / 63, 26.0 / 63))
#: The eyes' place in the frame, pixels (``eye_transform``'s fractions of ``(W - 1, H - 1)``).
_CANONICAL = np.array(FRAME_EYES) * (np.array(FRAME_SHAPE[::-1]) - 1)
#: The largest move of an eye coordinate in one step, frame pixels: half the frame's eye distance.
_MAX_STEP = (_CANONICAL[1, 0] - _CANONICAL[0, 0]) / 2


def _frame_transform(eyes):
    return eye_transform(eyes[0], eyes[1], shape=FRAME_SHAPE, eye_positions=FRAME_EYES)


def eye_features(image, eyes) -> np.ndarray:
    """HOG of the face cut on ``eyes`` into the regression's frame.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) ndarray
    eyes : (2, 2) array_like
        ``(x, y)`` of the left and right eye (the image's left first).

    Returns
    -------
    (2916,) ndarray of float32
        Nine orientations in 6 x 6-pixel cells, blocks of 2 x 2 cells,
        of the frame standardised to zero mean and unit variance.
    """
    return _frame_features(_grey_light(image), eyes)


def _grey_light(image):
    """``image`` as :func:`~eigenvision.faces.crops.align_face` reads it: float, light in
    [0, 1], grey; checked once (a regression's steps cut the same photo)."""
    image = unit_light(as_float_image(image, allow_colour=True))
    return to_gray(image[..., :3]) if image.ndim == 3 else image


def _frame_features(grey, eyes):
    """:func:`eye_features` of a :func:`_grey_light` image."""
    frame = warp(grey, _frame_transform(np.asarray(eyes, dtype=np.float64)), FRAME_SHAPE)
    frame = (frame - frame.mean()) / (frame.std() + 1e-6)
    return hog_descriptor(frame, cell=6).astype(np.float32)


class EyeRegressor(BaseEstimator):
    """Eye centres refined by a cascade of linear regressions on HOG (supervised descent).

    Each stage cuts the face on the current eyes into a 64 x 64 frame (eyes
    24 pixels apart), describes it by HOG (:func:`eye_features`) and adds
    the displacement a ridge regression reads from it; the stages are
    fitted in turn on annotated faces started from random similarity
    perturbations of their true eyes (and their mirror images), each stage
    on where the previous ones left them.

    Parameters
    ----------
    n_stages : int, default 4
    alpha : float, default 100.0
        Ridge penalty of every stage.
    starts_per_face : int, default 12
        Perturbed starts per training face (and as many of its mirror image).
    shift : float, default 0.07
        Standard deviation of a start's shift, in eye distances; rotations
        and log-scales have 0.08, each eye a further 0.03 of its own.
    seed : int, default 0

    Attributes
    ----------
    coefficients_ : (n_stages, 4, 2916) ndarray
        Each stage's map from :func:`eye_features` to the frame displacement
        of ``(x_left, y_left, x_right, y_right)``, frame pixels.
    intercepts_ : (n_stages, 4) ndarray

    References
    ----------
    X. Xiong and F. De la Torre (2013), Supervised descent method and its
    applications to face alignment, CVPR. P. Dollár, P. Welinder and P.
    Perona (2010), Cascaded pose regression, CVPR. N. Dalal and B. Triggs
    (2005), Histograms of oriented gradients for human detection, CVPR.
    """

    _params = {
        "n_stages": Param("int", 1, 20),
        "alpha": Param("real", 0, 1e9, open_low=True),
        "starts_per_face": Param("int", 1, 1000),
        "shift": Param("real", 0, 1),
        "seed": Param("int", 0, 2**32 - 1),
    }

    _state = {
        "coefficients_": State(shape=("s", 4, "f")),
        "intercepts_": State(shape=("s", 4)),
    }

    def __init__(self, *, n_stages=4, alpha=100.0, starts_per_face=12, shift=0.07, seed=0):
        self.n_stages = n_stages
        self.alpha = alpha
        self.starts_per_face = starts_per_face
        self.shift = shift
        self.seed = seed

    def check_parameters(self):
        """Raise ``ValueError`` naming a parameter outside ``_params`` (``fit``, ``load`` call it).

        Returns
        -------
        None
        """
        check_params(self)

    def fit(self, images, eyes, *, progress_bar=False):
        """Fit the stages on faces with annotated eyes.

        Parameters
        ----------
        images : sequence of (H, W) ndarray
            Faces with room around them (e.g. :func:`~eigenvision.datasets.load_helen`'s crops).
        eyes : (n, 2, 2) array_like
            Their true eye centres, ``(x, y)``, the image's left eye first.
        progress_bar : bool, default False
            A bar over the stages.

        Returns
        -------
        self
        """
        self.check_parameters()
        eyes = np.asarray(eyes, dtype=np.float64)
        if len(images) == 0 or eyes.shape != (len(images), 2, 2):
            raise ValueError(
                f"need (n, 2, 2) eyes for n >= 1 images, got {eyes.shape} for {len(images)}"
            )
        rng = np.random.default_rng(self.seed)
        faces, truths = [], []
        for image, (left, right) in zip(images, eyes, strict=True):
            image = np.asarray(image)
            mirrored = (
                (image.shape[1] - 1 - right[0], right[1]),
                (image.shape[1] - 1 - left[0], left[1]),
            )
            faces += [image, image[:, ::-1]]
            truths += [np.array([left, right]), np.array(mirrored)]
        starts = [
            (face, truth, self._perturbed(truth, rng))
            for face, truth in zip(faces, truths, strict=True)
            for _ in range(self.starts_per_face)
        ]
        current = np.array([start for _, _, start in starts])
        coefficients, intercepts = [], []
        for _ in progress(range(self.n_stages), desc="eye stages", enabled=progress_bar):
            features = np.stack(
                [
                    eye_features(face, where)
                    for (face, _, _), where in zip(starts, current, strict=True)
                ]
            )
            targets = np.stack(
                [
                    (_frame_transform(where)(truth) - _CANONICAL).ravel()
                    for (_, truth, _), where in zip(starts, current, strict=True)
                ]
            )
            stage = Ridge(alpha=self.alpha).fit(features, targets)
            coefficients.append(stage.coef_)
            intercepts.append(stage.intercept_)
            moves = stage.predict(features)
            current = np.array(
                [_moved(where, move) for where, move in zip(current, moves, strict=True)]
            )
        self.coefficients_ = np.stack(coefficients)
        self.intercepts_ = np.stack(intercepts)
        return self

    def _perturbed(self, truth, rng):
        """``truth`` turned, scaled and shifted at random about its midpoint."""
        iod = float(np.hypot(*(truth[1] - truth[0])))
        middle = truth.mean(axis=0)
        angle, log_scale = rng.normal(0.0, 0.08, 2)
        turn = np.exp(log_scale) * np.array(
            [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
        )
        shift = rng.normal(0.0, self.shift, 2) * iod
        return (truth - middle) @ turn.T + middle + shift + rng.normal(0.0, 0.03 * iod, (2, 2))

    def predict(self, image, eyes) -> np.ndarray:
        """The eyes of one face, refined.

        Parameters
        ----------
        image : (H, W) or (H, W, 3) ndarray
        eyes : (2, 2) array_like
            Where the eyes are thought to be, ``(x, y)``, the image's left first.

        Returns
        -------
        (2, 2) ndarray
            The refined eyes in ``image``'s pixels.
        """
        check_fitted(self, "coefficients_")
        where = np.asarray(eyes, dtype=np.float64)
        if where.shape != (2, 2) or not np.all(np.isfinite(where)):
            raise ValueError(f"eyes must be two finite (x, y) points, got {eyes!r}")
        image = np.asarray(image)
        if image.ndim == 3:
            image = to_gray(image[..., :3])
        image = _grey_light(image)  # checked once, not in every stage's cut
        for weights, intercept in zip(self.coefficients_, self.intercepts_, strict=True):
            move = weights @ _frame_features(image, where) + intercept
            where = _moved(where, move)
        return where


def _moved(eyes, move):
    """The eyes displaced by ``move``, frame pixels (each at most half the eye distance)."""
    step = np.clip(np.asarray(move, dtype=np.float64).reshape(2, 2), -_MAX_STEP, _MAX_STEP)
    return _frame_transform(eyes).inverse(_CANONICAL + step)
