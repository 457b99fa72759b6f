"""From a photograph to its faces: the trained finder that ships, alignment, and its recipe.

:func:`find_faces` runs the :class:`~eigenvision.FaceFinder` of the
project's ``data/face_finder.npz`` (:func:`~eigenvision.align_face` cuts a
found face to a canonical crop); :func:`build_finder` is the recipe
that made the shipped finder from the datasets (``eigenvision build-models``).
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
from scipy.special import expit
from skimage import data as skimage_data

from .. import datasets
from .._base import progress as show_progress
from .._errors import EigenvisionError
from ..evaluate import hits_and_alarms
from ..imageset import ImageSet
from ..io import load_image
from ..normalize import to_gray
from ..persist import load
from .eyes import EyeRegressor
from .features import FeatureDetector, place_features, placement_locator
from .finder import FaceFinder
from .geometry import face_box

__all__ = [
    "find_faces",
    "default_finder",
    "build_finder",
    "helen_split",
    "lfw_split",
    "lfw_faces",
    "DEFAULT_FINDER",
    "SHIPPED_FALSE_ALARMS",
    "IDENTITY_THRESHOLD",
    "BACKGROUNDS",
    "sample_picture",
    "calibrate_threshold",
    "fit_appearance_check",
    "annotated_helen_photo",
    "lfw_face",
]

#: Where the trained finder ships: the project's top-level ``data/``.
DEFAULT_FINDER = Path(__file__).resolve().parents[2] / "data" / "face_finder.npz"

#: False alarms per photo the shipped finder's threshold allows on the held-out HELEN
#: calibration photos (:func:`calibrate_threshold`; the user guide gives what each choice found).
SHIPPED_FALSE_ALARMS = 0.05

#: The smallest probability of a face that identity work takes from the shipped finder
#: (:func:`~eigenvision.faces.crops.identity_threshold`): even odds, a face likelier than not.
#: The ``identity_faces`` experiment measures what it keeps and what it leaves out.
IDENTITY_THRESHOLD = 0.5

#: scikit-image's sample pictures without a human face: non-face backgrounds.
BACKGROUNDS = (
    "brick",
    "coffee",
    "coins",
    "grass",
    "gravel",
    "horse",
    "moon",
    "page",
    "rocket",
    "text",
    "clock",
    "chelsea",
    "logo",
    "hubble_deep_field",
)


def default_finder(path=None) -> FaceFinder:
    """The trained finder, read from ``data/face_finder.npz`` (or ``path``) and checked.

    Read once per process (again when the file changes); each call gets its own shallow
    copy, so setting its parameters (``finder.threshold = 0.5``) changes no other caller's.

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


def lfw_faces(placer, people, *, limit, root=None, seed=0, progress=False):
    """LFW photos of ``people`` with their eyes placed, as training faces.

    The ``placer`` locates the eyes in the face box of
    :data:`~eigenvision.datasets.LFW_EYES`
    (:func:`~eigenvision.faces.features.place_features`); a photo whose eyes
    land far from there (eye distance off by more than a third, or their
    midpoint more than a quarter of it away) is left out: the face is not
    where LFW puts it, or the placer missed it.

    Parameters
    ----------
    placer : FeatureDetector
    people : set of str
    limit : int
        At most this many photos, drawn at random (``seed``).
    root : path-like, optional
        The ``lfw_train`` folder (default ``$EIGENVISION_DATA/lfw_train``).
    seed : int, default 0
    progress : bool, default False

    Returns
    -------
    ImageSet
        Grey 150 x 150 photos with ``left_eye`` and ``right_eye`` landmarks.
    """
    files = [(person, path) for person, path in datasets.lfw_files(root) if person in people]
    chosen = np.random.default_rng(seed).permutation(len(files))[:limit]
    expected = np.asarray(datasets.LFW_EYES, dtype=float)
    distance = np.linalg.norm(expected[1] - expected[0])
    images, eyes, kept = [], [], []
    for index in show_progress(sorted(chosen), desc="placing LFW eyes", enabled=progress):
        person, path = files[index]
        image = load_image(path)
        placed = place_features(placer, image, face_box(*expected))
        pair = np.array([placed["left_eye"], placed["right_eye"]], dtype=float)
        ratio = np.linalg.norm(pair[1] - pair[0]) / distance
        shift = np.linalg.norm(pair.mean(axis=0) - expected.mean(axis=0)) / distance
        if 0.75 <= ratio <= 4 / 3 and shift <= 0.25:
            images.append(image)
            eyes.append(pair)
            kept.append((person, f"{person}/{path.name}"))
    if not images:
        raise EigenvisionError(
            f"no LFW photo of the {len(people)} people given had its eyes placed"
        )
    eyes = np.array(eyes)
    labels, names = (np.array(column) for column in zip(*kept, strict=True))
    return ImageSet(
        np.stack(images),
        labels,
        names,
        landmarks={"left_eye": eyes[:, 0], "right_eye": eyes[:, 1]},
        description="LFW faces, eyes placed",
    )


def _helen_backgrounds(root, photo_ids, limit):
    """HELEN photos with one annotated face (reduced), each with that face's box to avoid.

    A photo with two annotated faces is skipped: it has a crop per face, each
    showing the other person unannotated, who would be mined as a non-face
    (the most face-like of them first) and teach the decision to reject faces.
    """
    files = datasets.helen_files(root)
    faces_per_photo = Counter(photo for photo, _, _ in files)
    found = []
    chosen = [
        (image_path, pts_path)
        for photo, image_path, pts_path in files
        if photo in photo_ids and faces_per_photo[photo] == 1
    ]
    for image_path, pts_path in chosen[:limit]:
        image, points = datasets.load_helen_photo(image_path, pts_path, max_side=800)
        marks = datasets.face_landmarks(points)
        found.append((image, [face_box(marks["left_eye"], marks["right_eye"])]))
    return found


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


class _Photos(Sequence):
    """Photos loaded one at a time as a loop reaches them (each item a call that loads one)."""

    def __init__(self, loads):
        self.loads = list(loads)

    def __len__(self):
        return len(self.loads)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return _Photos(self.loads[index])
        return self.loads[index]()


def _appearance_photos(root, train_ids):
    """The annotated photos the appearance check learns from (:meth:`FaceFinder.fit_appearance`),
    all of training people: for its linear score, 700 LFW photos (every 5th), the first 250 HELEN
    training photos with one annotated face and the backgrounds without a face
    (:data:`BACKGROUNDS`); for the fusion, 600 other LFW photos and the other HELEN photos.

    Each photo is ``(image, centre, iod, others)``, loaded as it is reached."""
    people, _ = lfw_split(person for person, _ in datasets.lfw_files(root))
    lfw = [path for person, path in datasets.lfw_files(root) if person in people]
    counts = Counter(photo for photo, _, _ in datasets.helen_files(root))
    helen = [
        partial(annotated_helen_photo, image_path, pts_path)
        for photo, image_path, pts_path in datasets.helen_files(root)
        if photo in train_ids and counts[photo] == 1
    ]

    def lfw_photo(path):  # people behind the one named are not annotated: None
        return load_image(path), *lfw_face(), None

    def background(name):
        return sample_picture(name), None, None, ()

    linear = [partial(lfw_photo, path) for path in lfw[::5][:700]] + helen[:250]
    fusion = [partial(lfw_photo, path) for path in lfw[2::5][:600]] + helen[250:]
    return _Photos(linear + [partial(background, name) for name in BACKGROUNDS]), _Photos(fusion)


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


def build_finder(root=None, *, n_backgrounds=250, n_lfw=3000, progress=False) -> FaceFinder:
    """The recipe of the shipped finder: HELEN's training photos, IMM, LFW, mined backgrounds.

    Positives: the HELEN faces of the training photos (:func:`helen_split`),
    the IMM faces and ``n_lfw`` LFW faces of the training people
    (:func:`lfw_split`), mirrored and tilted. Backgrounds: ``n_backgrounds``
    HELEN training photos with one annotated face, away from it, and
    scikit-image's sample pictures without a face (:data:`BACKGROUNDS`). The eye, nose and
    mouth locator (``FeatureDetector(score="decision")``) and the placer
    (:func:`~eigenvision.faces.features.placement_locator`) are trained on the HELEN
    training faces; the placer also places the eyes of the LFW faces added
    (``n_lfw``). Then the appearance check and the threshold
    (:func:`fit_appearance_check`): :data:`SHIPPED_FALSE_ALARMS` false alarms per photo on the
    last 60 held-out HELEN photos, the faces they hold unannotated not
    counted (:func:`calibrate_threshold`). The user guide's page on faces
    in photographs gives what each choice measured.

    Parameters
    ----------
    root : path, optional
        The folder holding ``helen_train/`` and ``imm_frontal/`` (default
        ``$EIGENVISION_DATA``).
    n_backgrounds : int, default 250
        HELEN training photos mined for non-faces.
    n_lfw : int, default 3000
        LFW photos of the training people (:func:`lfw_split`) added to the
        faces, their eyes placed by the placer (:func:`lfw_faces`): glasses,
        beards and harsh light HELEN has few of. 0: none (and no
        ``lfw_train/`` needed).
    progress : bool, default False
        Progress bars on stderr (a terminal) for the minutes it takes.

    Returns
    -------
    FaceFinder
    """
    files = datasets.helen_files(root)
    train_ids, _ = helen_split(photo for photo, _, _ in files)
    helen = datasets.load_helen(root, photo_ids=train_ids)
    imm = datasets.load_imm(root)
    backgrounds = _helen_backgrounds(root, train_ids, n_backgrounds)
    backgrounds += [sample_picture(name) for name in BACKGROUNDS]
    # Each choice below is measured in the user guide ("How the shipped finder was built").
    # Scored by decision, not DFFS: it places wild faces' eyes far better.
    locator = FeatureDetector(score="decision").fit(helen)
    placer = placement_locator().fit(helen)
    faces = [helen, imm]
    if n_lfw:
        people, _ = lfw_split(person for person, _ in datasets.lfw_files(root))
        faces.append(
            lfw_faces(
                placer,
                people,
                limit=n_lfw,
                root=root,
                progress=progress,
            )
        )
    # Mined without the contrast gate (so the non-faces hold flat windows), from aliased cuts,
    # with turned faces at every size, the first test at every window; searched with the gate,
    # antialiased, turned faces from twice the smallest, the first test coarse to fine.
    mining = {"min_contrast": 0.0, "antialias": False, "tilted_scale": 1.0, "prefilter_stride": 1}
    finder = FaceFinder(**mining).fit(
        faces, backgrounds, locator=locator, placer=placer, progress=progress
    )
    defaults = FaceFinder().get_params()
    finder.set_params(**{name: defaults[name] for name in mining})
    finder.eye_regressor_ = fit_eye_regressor(helen=helen, progress=progress)
    return fit_appearance_check(finder, root, progress=progress)


def fit_appearance_check(finder, root=None, *, progress=False):
    """The shipped finder's appearance check and thresholds, on a finder fitted up to its eyes.

    :meth:`~eigenvision.FaceFinder.fit_appearance` on annotated photos of the
    training people (:func:`helen_split`, :func:`lfw_split`), then the
    threshold that gives :data:`SHIPPED_FALSE_ALARMS` false alarms per photo
    on the last 60 held-out HELEN photos (:func:`calibrate_threshold`), and
    the identity threshold, :data:`IDENTITY_THRESHOLD` (or the detection
    threshold where that is higher).

    Parameters
    ----------
    finder : FaceFinder
        Changed in place.
    root : path, optional
        The folder holding ``helen_train/`` and ``lfw_train/`` (default
        ``$EIGENVISION_DATA``).
    progress : bool, default False

    Returns
    -------
    FaceFinder
        ``finder``.
    """
    files = datasets.helen_files(root)
    train_ids, test_ids = helen_split(photo for photo, _, _ in files)
    finder.fit_appearance(*_appearance_photos(root, train_ids), progress=progress)
    finder.threshold = calibrate_threshold(
        finder,
        [f for f in files if f[0] in test_ids][-60:],
        false_alarms=SHIPPED_FALSE_ALARMS,
        progress=progress,
    )
    finder.identity_threshold = max(finder.threshold, IDENTITY_THRESHOLD)
    return finder


def fit_eye_regressor(root=None, *, helen=None, progress=False) -> EyeRegressor:
    """The shipped finder's eye refinement, fitted on HELEN's training faces and their eyes.

    Parameters
    ----------
    root : path, optional
        The folder holding ``helen_train/`` (default ``$EIGENVISION_DATA``).
    helen : ImageSet, optional
        :func:`~eigenvision.datasets.load_helen` of the training photos
        (:func:`helen_split`), when already loaded.
    progress : bool, default False

    Returns
    -------
    EyeRegressor
    """
    if helen is None:
        train_ids, _ = helen_split(photo for photo, _, _ in datasets.helen_files(root))
        helen = datasets.load_helen(root, photo_ids=train_ids)
    eyes = np.stack([helen.landmarks["left_eye"], helen.landmarks["right_eye"]], axis=1)
    return EyeRegressor().fit(helen.images, eyes, progress_bar=progress)


def calibrate_threshold(finder, files, *, false_alarms=0.5, max_side=640, progress=False) -> float:
    """The probability threshold that gives ``false_alarms`` per photo on annotated photos.

    Parameters
    ----------
    finder : FaceFinder
    files : sequence of (photo id, image path, points path)
        Photos with one annotated face each (:func:`~eigenvision.datasets.helen_files`),
        not used in training.
    false_alarms : float, default 0.5
        Detections per photo that find no face, allowed: at most
        ``int(false_alarms * len(files))`` of them reach the threshold.
        Detections of a face the photo holds unannotated
        (:func:`~eigenvision.datasets.helen_other_faces`) are no false
        alarms.
    max_side : int, default 640
    progress : bool, default False
        A progress bar over the photos (stderr, on a terminal).

    Returns
    -------
    float
        A probability in [0, 1]: the shortest decimal between the
        probabilities of the last false alarm allowed and the first one not.
    """
    alarms = []
    for _, image_path, pts_path in show_progress(files, desc="calibrating", enabled=progress):
        image, centre, iod, others = annotated_helen_photo(image_path, pts_path, max_side=max_side)
        found = [(face.box, face.score) for face in finder.find(image, threshold=0.0)]
        alarms += hits_and_alarms(found, centre, iod, others)[1]
    alarms = np.sort(alarms)[::-1]
    allowed = int(false_alarms * len(files))
    if allowed >= len(alarms):
        return 0.0
    # above the first alarm not allowed (find keeps confidence >= threshold), and not above
    # the last allowed: a probability rounded to a fixed number of places can fall on either
    # side near 1, where a finder's probabilities crowd (0.9991 is log-odds 7.01).
    below = expit(alarms[allowed])
    above = expit(alarms[allowed - 1]) if allowed else 1.0
    middle = expit((alarms[allowed] + alarms[allowed - 1]) / 2) if allowed else (below + 1) / 2
    for places in range(1, 17):
        threshold = float(np.round(middle, places))
        if below < threshold <= above:
            return threshold
    return float(middle)
