"""The recipes of the shipped models (eigenvision.faces.recipes)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from conftest import KnownFaces, require_helen_files

import eigenvision as ev
from eigenvision.faces import photos, recipes


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
