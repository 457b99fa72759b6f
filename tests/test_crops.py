"""Faces cut from photos: align_face and the face box (eigenvision.faces.crops, .geometry)."""

import numpy as np
import pytest

import eigenvision as ev


@pytest.mark.parametrize(
    ("face", "message"),
    [
        (((30, 40), (30, 40)), "coincide"),
        (((np.nan, 40), (70, 40)), "two finite"),
        ((("a", "b"), (70, 40)), "two finite"),
        (None, "face must be a Face"),
    ],
)
def test_align_face_names_eyes_it_cannot_use(face, message, rng):
    """Regression (hardening round 4): string eyes failed inside NumPy ("could not convert
    string to float"), ``face=None`` in tuple unpacking."""
    with pytest.raises(ValueError, match=message):
        ev.align_face(rng.random((100, 100)), face)


def test_face_box_refuses_nan_eyes():
    """Regression: ``face_box`` with a NaN eye answered a box of NaN."""
    with pytest.raises(ValueError, match="two finite"):
        ev.face_box((np.nan, 3), (5, 3))


def test_align_face_reads_light_as_the_finder_does(rng):
    """Regression (hardening round 4): a float photo in 0..255 gave a crop in 0..255 (every
    model downstream reads [0, 1]); it is brought to [0, 1] by its own range, as the finder
    brings it, and a photo within [0, 1] is cut as it is."""
    photo = rng.random((100, 120))
    eyes = ((40.0, 45.0), (75.0, 45.0))
    low, high = photo.min(), photo.max()
    own_range = ev.align_face((photo - low) / (high - low), eyes)
    np.testing.assert_allclose(ev.align_face(photo * 255, eyes), own_range, atol=1e-6)
    np.testing.assert_allclose(ev.align_face(photo - 0.5, eyes), own_range, atol=1e-6)
    as_given = ev.align_face(photo, eyes)
    assert not np.allclose(as_given, own_range)  # within [0, 1]: not stretched
    np.testing.assert_allclose(as_given, ev.align_face(photo.astype(np.float32), eyes), atol=1e-4)
