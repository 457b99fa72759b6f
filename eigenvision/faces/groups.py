"""Faces grouped by person: every face of a set of photos, clustered by identity.

The stage after finding: each face is cut as the identity model was trained
(:func:`~eigenvision.faces.compare.model_crop`), the model scores every pair
of faces (the normalised log-likelihood ratio of one person), and average-linkage
clustering merges groups while their faces are likely one person. By default
that probability is learnt from the set itself
(:func:`~eigenvision.cluster.pair_mixture`: the set's pairs of one person and
of two, wherever conditions put their scores and whatever their shares), so
that conditions that make every face of the set look alike (one studio, one
camera) do not merge everyone, nor a few people in many photos fall apart.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .._base import counted
from .._base import progress as show_progress
from .._errors import UnreadableFilesWarning
from .._spec import Param, check_arguments
from ..cluster import METHODS, average_linkage, cluster, pair_mixture
from ..dask_engine import import_dask, shared
from ..identity.model import CROPS_AT_ONCE  # crops described at a time as the photos come
from .compare import faces_of_photo, finder_and_model

__all__ = [
    "cluster_faces",
    "group_crops",
    "group_codes",
    "faces_of_photo",
    "grouping_summary",
    "MIN_SET",
    "LEARNT_CUT",
    "CALIBRATED_CUT",
]

#: The fewest faces whose two kinds of pairs are learnt from the set; fewer use the model's
#: calibration.
MIN_SET = 12
#: Where merging stops by default when the set's two kinds of pairs are learnt: the mean
#: probability of one person between two groups' faces (chosen on LFW people held out of the
#: model, HISTORY.md; a person's few unlike photos pull the mean of their group's pairs under
#: even odds).
LEARNT_CUT = 0.2
#: Where merging stops by default on the model's calibrated probability (``adapt=False``, and
#: sets too small or too uniform to learn from): even odds.
CALIBRATED_CUT = 0.5

_THRESHOLD = Param("real", 0, 1, open_low=True, open_high=True, optional=True)
_GROUPS = Param("int", 1, 1_000_000, optional=True)


def cluster_faces(
    photos,
    *,
    finder=None,
    model=None,
    method="agglomerative",
    n_people=None,
    threshold=None,
    adapt=True,
    on_error="raise",
    backend="local",
    progress=False,
):
    """Every face of the photos, grouped by person; the largest group first.

    Parameters
    ----------
    photos : sequence of (H, W) or (H, W, 3) ndarray or path-like
        Photos of any size, any number of faces each; files are read one at a
        time, decoded reduced to the finder's ``max_side`` (memory does not
        grow with their size), and their faces given in the file's pixels.
    finder : FaceFinder, optional
        Default :func:`~eigenvision.default_finder`.
    model : IdentityModel, optional
        Default :func:`~eigenvision.default_identity_model`.
    method : {"agglomerative", "spectral", "kmeans"}, default "agglomerative"
        ``"agglomerative"`` needs no count: it cuts by ``threshold``. The
        others (:func:`~eigenvision.cluster` on the model's probability)
        estimate the count when ``n_people`` is not given.
    n_people : int, optional
        The number of groups, when known.
    threshold : float, optional
        ``"agglomerative"`` without ``n_people``: two groups merge while the
        mean probability that a face of one and a face of the other are one
        person stays above it (default :data:`LEARNT_CUT` where the
        probability is learnt from the set, :data:`CALIBRATED_CUT` by the
        model's calibration). Higher: purer, smaller groups.
    adapt : bool, default True
        Learn that probability from the set (:func:`~eigenvision.cluster.pair_mixture`,
        sets of at least :data:`MIN_SET` faces whose scores show two kinds of
        pairs); otherwise, and with ``adapt=False``, it is the model's
        calibrated probability (``model.probability``), fitted on LFW's news
        photos.
    on_error : {"raise", "skip"} or callable, default "raise"
        A file that cannot be read as a photo: stop with
        :class:`~eigenvision.ImageLoadError`, or leave it out with one warning
        naming every file left out; a callable ``on_error(index, error)`` is
        told of each one it leaves out (whatever the warning filters let
        through), as ``os.walk``'s ``onerror`` is.
    backend : {"local", "dask"}, default "local"
        ``"dask"``: the faces are found and cut as Dask tasks, one a photo, on
        the active client's workers (:mod:`eigenvision.dask_engine`), and
        grouped here; file paths travel, not pixels.
    progress : bool, default False
        Progress over the photos (``"local"``): a bar, or lines in a log.

    Returns
    -------
    list of list of (int, Face)
        Each group's faces as ``(photo index, face)``, in photo order; groups
        by decreasing size. A face like no other is a group of one. Empty
        when no photo shows a face.

    References
    ----------
    S. Prince and J. Elder (2007), Probabilistic linear discriminant analysis
    for inferences about identity, ICCV (the model's ratio).
    """
    _check_options(method, n_people, threshold)  # before the search's seconds a photo
    if not callable(on_error) and on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise', 'skip' or a callable, got {on_error!r}")
    check_arguments(
        "cluster_faces",
        adapt=(adapt, Param("bool")),
        backend=(backend, Param("choice", choices=("local", "dask"))),
        progress=(progress, Param("bool")),
    )
    if _one_photo(photos):
        photos = [photos]
    photos = list(photos)
    if not photos:
        raise ValueError("no photos given: pass a list of photos (arrays or file paths)")
    finder, model = finder_and_model(finder, model)
    if backend == "dask":
        found = _faces_on_dask(photos, finder, model)
    else:
        searched = show_progress(photos, desc="finding faces", enabled=progress)
        found = (  # one photo at a time: its crops are described and let go as it comes
            faces_of_photo(photo, finder, model, name=f"photo {index}")
            for index, photo in enumerate(searched)
        )
    # The agglomerative cut needs only the faces' codes: they are kept instead of the crops
    # (a face's crop is many times its code), a batch of crops described at a time.
    by_codes = method == "agglomerative" and n_people is None
    owners, unread, crops, kept = [], {}, [], []  # crops: those not yet described
    for index, (faces, cut, error) in enumerate(found):
        if error is not None:
            if on_error == "raise":
                raise error
            unread[photos[index]] = error
            if callable(on_error):
                on_error(index, error)
        owners += [(index, face) for face in faces]
        crops += list(cut)
        if by_codes and len(crops) >= CROPS_AT_ONCE:
            kept.append(model.encode(np.stack(crops)))
            crops = []
    if unread:
        warnings.warn(UnreadableFilesWarning.of(unread), stacklevel=2)
    if not owners:
        return []
    if by_codes:
        kept += [model.encode(np.stack(crops))] if crops else []
        labels = group_codes(np.concatenate(kept), model, threshold=threshold, adapt=adapt)
    else:
        options = dict(method=method, n_people=n_people, threshold=threshold, adapt=adapt)
        labels = group_crops(np.stack(crops), model, **options)
    return [[owners[i] for i in np.flatnonzero(labels == g)] for g in range(labels.max() + 1)]


def _one_photo(photos):
    """Whether ``photos`` is one photo, not a sequence of them: a path (a string's characters are
    not photos), a grey ``(H, W)`` array or a colour ``(H, W, 3)`` or ``(H, W, 4)`` one."""
    if isinstance(photos, (str, bytes, os.PathLike)):
        return True
    if isinstance(photos, np.ndarray):
        return photos.ndim == 2 or (photos.ndim == 3 and photos.shape[2] in (3, 4))
    return False


def _faces_on_dask(photos, finder, model):
    """:func:`faces_of_photo` of every photo as Dask tasks (the active client's workers)."""
    dask, _ = import_dask()
    finder, model = shared(finder, model)  # sent once, shared by the tasks
    tasks = [
        dask.delayed(faces_of_photo)(photo, finder, model, name=f"photo {index}")
        for index, photo in enumerate(photos)
    ]
    return list(dask.compute(*tasks))


def _check_options(method, n_people, threshold):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not _THRESHOLD.accepts(threshold):
        raise ValueError(
            f"threshold is the probability of one person at which merging stops, in (0, 1), "
            f"got {threshold!r}"
        )
    if not _GROUPS.accepts(n_people):
        raise ValueError(f"n_people must be a positive int or None, got {n_people!r}")


def group_crops(crops, model, *, method="agglomerative", n_people=None, threshold=None, adapt=True):
    """Group labels of face crops cut for ``model`` (the clustering of :func:`cluster_faces`).

    For callers that find and cut the faces themselves; to group the same faces
    again (another threshold), keep their codes and call :func:`group_codes`.

    Parameters
    ----------
    crops : (n, H, W) ndarray
        Faces cut by :func:`~eigenvision.faces.compare.model_crop`.
    model : IdentityModel
    method, n_people, threshold, adapt
        As :func:`cluster_faces`.

    Returns
    -------
    (n,) int ndarray
        Group labels ``0 .. g - 1`` by decreasing group size.
    """
    _check_options(method, n_people, threshold)
    if n_people is not None and n_people > len(crops):
        raise ValueError(f"n_people={n_people} exceeds the {len(crops)} faces found")
    if method != "agglomerative" or n_people is not None:
        return cluster(crops, model=model, method=method, n_clusters=n_people)
    return group_codes(model.encode(crops), model, threshold=threshold, adapt=adapt)


def group_codes(codes, model, *, threshold=None, adapt=True):
    """Group labels of faces from their codes: the agglomerative cut of :func:`cluster_faces`.

    Describing a face costs many times grouping it: callers that group the
    same faces again (another threshold, with or without ``adapt``) encode
    them once (``model.encode``) and call this.

    Parameters
    ----------
    codes : (n, r) ndarray
        ``model.encode`` of the faces' crops, ``n >= 1``.
    model : IdentityModel
    threshold, adapt
        As :func:`cluster_faces`.

    Returns
    -------
    (n,) int ndarray
        Group labels ``0 .. g - 1`` by decreasing group size.
    """
    _check_options("agglomerative", None, threshold)
    if len(codes) == 0:
        raise ValueError("no faces to group: codes is empty")
    if len(codes) == 1:
        return np.zeros(1, dtype=np.int64)
    scores = _condensed_scores(codes, model)
    mixture = pair_mixture(scores) if adapt and len(codes) >= MIN_SET else None
    if mixture is None:
        same, default = model.probability(scores), CALIBRATED_CUT
    else:  # written over: one condensed vector, n (n - 1) / 2 values, for a large set
        same, default = mixture.probability(scores, out=scores), LEARNT_CUT
    cut = default if threshold is None else threshold
    return average_linkage(np.subtract(1, same, out=same), 1 - cut)


def _condensed_scores(codes, model):
    """Every pair's score once, condensed (:func:`~eigenvision.cluster.average_linkage`'s
    order), from blocks of rows (:meth:`~eigenvision.IdentityModel.pair_scores_in_blocks`):
    ``n (n - 1) / 2`` values, never the ``n x n`` matrix and its copies."""
    n = len(codes)
    scores, start = np.empty(n * (n - 1) // 2), 0
    for rows, block in model.pair_scores_in_blocks(codes):
        for i in range(rows.start, min(rows.stop, n - 1)):  # row i's pairs (i, i+1 ... n-1)
            scores[start : start + n - i - 1] = block[i - rows.start, i + 1 :]
            start += n - i - 1
    return scores


def grouping_summary(groups, names, *, unreadable=()):
    """One line on a grouping: its faces, photos and people, and the photos where none was found.

    What ``eigenvision cluster`` prints and the app's Group page heads its
    groups with: a photo whose face the finder missed is named, not left to
    be guessed from the counts, and a file that could not be read is named
    as such, not as a photo without a face.

    Parameters
    ----------
    groups : list of list of (int, Face)
        :func:`cluster_faces`' groups: each face's photo index and the face.
    names : sequence of str
        The photos' names, in the order the indices count.
    unreadable : collection of int, default ()
        The indices of the photos whose files could not be read
        (:class:`~eigenvision.UnreadableFilesWarning`).

    Returns
    -------
    str
    """
    faces = sum(len(group) for group in groups)
    alone = sum(len(group) == 1 for group in groups)
    seen = {index for group in groups for index, _ in group}
    unreadable = set(unreadable)
    unread = [name for index, name in enumerate(names) if index in unreadable]
    accounted = seen | unreadable
    faceless = [name for index, name in enumerate(names) if index not in accounted]
    line = (
        f"{counted(faces, 'face')} in {counted(len(names) - len(unread), 'photo')}: "
        f"{counted(len(groups), 'person', 'people')} ({alone} seen once)"
    )
    for what, listed, noun in (
        ("no face found in", faceless, "photo"),
        ("could not read", unread, "file"),
    ):
        if listed:
            shown = ", ".join(listed[:5]) + (" ..." if len(listed) > 5 else "")
            line += f"; {what} {counted(len(listed), noun)} ({shown})"
    return line
