"""Face geometry: the conventions every part of the package cuts faces by.

Geometry is in units of the inter-ocular distance (IOD), the distance
between the two eye centres. A *face box* ``(x, y, w, h)`` runs roughly
from the brows to the chin and from cheek to cheek (:func:`face_box`,
measured on the IMM faces' 73-point outlines; :func:`box_eyes` is its
inverse); the *face window* (:data:`FACE_WINDOW`) is the eye-aligned face
interior a face space is trained on (:func:`face_windows`,
:func:`window_eyes`); :data:`PATCH_SHAPES` are the eigenfeature patches.
"""

from __future__ import annotations

import numpy as np

from ..imageset import ImageSet
from ..normalize import to_gray, unit_norm
from ..transform import align, eye_points, resize, resize_points, sample_grids

__all__ = [
    "face_box",
    "box_eyes",
    "face_windows",
    "augmented_face_windows",
    "jittered_face_windows",
    "face_window",
    "face_windows_at",
    "HalfOctaves",
    "window_shape",
    "window_eyes",
    "mirror_landmarks",
    "eye_frame",
    "faces_and_landmarks",
    "FACE_WINDOW",
    "FEATURES",
    "PATCH_SHAPES",
    "PLACEMENT_EYE_PATCH",
]


#: The features a :class:`~eigenvision.FeatureDetector` knows by default.
FEATURES = ("left_eye", "right_eye", "nose", "mouth")

#: Patch (height, width) around each landmark, in inter-ocular distances.
PATCH_SHAPES = {
    "left_eye": (0.5, 0.8),
    "right_eye": (0.5, 0.8),
    "nose": (0.4, 0.45),
    "mouth": (0.35, 0.75),
}

#: Eye patch (height, width) in IODs of the locator that places a found face's features
#: (:class:`~eigenvision.FaceFinder`'s ``placer_``): twice as tall as an eye's own patch, the
#: brow and the upper cheek in (chosen on held-out HELEN faces: the user guide's "How the
#: shipped finder was built"). Its confidences tell faces from clutter less well:
#: :class:`~eigenvision.FaceFinder`'s checks keep the eye-sized patches.
PLACEMENT_EYE_PATCH = (1.0, 0.8)

# Face box around the eyes, in IODs: the IMM faces' 73-point outlines span
# 2.15 IOD across, 0.29 IOD above the eye line and 1.90 below it.
_BOX_WIDTH, _BOX_ABOVE, _BOX_BELOW = 2.15, 0.29, 1.90

_MIRRORED = {"left_eye": "right_eye", "right_eye": "left_eye"}

#: The face-detection window, in IODs: ``height`` and ``width``, the eye line
#: ``eye_row`` below its top, each eye centre ``eye_inset`` in from its side
#: (brows to mouth, cheek to cheek inside the face outline).
FACE_WINDOW = {"height": 1.6, "width": 1.4, "eye_row": 0.4, "eye_inset": 0.2}


def face_box(left_eye, right_eye) -> tuple[float, float, float, float]:
    """The face box ``(x, y, w, h)`` of a face with the given eye centres.

    Centred on the eyes' midpoint, 2.15 inter-ocular distances (IOD) wide,
    from 0.29 IOD above the eye line to 1.90 IOD below it: brows to chin
    on an upright face (the mean over the IMM faces' 73-point outlines).

    Parameters
    ----------
    left_eye, right_eye : (2,) array_like
        ``(x, y)`` pixels.

    Returns
    -------
    (x, y, w, h) tuple of float

    Examples
    --------
    >>> [round(v, 2) for v in face_box((10, 20), (30, 20))]
    [-1.5, 14.2, 43.0, 43.8]
    """
    left, right = eye_points(left_eye, right_eye)
    iod = float(np.linalg.norm(right - left))
    cx, cy = (left + right) / 2
    return (
        float(cx - _BOX_WIDTH * iod / 2),
        float(cy - _BOX_ABOVE * iod),
        _BOX_WIDTH * iod,
        (_BOX_ABOVE + _BOX_BELOW) * iod,
    )


def box_eyes(box) -> tuple[np.ndarray, np.ndarray, float]:
    """Where :func:`face_box` puts the eyes of a face box: its inverse for an upright face.

    Parameters
    ----------
    box : (x, y, w, h)

    Returns
    -------
    left_eye, right_eye : (2,) ndarray
        ``(x, y)`` pixels.
    iod : float

    Examples
    --------
    >>> left, right, iod = box_eyes(face_box((10, 20), (30, 20)))
    >>> left.round(6).tolist(), right.round(6).tolist(), round(iod, 6)
    ([10.0, 20.0], [30.0, 20.0], 20.0)
    """
    x, y, w, _ = (float(v) for v in box)
    iod = w / _BOX_WIDTH
    eye_y, cx = y + _BOX_ABOVE * iod, x + w / 2
    return np.array([cx - iod / 2, eye_y]), np.array([cx + iod / 2, eye_y]), iod


def face_windows(images, landmarks=None, *, iod=20, mirror=True) -> np.ndarray:
    """Faces cut to the face-detection window, eyes aligned, for training a face space.

    Each face is rotated, scaled and shifted (:func:`~eigenvision.transform.align`) so its
    eyes lie ``iod`` pixels apart on a horizontal line in a window of
    :data:`FACE_WINDOW` geometry: ``round(1.6 iod)`` high (0.4 IOD above the
    eye line, 1.2 below: brows to mouth) and ``round(1.4 iod)`` wide (0.2
    IOD beyond each eye). The window keeps to the inside of the face, as
    in Moghaddam & Pentland's detector: hair and background vary too much
    to model, and a space that must also explain them explains smooth
    clutter better than faces. On scikit-image's ``astronaut()`` a
    ``k = 10`` space of the IMM faces in this window ranks the face first;
    25 x 25 crops with hair and background (scikit-image's LFW subset,
    AT&T) rank it 100th to 2,000th.

    Parameters
    ----------
    images : ImageSet or (n, H, W[, 3]) ndarray
        Faces; an ImageSet brings its ``landmarks`` (e.g. :func:`load_imm`).
    landmarks : dict of str to (n, 2) ndarray, optional
        ``left_eye`` and ``right_eye`` ``(x, y)`` of every face (required for
        a plain array).
    iod : int, default 20
        Inter-ocular distance in the window, pixels: the smallest face
        :func:`detect` finds without upsampling the image.
    mirror : bool, default True
        Append the mirror images (left and right eye swap places).

    Returns
    -------
    (n, h, w) or (2n, h, w) ndarray of float64
        ``h, w = round(1.6 iod), round(1.4 iod)``. Standardise the windows
        (``normalize_images(..., standardize="norm")``) before fitting an
        :class:`Eigenspace` for ``detect(..., normalize="window")``.

    Examples
    --------
    >>> faces = np.zeros((1, 60, 60))
    >>> eyes = {"left_eye": [[20.0, 30.0]], "right_eye": [[40.0, 30.0]]}
    >>> face_windows(faces, eyes, iod=10).shape  # the face and its mirror image
    (2, 16, 14)

    With the IMM faces (``$EIGENVISION_DATA``), a face detector:

    >>> windows = normalize_images(face_windows(load_imm()), standardize="norm")  # doctest: +SKIP
    >>> best = detect(image, Eigenspace(10).fit(windows))[0]  # doctest: +SKIP
    >>> left_eye, right_eye = window_eyes(best)  # doctest: +SKIP
    """
    if not 5 <= iod <= 400:
        raise ValueError(f"iod must lie in [5, 400] pixels, got {iod!r}")
    faces, marks = faces_and_landmarks(
        images, landmarks, {"left_eye", "right_eye"}, caller="face_windows"
    )
    windows = np.stack(
        [
            face_window(face.astype(np.float64), left, right, iod=iod)
            for face, left, right in zip(faces, marks["left_eye"], marks["right_eye"], strict=True)
        ]
    )
    return np.concatenate([windows, windows[:, :, ::-1]]) if mirror else windows


def window_shape(iod) -> tuple[int, int]:
    """``(height, width)`` of the :data:`FACE_WINDOW` of a given inter-ocular distance.

    Parameters
    ----------
    iod : float
        Pixels between the eyes.

    Returns
    -------
    (int, int)

    Examples
    --------
    >>> window_shape(20)
    (32, 28)
    """
    return int(round(FACE_WINDOW["height"] * iod)), int(round(FACE_WINDOW["width"] * iod))


def augmented_face_windows(images, landmarks, *, iod=20, tilts=(0.0,)) -> np.ndarray:
    """Zero-mean, unit-norm face windows, tilted in the plane and mirrored (a face space's data).

    Parameters
    ----------
    images : (n, H, W) ndarray
    landmarks : dict
        ``left_eye`` and ``right_eye``, ``(n, 2)`` ``(x, y)`` each.
    iod : int, default 20
        Inter-ocular distance of the window (:func:`window_shape`).
    tilts : sequence of float, default (0.0,)
        Degrees: each face is cut once per tilt (and mirrored).

    Returns
    -------
    (2 n len(tilts), h, w) ndarray
    """
    left, right = landmarks["left_eye"], landmarks["right_eye"]
    centre = (left + right) / 2
    stacks = []
    for angle in tilts:
        theta = np.deg2rad(angle)
        rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        # eyes moved by +angle around their midpoint: the window sees the face tilted by -angle
        moved = {
            "left_eye": centre + (left - centre) @ rotation.T,
            "right_eye": centre + (right - centre) @ rotation.T,
        }
        stacks.append(face_windows(images, moved, iod=iod, mirror=True))
    return unit_norm(np.concatenate(stacks))


def jittered_face_windows(images, landmarks, *, iod=20, copies=2, scale=0.08, shift=1.0, seed=0):
    """Standardised face windows a little off in size and place, as a pyramid's grid meets them.

    A search sees a face at the nearest of its pyramid's sizes and map
    pixels: up to half a step off in size and half a pixel in place. A first
    test trained on windows cut exactly on the eyes would reject such faces.

    Parameters
    ----------
    images : (n, H, W) ndarray
    landmarks : dict
        ``left_eye`` and ``right_eye``, ``(n, 2)`` ``(x, y)`` each.
    iod : int, default 20
    copies : int, default 2
        Jittered cuts of each face (each mirrored too).
    scale : float, default 0.08
        Eye distances are multiplied by a factor drawn uniformly in
        ``[1 - scale, 1 + scale]``.
    shift : float, default 1.0
        The eyes' midpoint moves by up to this many window pixels along each axis.
    seed : int, default 0

    Returns
    -------
    (2 n copies, h, w) ndarray
        Zero-mean, of unit norm.
    """
    rng = np.random.default_rng(seed)
    left, right = (np.asarray(landmarks[name], dtype=float) for name in ("left_eye", "right_eye"))
    centre = (left + right) / 2
    pixel = np.linalg.norm(right - left, axis=1, keepdims=True) / iod
    stacks = []
    for _ in range(copies):
        factor = rng.uniform(1 - scale, 1 + scale, (len(left), 1))
        moved = centre + rng.uniform(-shift, shift, centre.shape) * pixel
        eyes = {
            "left_eye": moved + (left - centre) * factor,
            "right_eye": moved + (right - centre) * factor,
        }
        stacks.append(face_windows(images, eyes, iod=iod, mirror=True))
    return unit_norm(np.concatenate(stacks))


def face_window(image, left_eye, right_eye, *, iod=20) -> np.ndarray:
    """One face window (:data:`FACE_WINDOW` geometry) cut from ``image`` on its eyes.

    Parameters
    ----------
    image : (H, W) ndarray
    left_eye, right_eye : (x, y)
    iod : float, default 20
        Inter-ocular distance in the window.

    Returns
    -------
    (h, w) ndarray
        ``window_shape(iod)``; the eyes level, ``iod`` apart, where
        :func:`window_eyes` reads them back. Bilinear sampling without
        smoothing, as :func:`face_windows_at` without ``antialias``: the
        shipped ``FaceFinder`` was trained on such windows.
    """
    shape = window_shape(iod)
    row = FACE_WINDOW["eye_row"] * iod / (shape[0] - 1)
    inset = FACE_WINDOW["eye_inset"] * iod / (shape[1] - 1)
    eyes = ((inset, row), (inset + iod / (shape[1] - 1), row))
    return align(image, left_eye, right_eye, shape=shape, eye_positions=eyes, antialias=False)


def face_windows_at(image, eyes, *, iod=20, antialias=False) -> np.ndarray:
    """Many face windows of one image at once: :func:`face_window` for each eye pair.

    One bilinear resampling of all windows (:func:`~eigenvision.transform.sample_grids`,
    edges repeated): without ``antialias``, equal to stacking :func:`face_window`
    calls to round-off, and faster for the thousands of candidates of a photo
    (``benchmarks/bench_face_windows.py`` times the two).

    Parameters
    ----------
    image : (H, W) ndarray or HalfOctaves
        A :class:`HalfOctaves` keeps its reductions for the next call
        (windows cut from one photo again and again, as a search does).
    eyes : (n, 2, 2) array-like
        ``[(left_x, left_y), (right_x, right_y)]`` of every window.
    iod : float, default 20
    antialias : bool, default False
        Cut each window from the half-octave reduction of ``image``
        (:func:`~eigenvision.transform.resize`, antialiased) in which its
        eyes lie ``1.5 iod`` to ``1.5 sqrt(2) iod`` apart (from ``image``
        itself for smaller faces). Bilinear sampling alone skips pixels of
        a face many times larger than the window: the window aliases, and
        a face/non-face decision trained on smaller faces rejects it
        (:class:`~eigenvision.faces.decision.FaceDecision`'s ``antialias``).
        Not the full smoothing of :func:`~eigenvision.transform.align`: the
        last 1.5-2.1x of shrinking stays bilinear, as in the finder's training windows
        (:func:`face_window`); a finder trained on smoothed windows found
        fewer faces (:func:`~eigenvision.faces.recipes.build_finder`).

    Returns
    -------
    (n, h, w) ndarray
        ``h, w = window_shape(iod)``.
    """
    reductions = image if isinstance(image, HalfOctaves) else None
    image = reductions.image if reductions is not None else np.asarray(image, dtype=np.float64)
    eyes = np.asarray(eyes, dtype=np.float64).reshape(-1, 2, 2)
    left = eyes[:, 0, 0] + 1j * eyes[:, 0, 1]
    right = eyes[:, 1, 0] + 1j * eyes[:, 1, 1]
    if np.any(left == right) or not np.all(np.isfinite(eyes)):
        raise ValueError("every eye pair must be two distinct finite points")
    if antialias and len(eyes):
        return _reduced_windows(HalfOctaves(image) if reductions is None else reductions, eyes, iod)
    row = FACE_WINDOW["eye_row"] * iod
    inset = FACE_WINDOW["eye_inset"] * iod
    step = (right - left) / iod  # one window pixel, in the image
    # window pixel (i, j) lies (j - inset, i - row) window pixels from the left eye, turned
    affine = np.empty((len(eyes), 2, 3))
    affine[:, 0, 0], affine[:, 0, 1] = step.real, step.imag
    affine[:, 1, 0], affine[:, 1, 1] = -step.imag, step.real
    affine[:, 0, 2] = eyes[:, 0, 1] - step.imag * inset - step.real * row
    affine[:, 1, 2] = eyes[:, 0, 0] - step.real * inset + step.imag * row
    return sample_grids(image, affine, window_shape(iod))


#: With ``antialias``, the eye distance (in window IODs) down to which a photo is reduced before
#: its windows are cut: chosen on the 70 validation photos of ``FaceFinder`` (1, 1.25, 1.5,
#: 1.75 and 2.5 all found more faces than no reduction; 1.25 and 1.5 the most).
_REDUCED_IOD = 1.5


class HalfOctaves:
    """An image and its half-octave reductions, each made once, when first asked for.

    :func:`face_windows_at` with ``antialias`` cuts windows from them: a
    search cuts windows from one photo several times (candidates, then
    their moves, the faces kept), and remaking the reductions each time cost
    about 0.07 s of a 640-pixel photo's search.

    Parameters
    ----------
    image : (H, W) ndarray
        Copied as float64: changing it later changes nothing here.
    """

    def __init__(self, image):
        self.image = np.array(image, dtype=np.float64)
        self._levels = {0: self.image}

    def __getitem__(self, step) -> np.ndarray:
        """The image reduced ``2 ** (step / 2)`` times (:func:`~eigenvision.transform.resize`,
        antialiased); ``step`` 0 is the image."""
        step = int(step)
        if step not in self._levels:
            self._levels[step] = resize(self.image, self.shape(step))
        return self._levels[step]

    def shape(self, step) -> tuple:
        """The shape of a reduction.

        Parameters
        ----------
        step : int
            Half-octaves down (0: the image).

        Returns
        -------
        (h, w) tuple of int
            Each side divided by ``2 ** (step / 2)``, rounded (at least 1).
        """
        return tuple(max(1, round(side * 2.0 ** (-step / 2))) for side in self.image.shape)

    def resized(self, shape) -> np.ndarray:
        """The image resized to ``shape``, from the smallest reduction at least that large.

        A pyramid level between two half-octaves is resampled from the finer one by a
        factor under ``sqrt(2)``, not from the image: an image pyramid costs a few
        reductions of the image instead of one per level.

        Parameters
        ----------
        shape : (h, w)
            Larger than the image's: the image enlarged (a search below its window).

        Returns
        -------
        (h, w) ndarray
            The reduction itself (not a copy) when it has ``shape``.
        """
        shape = tuple(int(v) for v in shape)
        ratio = min(np.divide(self.image.shape, shape))
        step = max(int(np.floor(2 * np.log2(ratio))), 0)
        while step > 0 and any(a < b for a, b in zip(self.shape(step), shape, strict=True)):
            step -= 1
        source = self[step]
        return source if source.shape == shape else resize(source, shape)


def _reduced_windows(reductions, eyes, iod):
    """:func:`face_windows_at` with ``antialias``: each window from its half-octave reduction."""
    distance = np.hypot(*(eyes[:, 1] - eyes[:, 0]).T)
    level = np.floor(2 * np.log2(distance / (_REDUCED_IOD * iod))).clip(0, 64).astype(int)
    windows = np.empty((len(eyes), *window_shape(iod)))
    for step in np.unique(level):
        chosen = level == step
        windows[chosen] = face_windows_at(
            reductions[step],
            resize_points(eyes[chosen], reductions.image.shape, reductions.shape(step)),
            iod=iod,
        )
    return windows


def window_eyes(detection) -> tuple[np.ndarray, np.ndarray]:
    """Left and right eye ``(x, y)`` of a window found with a :func:`face_windows` space.

    Parameters
    ----------
    detection : Detection
        From :func:`detect` with a space trained on :func:`face_windows`
        (or anything with ``x``, ``y`` and ``width``, arrays of ``n``
        windows too).

    Returns
    -------
    left_eye, right_eye : (2,) ndarray
        Where the training faces' eyes lie in such a window (``(n, 2)``
        for ``n`` windows); pass them to :func:`face_box` for
        :meth:`FeatureDetector.locate`'s ``box``.
    """
    iod = np.divide(detection.width, FACE_WINDOW["width"])
    y = detection.y + FACE_WINDOW["eye_row"] * iod
    left = detection.x + FACE_WINDOW["eye_inset"] * iod
    return np.stack([left, y], axis=-1), np.stack([left + iod, y], axis=-1)


def eye_frame(left, right):
    """The frame of a face's eyes.

    Parameters
    ----------
    left, right : (2,) ndarray
        Eye centres ``(x, y)``.

    Returns
    -------
    origin : (2,) ndarray
        The eyes' midpoint.
    ex, ey : (2,) ndarray
        Unit vectors along the left-to-right eye line and perpendicular to it
        (down the face).
    iod : float
    """
    axis = right - left
    iod = np.linalg.norm(axis)
    ex = axis / iod
    ey = np.array([-ex[1], ex[0]])
    return (left + right) / 2, ex, ey, iod


def mirror_landmarks(landmarks, width):
    """Landmarks of the left-right mirrored image: x flipped, left and right eye swapped.

    Parameters
    ----------
    landmarks : dict of str to (..., 2) array-like
    width : int
        Image width ``W``; ``x`` becomes ``W - 1 - x``.

    Returns
    -------
    dict of str to (..., 2) ndarray

    Examples
    --------
    >>> mirror_landmarks({"left_eye": [1.0, 5.0], "right_eye": [8.0, 5.0]}, 10)
    {'right_eye': array([8., 5.]), 'left_eye': array([1., 5.])}
    """
    mirrored = {}
    for name, points in landmarks.items():
        flipped = np.array(points, dtype=np.float64)
        flipped[..., 0] = width - 1 - flipped[..., 0]
        mirrored[_MIRRORED.get(name, name)] = flipped
    return mirrored


def faces_and_landmarks(images, landmarks, required, *, caller="FeatureDetector.fit"):
    """Grey face stack and checked landmarks from an ImageSet or an array with landmarks.

    Parameters
    ----------
    images : ImageSet or (n, H, W[, 3]) ndarray
    landmarks : dict of str to (n, 2) array_like, optional
        Default the ImageSet's.
    required : set of str
        Landmark names that must be there.
    caller : str
        Named in the error messages.

    Returns
    -------
    faces : (n, H, W) ndarray
    marks : dict of str to (n, 2) ndarray of float64
        The ``required`` landmarks, finite, eyes at least 2 pixels apart.
    """
    if isinstance(images, ImageSet):
        landmarks = images.landmarks if landmarks is None else landmarks
        images = images.images
    faces = np.asarray(images)
    if faces.ndim not in (3, 4) or len(faces) == 0:
        raise ValueError(f"expected a stack of faces (n, H, W[, 3]), got shape {faces.shape}")
    if not landmarks:
        raise ValueError(
            f"{caller} needs landmarks: an ImageSet with landmarks (e.g. load_imm()) "
            "or landmarks={name: (n, 2) array}"
        )
    missing = sorted(required - set(landmarks))
    if missing:
        raise ValueError(f"landmarks lack {missing}; have {sorted(landmarks)}")
    marks = {}
    for name in required:
        points = np.asarray(landmarks[name], dtype=np.float64)
        if points.shape != (len(faces), 2):
            raise ValueError(f"landmarks[{name!r}] must be ({len(faces)}, 2), got {points.shape}")
        if not np.all(np.isfinite(points)):
            raise ValueError(f"landmarks[{name!r}] contains NaN or infinite values")
        marks[name] = points
    if np.any(np.linalg.norm(marks["right_eye"] - marks["left_eye"], axis=1) < 2):
        raise ValueError("some faces have their two eye landmarks less than 2 pixels apart")
    if faces.ndim == 4:
        faces = np.stack([to_gray(face) for face in faces])
    return faces, marks
