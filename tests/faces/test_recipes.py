"""The recipes of the shipped models (eigenvision.faces.recipes)."""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.faces import photos, recipes
from tests.conftest import KnownFaces, require_helen_files


@pytest.mark.parametrize("alarm_scores", [(4.0, 3.0, 2.0, 1.0), (9.0, 8.0, 7.03, 7.01)])
def test_the_calibrated_threshold_lets_through_the_false_alarms_allowed(monkeypatch, alarm_scores):
    """Regression: ``calibrate_threshold`` returned the probability of the first false alarm
    not allowed (rounded to 4 places), which ``find`` (confidence >= threshold) reports: 3
    alarms where 0.5 per photo of 4 allows 2 (log-odds 7.03 and 7.01 both round to p 0.9991).
    Counted here against the faces' own confidences."""
    from scipy.special import expit

    def face(left, right, score):
        return ev.Face(
            ev.face_box(left, right), left, right, None, None, score, float(expit(score)), 0.0
        )

    points = np.array([[20.0, 30.0], [40.0, 30.0], [30.0, 75.0]])  # centred in the face box
    marks = {"left_eye": points[0], "right_eye": points[1]}
    faces = {
        k: [
            face((20.0, 30.0), (40.0, 30.0), 12.0),  # the annotated face: no alarm
            face((120.0, 30.0), (140.0, 30.0), alarm),
        ]
        for k, alarm in enumerate(alarm_scores)
    }
    monkeypatch.setattr(
        ev.datasets,
        "load_helen_photo",
        lambda image, pts, max_side: (np.full((200, 200), image / 100), points),
    )
    monkeypatch.setattr(ev.datasets, "face_landmarks", lambda pts: marks)
    # a face the photo holds unannotated, surer than any alarm, is no false alarm
    faces[0].append(face((120.0, 130.0), (140.0, 130.0), 15.0))
    other = np.array([faces[0][-1].box])
    monkeypatch.setattr(
        ev.datasets,
        "helen_other_faces",
        lambda image, shape: other if image == 0 else np.zeros((0, 4)),
    )
    files = [(str(k), k, None) for k in range(len(alarm_scores))]
    threshold = recipes.calibrate_threshold(KnownFaces(faces), files, false_alarms=0.5)
    confidences = [found[1].confidence for found in faces.values()]
    assert sum(c >= threshold for c in confidences) == 2
    assert all(found[0].confidence >= threshold for found in faces.values())
    assert recipes.calibrate_threshold(KnownFaces(faces), files, false_alarms=1.0) == 0.0


@pytest.mark.parametrize("n_lfw", [7, 10])
def test_each_calibration_photo_is_found_with_a_fusion_that_never_saw_it(monkeypatch, n_lfw):
    """``fit_appearance_check`` calibrates the threshold on the fusion's HELEN photos, each
    fold's with the fusion fitted on the other folds (cross-fitting), every photo once; the
    finder keeps the fusion of all. With 7 LFW photos before them, a photo's fold is not its
    index among the HELEN photos modulo 5."""
    from scipy.special import logit

    helen = [(f"h{j}", f"h{j}.jpg", f"h{j}.pts") for j in range(13)]
    fusion = [f"l{j}" for j in range(n_lfw)] + [photo for photo, _, _ in helen]
    folds = [set(fusion[k::5]) for k in range(5)]

    class Appearance:
        seen = frozenset()

        def fit_fusion(self, checked, appearance, faces):
            self.seen = frozenset(checked)  # each candidate carries its photo's name
            return self

    class Finder:
        appearance = Appearance()

        def fit_appearance(self, photos, progress=False):
            assert photos == ["linear"]

        def labelled_candidates(self, photos, *, scored, progress=False, desc=""):
            assert scored
            names = np.array(photos, dtype=object)
            return names, names, np.zeros(len(photos)), np.ones(len(photos), bool)

        def __copy__(self):
            copied = Finder()
            copied.appearance = copy.copy(self.appearance)
            return copied

    calibrated, alarms = [], []

    def false_alarms(finder, files, progress=False):
        unseen = set(fusion) - finder.appearance.seen
        assert unseen in folds and {photo for photo, _, _ in files} <= unseen
        calibrated.extend(files)
        alarms.append(logit(0.9 - 0.1 * len(alarms)))  # one alarm a fold
        return alarms[-1:]

    monkeypatch.setattr(
        recipes, "_appearance_photos", lambda root, ids: (["linear"], fusion, helen)
    )
    monkeypatch.setattr(recipes, "helen_split", lambda ids: (set(), set()))
    monkeypatch.setattr(recipes, "_false_alarms", false_alarms)
    monkeypatch.setattr(recipes, "SHIPPED_FALSE_ALARMS", 2.5 / len(helen))  # 2 alarms allowed
    finder = recipes.fit_appearance_check(Finder(), n_folds=5)
    assert sorted(calibrated) == sorted(helen) and len(alarms) == 5
    assert finder.appearance.seen == frozenset(fusion)
    assert 0.7 < finder.threshold <= 0.8 and finder.identity_threshold == finder.threshold


def test_backgrounds_skip_photos_with_two_annotated_faces(monkeypatch):
    """Each face of such a photo has its own crop, showing the other person unannotated
    (HELEN 100040721_1 and _2): mined as non-faces, they taught the decision to reject faces."""

    files = require_helen_files()
    counts = Counter(photo for photo, _, _ in files)
    doubles = {photo for photo, n in counts.items() if n > 1}
    assert len(doubles) >= 50  # HELEN's 870 faces come from 783 photos
    loaded = []

    def record(image_path, pts_path, **_):
        loaded.append(image_path.name.rsplit("_", 1)[0])
        return np.zeros((40, 40)), np.random.default_rng(0).uniform(0, 40, (68, 2))

    monkeypatch.setattr(ev.datasets, "load_helen_photo", record)
    train_ids, _ = photos.helen_split(photo for photo, _, _ in files)
    backgrounds = recipes._helen_backgrounds(None, train_ids, 10_000)
    assert len(backgrounds) == len(loaded) > 400
    assert set(loaded) <= train_ids and not set(loaded) & doubles


def test_the_identity_recipe_fits_on_lfw_people_and_returns_the_eight_bit_form(
    tmp_path, monkeypatch, capsys
):
    """``build_identity_model`` (``eigenvision build-models --identity``) on a small copy of
    ``lfw_train``: the model is fitted on the photos cut on the eyes given, in the 8-bit form
    the shipped file has, and scores two photos of one person above two of two people; it shows
    its progress while it describes the faces."""
    from eigenvision.faces.recipes import build_identity_model
    from tests.conftest import require_dataset_folder

    source = require_dataset_folder("lfw_train")
    root = tmp_path / "lfw_train"
    (root / "images").mkdir(parents=True)
    (root / "pairsDevTrain.txt").write_text("0\n")
    people = [p for p in sorted((source / "images").iterdir()) if len(list(p.glob("*.jpg"))) >= 4]
    for person in people[:24]:
        (root / "images" / person.name).mkdir()
        for photo in sorted(person.glob("*.jpg"))[:4]:
            (root / "images" / person.name / photo.name).symlink_to(photo)
    lfw = ev.datasets.load_lfw(root)
    eyes = np.broadcast_to(np.asarray(ev.datasets.LFW_EYES), (len(lfw), 2, 2))
    options = dict(pca_components=30, lda_components=12, n_components=6, cohort_size=8)
    options.update(describer__fisher_clusters=4)
    monkeypatch.setattr(ev.descriptors, "FISHER_SAMPLE", 24)  # the mixture's crops: seconds
    model = build_identity_model(
        root,
        eyes=eyes,
        progress=True,
        cohort_top=4,
        calibration_share=0.2,
        temper=False,  # tempered_on_att has its own test
        **options,
    )
    # regression: after the eyes, the build (tens of minutes on lfw_train) showed nothing
    assert "describing faces" in capsys.readouterr().err
    assert isinstance(model, ev.IdentityModel) and model.cohort_coordinates_.dtype == np.int8
    assert isinstance(model.describer.fisher_, ev.FisherVectors)  # the recipe's learnt description
    assert {block.step_.dtype for block in model.plda_.models_.values()} == {np.dtype(np.int8)}
    crops = np.stack([ev.faces.compare.model_crop(image, eyes[0], model) for image in lfw.images])
    same, other = model.score_pairs(crops[[0, 4]], crops[[1, 8]])
    assert np.isfinite([same, other]).all() and same > other
