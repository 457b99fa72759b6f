"""The photo pipeline's front end for recognition: faces cut to canonical crops.

:func:`align_face` cuts a face on its eyes; :func:`single_face` picks the one
face of an enrolment photo and :func:`photo_faces` turns photos into crops.
:class:`~eigenvision.Recognizer` reads photos through these only, for
enrolment and ``identify`` alike.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._base import progress as show_progress
from .._errors import FaceCountError, NoFaceError
from .._spec import Param
from ..identity.deep import five_point_chip
from ..imageset import ImageSet
from ..normalize import to_gray
from ..transform import DEFAULT_EYE_POSITIONS, align, as_float_image, unit_light

__all__ = [
    "align_face",
    "face_thumbnail",
    "single_face",
    "identity_threshold",
    "identity_faces",
    "photo_faces",
    "FINDER",
]

#: What a face finder must be to cut faces from photos: anything with ``find`` and ``threshold``
#: (:class:`~eigenvision.FaceFinder`, or a stand-in); ``Recognizer(finder=)`` declares the same.
FINDER = Param("model", needs=("find", "threshold"))


def align_face(
    image,
    face,
    *,
    shape=(112, 92),
    eye_positions=DEFAULT_EYE_POSITIONS,
    antialias=True,
    as_gray=True,
):
    """Cut a face to a canonical crop: the similarity transform that puts its eyes in place.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) ndarray
        The photo the face is in: 8-bit or 16-bit, or float (outside [0, 1], as
        0-255 or centred at 0, it is brought to [0, 1] by its own range).
    face : Face or ((x, y), (x, y))
        A found face (anything with ``left_eye`` and ``right_eye``), or its
        left and right eye.
    shape : (H, W), default (112, 92)
        The crop (AT&T's size).
    eye_positions : ((u, v), (u, v)), default ((0.3, 0.4), (0.7, 0.4))
        Where the eyes land, as fractions of the crop's width and height.
    antialias : bool, default True
        Smooth a face larger than the crop before sampling it
        (:func:`~eigenvision.transform.align`): a photo's face is often 2 to
        10 times the crop's size.
    as_gray : bool, default True
        Colour becomes grey; False: a colour crop ``(H, W, 3)``, each channel aligned alike
        (a grey photo's grey over the three channels, so that crops of any photos stack).

    Returns
    -------
    (H, W) or (H, W, 3) ndarray

    Examples
    --------
    >>> photo = np.zeros((50, 60))
    >>> align_face(photo, ((20.0, 25.0), (40.0, 25.0)), shape=(20, 16)).shape
    (20, 16)
    """
    if hasattr(face, "left_eye"):
        left, right = face.left_eye, face.right_eye
    elif isinstance(face, (tuple, list, np.ndarray)) and len(face) == 2:
        left, right = face
    else:
        raise ValueError(f"face must be a Face or its two eyes ((x, y), (x, y)), got {face!r}")
    image = unit_light(as_float_image(image, allow_colour=True))
    options = dict(shape=shape, eye_positions=eye_positions, antialias=antialias)
    if not as_gray:
        if image.ndim == 2:
            return np.repeat(align(image, left, right, **options)[..., None], 3, axis=2)
        channels = [align(image[..., c], left, right, **options) for c in range(3)]
        return np.stack(channels, axis=-1)
    grey = to_gray(image[..., :3]) if image.ndim == 3 else image
    return align(grey, left, right, **options)


def face_thumbnail(photo, face, *, margin=0.25):
    """The face's box and a margin around it, cut from the photo as it is (to show, not match).

    Parameters
    ----------
    photo : (H, W) or (H, W, 3) ndarray
        Values in [0, 1].
    face : Face
        In ``photo``'s pixels.
    margin : float, default 0.25
        Added on every side, as a share of the box's longer side; clipped at the photo's edge.

    Returns
    -------
    (h, w) or (h, w, 3) ndarray
        In [0, 1].
    """
    x, y, w, h = face.box
    extra = margin * max(w, h)
    top, left = max(0, int(y - extra)), max(0, int(x - extra))
    bottom = min(photo.shape[0], int(np.ceil(y + h + extra)))
    right = min(photo.shape[1], int(np.ceil(x + w + extra)))
    return np.clip(photo[top:bottom, left:right], 0, 1)


def identity_threshold(finder) -> float:
    """The smallest probability of a face that identity work takes from ``finder``.

    The finder's ``identity_threshold`` where it has one (the shipped finder's
    is stricter than its detection ``threshold``: a badge or a sign found as
    a face at the detection threshold is not named, compared, grouped or
    enrolled), else its ``threshold``.

    Parameters
    ----------
    finder : FaceFinder
        Anything with ``find`` and ``threshold``.

    Returns
    -------
    float
    """
    stricter = getattr(finder, "identity_threshold", None)
    return float(finder.threshold if stricter is None else stricter)


def identity_faces(finder, photo, *, max_faces=50, return_likeliest=False):
    """The faces of a photo that identity work takes: :meth:`FaceFinder.find` at
    :func:`identity_threshold`.

    Parameters
    ----------
    finder : FaceFinder
    photo : (H, W) or (H, W, 3) ndarray
    max_faces : int, default 50
    return_likeliest : bool, default False
        As :meth:`FaceFinder.find`.

    Returns
    -------
    list of Face, or (list of Face, float or None)
    """
    return finder.find(
        photo,
        threshold=identity_threshold(finder),
        max_faces=max_faces,
        return_likeliest=return_likeliest,
    )


def no_face_advice(finder) -> str:
    """How to let more faces through: the threshold identity work reads, and its setting."""
    setting = (
        "finder.threshold"
        if getattr(finder, "identity_threshold", None) is None
        else "finder.identity_threshold"
    )
    return (
        "use a photo with the face large and frontal, or lower the threshold "
        f"(--face-threshold, or {setting})"
    )


def single_face(finder, photo, *, name="the photo"):
    """The one face of a photo that shows one person (for enrolment).

    The finder's most confident face at :func:`identity_threshold`. A second face counts
    only when it is at least half as wide as the first: smaller ones are
    bystanders or the clutter a wild-face finder also accepts (a studio
    portrait's background gave false faces of a sixth of the subject's width
    at the same probability as the subject's).

    Parameters
    ----------
    finder : FaceFinder
        Anything with the :meth:`FaceFinder.find` interface and ``threshold``.
    photo : (H, W) or (H, W, 3) ndarray
    name : str, optional
        How the error messages name the photo.

    Returns
    -------
    Face

    Raises
    ------
    NoFaceError
        No face at :func:`identity_threshold`.
    FaceCountError
        Several faces of similar size.
    """
    check_finder(finder)
    found, likeliest = identity_faces(finder, photo, max_faces=5, return_likeliest=True)
    if not found:
        best = "" if likeliest is None else f" (the likeliest: p {likeliest:.4f} at most)"
        raise NoFaceError(
            f"{name} shows no face at the identity threshold {identity_threshold(finder):g}"
            f"{best}: {no_face_advice(finder)}"
        )
    first = found[0]
    rivals = [face for face in found[1:] if face.box[2] >= 0.5 * first.box[2]]
    if rivals:
        raise FaceCountError(
            f"{name} shows {1 + len(rivals)} faces of similar size; enrolment takes one person per "
            "photo: crop the photo to that person, or raise the threshold (--face-threshold, or "
            "finder.identity_threshold)"
        )
    return first


def photo_faces(
    finder,
    photos,
    labels=None,
    *,
    shape=(56, 46),
    eye_positions=DEFAULT_EYE_POSITIONS,
    every_face=False,
    names=None,
    on_error="raise",
    progress=False,
    as_gray=True,
    cut=None,
):
    """The faces of uncropped photos, each cut on its eyes (:func:`~eigenvision.align_face`).

    Parameters
    ----------
    finder : FaceFinder
        Anything with the :meth:`FaceFinder.find` interface and ``threshold``.
    photos : sequence of (H, W) or (H, W, 3) ndarray, or ImageSet
        A list, or an array whose first axis runs over photos; one 2-D array
        is one grey photo. An ImageSet brings its labels and names.
    labels : (n,) array-like, optional
        One per photo.
    shape : (h, w), default (56, 46)
        The aligned crop.
    eye_positions : ((u, v), (u, v)), optional
        Where the eyes go in it (:func:`align_face`).
    every_face : bool, default False
        Every face the finder finds in a photo (none or several), each with
        the photo's label; by default the photo's one face
        (:func:`single_face`: none or several is an error).
    names : (n,) sequence of str, optional
        How messages name the photos (their files); default their index and label.
    on_error : {"raise", "skip"} or callable, default "raise"
        For a photo without its one face (``every_face=False``): stop with
        :class:`~eigenvision.FaceCountError`, or leave it out with one warning
        that names every photo left out and why; a callable
        ``on_error(index, error)`` is told of each one left out instead
        (whatever the warning filters let through).
    progress : bool, default False
        Progress over the photos (the search takes seconds each).
    as_gray : bool, default True
        Grey crops; False: colour photos give colour crops (a learned description reads them).
    cut : callable, optional
        ``cut(photo, face)`` cuts each face instead of :func:`align_face` at ``shape``
        and ``eye_positions`` (an identity model's own cut,
        :func:`~eigenvision.faces.compare.model_crop`).

    Returns
    -------
    crops : (m, h, w) ndarray
        ``m`` is the number of photos (less those left out), or of faces
        found with ``every_face``.
    labels : (m,) ndarray or None
    """
    check_finder(finder)
    if not callable(on_error) and on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise', 'skip' or a callable, got {on_error!r}")
    if isinstance(photos, ImageSet):
        labels = photos.labels if labels is None else labels
        names = photos.names if names is None else names
        photos = photos.images
    photos = [photos] if isinstance(photos, np.ndarray) and photos.ndim == 2 else list(photos)
    if not photos:
        raise ValueError("no photos given: pass a list of photos, (H, W) or (H, W, 3) arrays")
    for given, what in ((labels, "labels"), (names, "names")):
        if given is not None and len(given) != len(photos):
            raise ValueError(f"{what} must be one per photo: {len(given)} for {len(photos)} photos")
    crops, owners, left_out = [], [], []
    searched = show_progress(
        enumerate(photos), total=len(photos), desc="finding faces", enabled=progress
    )
    for index, photo in searched:
        if every_face:
            found = identity_faces(finder, photo)
        else:
            name = (
                str(names[index])
                if names is not None
                else f"photo {index}" + ("" if labels is None else f" ({labels[index]})")
            )
            try:
                found = [single_face(finder, photo, name=name)]
            except FaceCountError as exc:
                if on_error == "raise":
                    raise
                if callable(on_error):
                    on_error(index, exc)
                    continue
                reason = "no face found" if isinstance(exc, NoFaceError) else "several faces"
                left_out.append(f"{name} ({reason})")
                continue
        crops += [
            align_face(photo, face, shape=shape, eye_positions=eye_positions, as_gray=as_gray)
            if cut is None
            else cut(photo, face)
            for face in found
        ]
        owners += [index] * len(found)
    if left_out:
        warnings.warn(
            f"left out {len(left_out)} of {len(photos)} photos without one face at the "
            f"identity threshold {identity_threshold(finder):g}: {', '.join(left_out)}",
            stacklevel=2,
        )
    crops = np.stack(crops) if crops else np.empty((0, *shape))
    return crops, None if labels is None else np.asarray(labels)[owners]


def check_finder(finder):
    """Refuse a finder that cannot find (None, a path, ...) before any photo is searched."""
    if not FINDER.accepts(finder):
        raise TypeError(
            f"finder must be a face finder (find() and threshold), got {type(finder).__name__}: "
            "use ev.default_finder(), or ev.load('finder.npz')"
        )


def model_crop(photo, face, model):
    """A face cut as ``model`` was trained on: its crop size and eye positions, or dlib's
    chip (:func:`~eigenvision.identity.deep.five_point_chip`) for a model aligned on five points.

    Parameters
    ----------
    photo : (H, W) or (H, W, 3) ndarray
    face : Face or ((x, y), (x, y))
    model : IdentityModel

    Returns
    -------
    (H, W) or (H, W, 3) ndarray
        In colour where the model reads colour (its ``"deep"`` description) and the photo has it.
    """
    if model.alignment == "five_points":
        return five_point_chip(photo, face)
    positions = tuple(tuple(float(v) for v in eye) for eye in model.eye_positions)
    return align_face(
        photo,
        face,
        shape=tuple(model.shape),
        eye_positions=positions,
        as_gray=not model.colour,
    )
