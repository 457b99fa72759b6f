"""Training a finder: a few HELEN photos give a finder that ranks held-out faces first."""

from __future__ import annotations

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import evaluate
from eigenvision.faces import photos, recipes
from eigenvision.faces.candidates import CandidateSearch
from eigenvision.faces.decision import FaceDecision
from eigenvision.faces.training import training_background
from tests.conftest import require_helen_files


def test_a_finder_trained_on_a_few_helen_photos_ranks_held_out_faces_first(rng):
    """The training recipe end to end, small: Sung & Poggio's face and non-face clusters and
    perceptron, bootstrapped on background photos; held-out faces (other photo ids) must
    outscore the candidates stage 1 finds in held-out backgrounds, and bad settings are named."""

    files = require_helen_files()
    train_ids, test_ids = photos.helen_split(photo for photo, _, _ in files)
    train_ids, test_ids = sorted(train_ids)[:30], sorted(test_ids)[:8]
    faces = ev.datasets.load_helen(photo_ids=set(train_ids))
    decision = FaceDecision(negatives_per_image=50, n_clusters=3)
    finder = ev.FaceFinder(decision=decision).fit(
        faces, recipes._helen_backgrounds(None, train_ids, 4)
    )
    assert finder.decision is decision and isinstance(finder.search, CandidateSearch)
    assert len(finder.decision.face_clusters_) == len(finder.decision.nonface_clusters_) == 3
    held_out = ev.datasets.load_helen(photo_ids=set(test_ids))
    windows = ev.normalize.unit_norm(
        ev.face_windows(held_out.images, held_out.landmarks, iod=finder.iod)
    )
    clutter = []
    for item in recipes._helen_backgrounds(None, test_ids, 3):
        image, avoid = training_background(item, 480)
        away = [
            c
            for c in finder.search.candidates(image, 200)
            if ev.search.box_iou(ev.face_box(*c[:2]), avoid).max() == 0
        ]
        clutter.append(finder.decision.windows(image, away))
    truth = np.r_[np.ones(len(windows)), np.zeros(sum(map(len, clutter)))]
    scores = finder.decision.decision_function(np.concatenate([windows, *clutter]))
    assert evaluate.auc(*evaluate.roc_curve(truth, scores)[:2]) > 0.9
    with pytest.raises(ValueError, match="n_clusters must be an int in"):
        ev.FaceFinder(decision=FaceDecision(n_clusters=0)).check_parameters()
