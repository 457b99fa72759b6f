"""From a photograph to its faces: the trained finder that ships, and the data it was made from.

:func:`find_faces` runs the :class:`~eigenvision.FaceFinder` of the
project's ``data/face_finder.npz`` (:func:`~eigenvision.align_face` cuts a
found face to a canonical crop). The photos' splits by photo and by person
(:func:`helen_split`, :func:`lfw_split`) and their annotated faces live here;
the recipe that made the shipped finder from them (``eigenvision
build-models``) is :func:`eigenvision.faces.recipes.build_finder`.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import numpy as np
from skimage import data as skimage_data

from .. import datasets
from .._errors import EigenvisionError
from ..normalize import to_gray
from ..persist import load
from .finder import FaceFinder
from .geometry import face_box

__all__ = [
    "find_faces",
    "default_finder",
    "small_face_finder",
    "SMALL_FACES",
    "helen_split",
    "lfw_split",
    "DEFAULT_FINDER",
    "sample_picture",
    "annotated_helen_photo",
    "lfw_face",
]

#: Where the trained finder ships: the project's top-level ``data/``.
DEFAULT_FINDER = Path(__file__).resolve().parents[2] / "data" / "face_finder.npz"


#: The smallest face a search for small faces reaches (:func:`small_face_finder`), as a
#: fraction of the finder's eye distance: the pyramid's levels continue below the window to the
#: one nearest it. Chosen on the ``small_faces`` experiment's tuning half: as many faces as
#: half the eye distance, in less time (``HISTORY.md``).
SMALL_FACES = 0.625


def small_face_finder(finder=None) -> FaceFinder:
    """A copy of ``finder`` that also searches faces smaller than its window.

    Its ``search__min_iod`` is :data:`SMALL_FACES` times its eye distance (10 pixels for the
    shipped finder, whose window sees eyes 16 pixels apart): the photo enlarged for the
    upright search's finest levels. Slower; what ``eigenvision detect --small-faces`` and
    the app's "Small faces too" search with.

    Parameters
    ----------
    finder : FaceFinder, optional
        Default the shipped one (:func:`default_finder`).

    Returns
    -------
    FaceFinder
    """
    finder = default_finder() if finder is None else copy.copy(finder)
    return finder.set_params(search__min_iod=SMALL_FACES * finder.iod)


def default_finder(path=None) -> FaceFinder:
    """The trained finder, read from ``data/face_finder.npz`` (or ``path``) and checked.

    Read once per process (again when the file changes); each call gets its own shallow
    copy (:meth:`~eigenvision.FaceFinder.__copy__`), so setting its parameters or its stages'
    (``finder.set_params(search__rotations=(0.0,))``) changes no other caller's.

    Parameters
    ----------
    path : path-like, optional
        Another model file.

    Returns
    -------
    FaceFinder
    """
    path = DEFAULT_FINDER if path is None else Path(path)
    if not path.is_file():
        raise EigenvisionError(
            f"no trained face finder at {path}; rebuild it from the datasets with "
            "'eigenvision build-models' (needs $EIGENVISION_DATA with helen_train/, lfw_train/ and "
            "imm_frontal/)"
        )
    status = path.stat()
    return copy.copy(_read_finder(str(path.resolve()), status.st_mtime_ns, status.st_size))


@functools.lru_cache(maxsize=4)
def _read_finder(path, modified, size) -> FaceFinder:
    """The finder in ``path`` as it was at ``modified`` with ``size`` bytes."""
    finder = load(path)
    if not isinstance(finder, FaceFinder):
        raise EigenvisionError(f"{path} holds a {type(finder).__name__}, not a FaceFinder")
    return finder


def find_faces(image, *, finder=None, threshold=None, max_faces=50) -> list:
    """Every face in a photograph, with its eyes, nose and mouth.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) ndarray
        A photo of any size: photos larger than the finder's ``max_side``
        (800 pixels) are reduced first, so time and memory stay bounded
        whatever the upload's size (``benchmarks/README.md``); results are
        in ``image``'s pixels.
    finder : FaceFinder, optional
        Default: the one trained on HELEN, IMM and LFW that ships in ``data/``.
    threshold : float, optional
        Smallest probability of a face (default the finder's, calibrated on
        held-out HELEN photos).
    max_faces : int, default 50

    Returns
    -------
    list of Face
        Most confident first; empty when there is none.

    Examples
    --------
    >>> from skimage import data
    >>> faces = find_faces(data.astronaut())  # doctest: +SKIP
    >>> faces[0].left_eye, faces[0].confidence  # doctest: +SKIP
    """
    return (finder or default_finder()).find(image, threshold=threshold, max_faces=max_faces)


def helen_split(photo_ids, *, held_out=5):
    """Training and held-out photo ids: every ``held_out``-th distinct photo is held out.

    Parameters
    ----------
    photo_ids : iterable of str
    held_out : int, default 5
        One photo in ``held_out`` (a fifth by default) is held out.

    Returns
    -------
    train, test : sets of str
        Disjoint: the faces of one photo are all on one side.
    """
    ids = sorted(set(photo_ids))
    test = set(ids[::held_out])
    return set(ids) - test, test


def lfw_split(people, *, held_out=5):
    """Training and held-out LFW people: every ``held_out``-th person (sorted by name) is held out.

    Parameters
    ----------
    people : iterable of str
    held_out : int, default 5

    Returns
    -------
    train, test : sets of str
        Disjoint: all photos of a person are on one side.
    """
    names = sorted(set(people))
    test = set(names[::held_out])
    return set(names) - test, test


def annotated_helen_photo(image_path, pts_path, *, max_side=640):
    """A HELEN photo with what a detection is counted against
    (:func:`~eigenvision.evaluate.hits_and_alarms`).

    Parameters
    ----------
    image_path, pts_path : path-like
        As :func:`~eigenvision.datasets.helen_files` gives them.
    max_side : int, default 640

    Returns
    -------
    image : (H, W) ndarray
    centre : (2,) ndarray
        The annotated face's landmarks' centre.
    iod : float
        Its inter-ocular distance.
    others : (n, 4) ndarray
        The faces it holds unannotated (:func:`~eigenvision.datasets.helen_other_faces`).
    """
    image, points = datasets.load_helen_photo(image_path, pts_path, max_side=max_side)
    marks = datasets.face_landmarks(points)
    iod = float(np.linalg.norm(marks["right_eye"] - marks["left_eye"]))
    return image, points.mean(axis=0), iod, datasets.helen_other_faces(image_path, image.shape)


def lfw_face():
    """Where an LFW photo's face is: the centre of the face box of
    :data:`~eigenvision.datasets.LFW_EYES` and their distance.

    Returns
    -------
    centre : (float, float)
    iod : float
    """
    eyes = np.asarray(datasets.LFW_EYES, dtype=float)
    x, y, w, h = face_box(*eyes)
    return (x + (w - 1) / 2, y + (h - 1) / 2), float(np.linalg.norm(eyes[1] - eyes[0]))


def sample_picture(name: str) -> np.ndarray:
    """One of scikit-image's sample pictures, grey, float in [0, 1].

    Parameters
    ----------
    name : str
        E.g. ``"astronaut"`` or one of :data:`BACKGROUNDS`.

    Returns
    -------
    (H, W) ndarray
    """
    return to_gray(getattr(skimage_data, name)()).astype(np.float64)  # RGBA: on white
