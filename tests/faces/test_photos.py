"""The shipped finder through ``find_faces``: the astronaut's face, and none where there is none."""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data
from skimage.feature import Cascade

import eigenvision as ev
from eigenvision.faces import photos


def _lbp_boxes(image):
    cascade = Cascade(data.lbp_frontal_face_cascade_filename())
    found = cascade.detect_multi_scale(
        image, scale_factor=1.2, step_ratio=1, min_size=(60, 60), max_size=(200, 200)
    )
    return [(d["c"], d["r"], d["width"], d["height"]) for d in found]


def test_the_shipped_finder_finds_the_astronaut_first(finder):
    """Checked against scikit-image's LBP cascade, computed here on the same picture (at a
    probability of 0.5, under the default threshold: this test is about where, not how sure)."""
    image = data.astronaut()
    faces = ev.find_faces(image, threshold=0.5)
    assert faces, "no face found in the astronaut picture"
    ((x, y, w, h),) = _lbp_boxes(photos.sample_picture("astronaut"))
    best = faces[0]
    centre = np.mean([best.left_eye, best.right_eye], axis=0)
    assert x <= centre[0] <= x + w and y <= centre[1] <= y + h  # the eyes lie in the LBP box
    assert 0.25 <= best.iod / w <= 0.65  # and span a face's share of it
    assert best.confidence >= 0.5 and best.nose is not None


@pytest.mark.parametrize("name", ["immunohistochemistry", "colorwheel", "shepp_logan_phantom"])
def test_no_face_in_pictures_without_faces(name):
    """Sample pictures that were not among the training backgrounds."""
    assert ev.find_faces(photos.sample_picture(name)) == []


def test_blank_noise_and_tiny_photos_give_no_face(rng):
    assert ev.find_faces(np.zeros((300, 400))) == []
    assert ev.find_faces(np.full((300, 400), 0.5) + 0.01 * rng.normal(size=(300, 400))) == []
    assert ev.find_faces(np.ones((10, 10))) == []
