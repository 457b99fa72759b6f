"""The recipes of the shipped models: what :command:`eigenvision build-models` runs.

The face finder (:func:`build_finder`): HELEN's training photos, IMM and LFW's training
people, its appearance check and its two thresholds (:func:`fit_appearance_check`: detection
at :data:`SHIPPED_FALSE_ALARMS`, identity work at :data:`IDENTITY_THRESHOLD`) and its eye
refinement (:func:`fit_eye_regressor`). The identity models (``--identity``) are both fitted
on LFW's View 1 training people, each photo's face cut on the eyes the shipped finder places
(:func:`lfw_eyes`): the classical model (:data:`CLASSICAL_RECIPE`, the
:class:`~eigenvision.IdentityModel` defaults: DAISY, LBP+HOG and Fisher vectors) and the
learned one (:data:`DEEP_RECIPE`: dlib's embedding of a colour chip), each kept in its
:data:`SHIPPED_FORMS` (the classical one in 8 bits,
:func:`~eigenvision.identity.quantized`).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from functools import partial

import numpy as np
from scipy.special import expit

from .. import datasets
from .._base import progress as show_progress
from .._errors import EigenvisionError
from ..evaluate import hits_and_alarms
from ..identity import IdentityModel, quantized, tempered
from ..identity.deep import CHIP_EYE_POSITIONS, CHIP_SHAPE
from ..identity.describe import FaceDescriber
from ..imageset import ImageSet
from ..io import load_image
from .candidates import CandidateSearch
from .compare import model_crop
from .decision import FaceDecision
from .eyes import EyeRegressor
from .features import FeatureDetector, place_features, placement_locator
from .finder import FaceFinder
from .geometry import face_box
from .photos import (
    annotated_helen_photo,
    default_finder,
    helen_split,
    lfw_face,
    lfw_split,
    sample_picture,
)

__all__ = [
    "build_finder",
    "fit_appearance_check",
    "fit_eye_regressor",
    "calibrate_threshold",
    "lfw_faces",
    "SHIPPED_FALSE_ALARMS",
    "CALIBRATION_FOLDS",
    "IDENTITY_THRESHOLD",
    "BACKGROUNDS",
    "build_identity_model",
    "lfw_eyes",
    "CLASSICAL_RECIPE",
    "DEEP_RECIPE",
    "RECIPES",
    "recipe_model",
    "SHIPPED_FORMS",
    "tempered_on_att",
]

#: The classical model's parameters: :class:`~eigenvision.IdentityModel`'s defaults.
CLASSICAL_RECIPE = {}
#: The learned model's parameters (as ``set_params`` takes them, :func:`recipe_model`): dlib's
#: embedding of the chip dlib's network was trained on (its 5-point landmarks in the box our
#: eyes give), under PLDA fused with the embedding's own distance (chosen on the tuning folds
#: of ``lfw_verification``).
DEEP_RECIPE = {
    "describer__descriptor": "deep",
    "describer__shape": CHIP_SHAPE,
    "describer__illumination": False,
    "describer__mirror": False,
    "eye_positions": CHIP_EYE_POSITIONS,
    "alignment": "five_points",
    "distance_fusion": True,
    "pca_components": 128,
    "lda_components": None,
    "n_components": 100,
    "calibration_share": 0.3,
}
#: The shipped models' recipes by name.
RECIPES = {"classical": CLASSICAL_RECIPE, "deep": DEEP_RECIPE}


def recipe_model(recipe="classical", **options) -> IdentityModel:
    """An unfitted :class:`~eigenvision.IdentityModel` of a shipped recipe (:data:`RECIPES`).

    Parameters
    ----------
    recipe : {"classical", "deep"}, default "classical"
    **options
        Parameters over the recipe's, as ``set_params`` takes them
        (``describer__mirror=False``).

    Returns
    -------
    IdentityModel
        With a describer of its own.
    """
    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {recipe!r}")
    return IdentityModel(describer=FaceDescriber()).set_params(**{**RECIPES[recipe], **options})


#: Each shipped model's file form: the classical maps in 8 bits; the learned model in full
#: precision (its whitening map's large weights cancel one another: rounded to 8 bits or
#: float16 they change the scores beyond use, and the model is small as it is).
SHIPPED_FORMS = {"classical": quantized, "deep": lambda model: model}
#: Typical eye centres of LFW's 150 x 150 photos: where the placer starts.
LFW_EYES = datasets.LFW_EYES
#: Crops :func:`build_identity_model` describes per step of its progress bar.
_DESCRIBED_AT_ONCE = 256


def lfw_eyes(images, finder, *, progress=False):
    """Eye centres of LFW-style photos (the face near the centre) by the finder's placer.

    The placer starts from the face box of :data:`LFW_EYES` scaled to each
    photo (:meth:`~eigenvision.FaceFinder.place`), the same eyes :func:`compare_faces`
    gets from the finder's faces.

    Parameters
    ----------
    images : (n, H, W) ndarray
    finder : FaceFinder
    progress : bool, default False

    Returns
    -------
    (n, 2, 2) ndarray
        Left and right eye ``(x, y)`` of each photo.
    """
    eyes = np.empty((len(images), 2, 2))
    for i, image in enumerate(show_progress(images, desc="placing eyes", enabled=progress)):
        scale = np.array(image.shape[::-1], dtype=float) / 150.0
        box = face_box(*(np.multiply(eye, scale) for eye in LFW_EYES))
        placed = finder.place(image, box)
        eyes[i] = placed["left_eye"], placed["right_eye"]
    return eyes


def build_identity_model(
    root=None, *, eyes=None, recipe="classical", temper=True, progress=False, **options
):
    """A shipped identity model's recipe: LFW's View 1 training people, eyes placed by the
    shipped finder, crops aligned on them, an :class:`~eigenvision.IdentityModel` fitted and
    kept in its shipped form (:data:`SHIPPED_FORMS`).

    Parameters
    ----------
    root : path-like, optional
        The ``lfw_train`` folder; default ``$EIGENVISION_DATA/lfw_train``.
    eyes : (n, 2, 2) ndarray, optional
        The eyes of :func:`~eigenvision.datasets.load_lfw`'s photos, in its order
        (default placed here by :func:`lfw_eyes`, minutes).
    recipe : {"classical", "deep"}, default "classical"
        Which shipped model (:data:`RECIPES`); ``"deep"`` cuts colour chips from the photos.
    temper : bool, default True
        Temper the probabilities on AT&T (:func:`tempered_on_att`; needs ``att_faces/``).
    progress : bool, default False
        Show the eyes being placed and the faces being described (a bar on a terminal, lines
        in a log).
    **options
        :class:`~eigenvision.IdentityModel`'s parameters, over the recipe's.

    Returns
    -------
    IdentityModel
        In its shipped form (:data:`SHIPPED_FORMS`): the classical model's large maps in 8 bits.
    """
    lfw = datasets.load_lfw(root)
    if eyes is None:
        eyes = lfw_eyes(lfw.images, default_finder(), progress=progress)
    model = recipe_model(recipe, **options)
    # a colour model reads each photo again in colour (load_lfw's are grey)
    photos = (
        (load_image(path, as_gray=False) for _, path in datasets.lfw_files(root))
        if model.colour
        else lfw.images
    )
    crops = np.stack(
        [model_crop(image, pair, model) for image, pair in zip(photos, eyes, strict=True)]
    )
    # fit's three steps, the description (most of the time) in blocks a progress bar can follow
    model.fit_description(crops)
    blocks = range(0, len(crops), _DESCRIBED_AT_ONCE)
    described = np.concatenate(
        [
            model.describe(crops[start : start + _DESCRIBED_AT_ONCE])
            for start in show_progress(blocks, desc="describing faces", enabled=progress)
        ]
    )
    model = SHIPPED_FORMS[recipe](model.fit_descriptors(described, lfw.labels))
    return tempered_on_att(model, progress=progress) if temper else model


def tempered_on_att(model, *, finder=None, progress=False):
    """``model`` with its probabilities tempered on another source than its training photos:
    every pair of AT&T's 400 faces (40 people, one lab, grey, 92 x 112), each cut on the eyes
    of the finder's likeliest face (:func:`~eigenvision.identity.tempered`). A model fitted on
    LFW's news photos is overconfident on photos of other kinds; the ``calibration``
    experiment reports the tempered probabilities on sources neither step saw (IMM, HELEN).

    Parameters
    ----------
    model : IdentityModel
    finder : FaceFinder, optional
        Default :func:`~eigenvision.default_finder`.
    progress : bool, default False

    Returns
    -------
    IdentityModel
    """
    finder = default_finder() if finder is None else finder
    att = datasets.load_att()
    crops = []
    for image in show_progress(att.images, desc="tempering on AT&T", enabled=progress):
        face = finder.find(image, threshold=0.0, max_faces=1)[0]  # one face each
        crops.append(model_crop(image, face, model))
    codes = model.encode(np.stack(crops))
    rows, cols = np.triu_indices(len(codes), 1)
    scores = model.pairwise_log_odds(codes, codes)[rows, cols]
    return tempered(model, scores, att.labels[rows] == att.labels[cols])


#: False alarms per photo the shipped finder's threshold allows on the HELEN photos of its
#: appearance check's fusion (:func:`fit_appearance_check`; the user guide gives what each
#: choice found).
SHIPPED_FALSE_ALARMS = 0.05

#: Folds of the appearance check's fusion photos: each fold's HELEN photos calibrate the
#: threshold with the fusion fitted on the others (:func:`fit_appearance_check`).
CALIBRATION_FOLDS = 5

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

    Each photo is ``(image, centre, iod, others)``, loaded as it is reached. The fusion's
    HELEN photos, the last of the fusion's, are also given as their files ``(photo id, image
    path, points path)``: they calibrate the threshold (:func:`fit_appearance_check`)."""
    people, _ = lfw_split(person for person, _ in datasets.lfw_files(root))
    lfw = [path for person, path in datasets.lfw_files(root) if person in people]
    counts = Counter(photo for photo, _, _ in datasets.helen_files(root))
    helen_files = [
        (photo, image_path, pts_path)
        for photo, image_path, pts_path in datasets.helen_files(root)
        if photo in train_ids and counts[photo] == 1
    ]
    helen = [
        partial(annotated_helen_photo, image_path, pts_path)
        for _, image_path, pts_path in helen_files
    ]

    def lfw_photo(path):  # people behind the one named are not annotated: None
        return load_image(path), *lfw_face(), None

    def background(name):
        return sample_picture(name), None, None, ()

    linear = [partial(lfw_photo, path) for path in lfw[::5][:700]] + helen[:250]
    fusion = [partial(lfw_photo, path) for path in lfw[2::5][:600]] + helen[250:]
    linear += [partial(background, name) for name in BACKGROUNDS]
    return _Photos(linear), _Photos(fusion), helen_files[250:]


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
    fusion's HELEN photos, cross-fitted, the faces they hold unannotated not
    counted. The user guide's page on faces
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
    mining = {
        "search__min_contrast": 0.0,
        "search__tilted_scale": 1.0,
        "search__prefilter_stride": 1,
        "decision__antialias": False,
    }
    finder = FaceFinder(search=CandidateSearch(), decision=FaceDecision()).set_params(**mining)
    finder.fit(faces, backgrounds, locator=locator, placer=placer, progress=progress)
    defaults = FaceFinder(search=CandidateSearch(), decision=FaceDecision()).get_params()
    finder.set_params(**{name: defaults[name] for name in mining})
    finder.eye_regressor_ = fit_eye_regressor(helen=helen, progress=progress)
    return fit_appearance_check(finder, root, progress=progress)


def fit_appearance_check(finder, root=None, *, n_folds=CALIBRATION_FOLDS, progress=False):
    """The shipped finder's appearance check and thresholds, on a finder fitted up to its eyes.

    :meth:`~eigenvision.FaceFinder.fit_appearance` on annotated photos of the
    training people (:func:`helen_split`, :func:`lfw_split`), its fusion on
    other photos of them in ``n_folds`` folds; then the threshold that gives
    :data:`SHIPPED_FALSE_ALARMS` false alarms per photo on the fusion's HELEN
    photos, each fold's found with the fusion fitted on the other folds
    (cross-fitting: a photo's candidates never scored by a fusion that saw
    them), the faces they hold unannotated not counted
    (:data:`~eigenvision.datasets.HELEN_OTHER_FACES`); and the identity
    threshold, :data:`IDENTITY_THRESHOLD` (or the detection threshold where
    that is higher). No held-out photo is used: they are all left to report
    on.

    Parameters
    ----------
    finder : FaceFinder
        Changed in place.
    root : path, optional
        The folder holding ``helen_train/`` and ``lfw_train/`` (default
        ``$EIGENVISION_DATA``).
    n_folds : int, default CALIBRATION_FOLDS
    progress : bool, default False

    Returns
    -------
    FaceFinder
        ``finder``.
    """
    train_ids, _ = helen_split(photo for photo, _, _ in datasets.helen_files(root))
    linear, fusion, calibration = _appearance_photos(root, train_ids)
    finder.fit_appearance(linear, progress=progress)
    candidates = [
        finder.labelled_candidates(
            fusion[k::n_folds], scored=True, progress=progress, desc=f"fusion {k + 1}/{n_folds}"
        )[1:]
        for k in range(n_folds)
    ]
    finder.appearance.fit_fusion(*_pooled(candidates))
    # the calibration photos close the fusion's photos: the j-th is its (n_lfw + j)-th
    n_lfw = len(fusion) - len(calibration)
    alarms = []
    for k in range(n_folds):
        unseen = copy.copy(finder)  # its appearance check a copy of its own
        unseen.appearance.fit_fusion(*_pooled(candidates[:k] + candidates[k + 1 :]))
        alarms += _false_alarms(
            unseen, calibration[(k - n_lfw) % n_folds :: n_folds], progress=progress
        )
    finder.threshold = _threshold_allowing(alarms, int(SHIPPED_FALSE_ALARMS * len(calibration)))
    finder.identity_threshold = max(finder.threshold, IDENTITY_THRESHOLD)
    return finder


def _pooled(candidates):
    """The ``(checked, appearance, faces)`` arrays of several folds' candidates, pooled."""
    return [np.concatenate(columns) for columns in zip(*candidates, strict=True)]


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
    alarms = _false_alarms(finder, files, max_side=max_side, progress=progress)
    return _threshold_allowing(alarms, int(false_alarms * len(files)))


def _false_alarms(finder, files, *, max_side=640, progress=False):
    """The log-odds of ``finder``'s detections (at threshold 0) that find no face in annotated
    photos (:func:`calibrate_threshold`'s ``files``)."""
    alarms = []
    for _, image_path, pts_path in show_progress(files, desc="calibrating", enabled=progress):
        image, centre, iod, others = annotated_helen_photo(image_path, pts_path, max_side=max_side)
        found = [(face.box, face.score) for face in finder.find(image, threshold=0.0)]
        alarms += hits_and_alarms(found, centre, iod, others)[1]
    return alarms


def _threshold_allowing(alarms, allowed):
    """The probability threshold that lets through ``allowed`` of the false alarms' log-odds
    (:func:`calibrate_threshold`'s return)."""
    alarms = np.sort(alarms)[::-1]
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
