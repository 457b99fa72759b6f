"""The face windows, their reductions and antialiasing (eigenvision.faces.geometry)."""

from __future__ import annotations

import numpy as np
import pytest

import eigenvision as ev


def test_windows_cut_at_once_equal_one_by_one(rng):
    """face_windows_at (one compiled sampling) against face_window (a skimage warp each),
    tilted, scaled and off the image's edge."""
    image = rng.random((90, 120))
    left = rng.uniform(-15, 130, (40, 2))
    angle, distance = rng.uniform(-0.6, 0.6, 40), rng.uniform(4, 60, 40)
    right = left + np.c_[np.cos(angle), np.sin(angle)] * distance[:, None]
    from eigenvision.faces.geometry import face_window, face_windows_at

    pairs = zip(left, right, strict=True)
    expected = np.stack([face_window(image, a, b, iod=12) for a, b in pairs])
    np.testing.assert_allclose(
        face_windows_at(image, np.stack([left, right], 1), iod=12), expected, atol=1e-12
    )
    with pytest.raises(ValueError, match="distinct finite"):
        face_windows_at(image, [[(1.0, 2.0), (1.0, 2.0)]])


def test_antialiased_windows_average_a_fine_grating_away(rng):
    """Regression: a face many times larger than the window was sampled a pixel here and there.
    A one-pixel grating (0, 1) under eyes 96 pixels apart averages to 0.5 in an antialiased
    window, where bilinear sampling alone reads bare stripes; small faces are cut as before."""
    from eigenvision.faces.geometry import face_windows_at

    grating = np.tile([0.0, 1.0], (400, 200))
    large = [[(150.0, 180.0), (246.0, 180.0)], [(100.0, 150.0), (190.0, 170.0)]]
    aliased = face_windows_at(grating, large, iod=16)
    smooth = face_windows_at(grating, large, iod=16, antialias=True)
    # bilinear samples land on the stripes: a false grey (0.8, flat) or stripes again
    off = np.abs(aliased.mean(axis=(1, 2)) - 0.5) + aliased.std(axis=(1, 2))
    assert np.all(off > 0.25), off
    assert np.all(smooth.std(axis=(1, 2)) < 0.03)
    np.testing.assert_allclose(smooth.mean(axis=(1, 2)), 0.5, atol=0.01)
    image = rng.random((120, 160))
    for a in range(3):  # eyes under 1.5 window IODs apart: the image itself
        pair = [[(50.0 + a, 60.0), (70.0 + a, 61.0)]]
        np.testing.assert_array_equal(
            face_windows_at(image, pair, iod=16, antialias=True),
            face_windows_at(image, pair, iod=16),
        )
    # eyes 100 apart: two octaves down they are 25 apart, in [1.5, 1.5 sqrt 2) window IODs
    from eigenvision.transform import resize, resize_points

    reduced = resize(image, (30, 40))
    pair = np.array([[(30.0, 50.0), (130.0, 50.0)]])
    np.testing.assert_allclose(
        face_windows_at(image, pair, iod=16, antialias=True),
        face_windows_at(reduced, resize_points(pair, image.shape, reduced.shape), iod=16),
        atol=1e-12,
    )
    with pytest.raises(ValueError, match="distinct finite"):
        face_windows_at(image, [[(1.0, np.nan), (5.0, 2.0)]], antialias=True)


def test_half_octaves_make_each_reduction_once_and_cut_the_same_windows(rng, monkeypatch):
    """A search cuts windows from one photo several times: ``HalfOctaves`` keeps the
    reductions (each resized once, however many calls), the windows equal to the last bit those
    of the bare image, and a later change to the image the caller holds changes nothing."""
    from eigenvision.faces import geometry
    from eigenvision.faces.geometry import HalfOctaves, face_windows_at

    image = rng.random((300, 400))
    pairs = np.array(
        [
            [(50.0, 60.0), (70.0, 61.0)],
            [(100.0, 150.0), (190.0, 170.0)],
            [(30.0, 50.0), (230.0, 50.0)],
            [(60.0, 100.0), (180.0, 90.0)],
        ]
    )
    expected = face_windows_at(image, pairs, iod=16, antialias=True)
    made = []
    resize = geometry.resize
    monkeypatch.setattr(
        geometry, "resize", lambda im, shape: made.append(shape) or resize(im, shape)
    )
    photo = HalfOctaves(image)
    image[:] = 0.0  # the caller's array; the reductions are of the copy taken
    for _ in range(3):
        np.testing.assert_array_equal(
            face_windows_at(photo, pairs, iod=16, antialias=True), expected
        )
    # eyes 20, 92, 200 and 120 apart: half-octave steps 0, 3, 6 and 4 below 24 (1.5 x 16)
    assert made == [photo.shape(step) for step in (3, 4, 6)]
    assert photo.shape(3) == (106, 141) and photo.shape(6) == (38, 50)


def test_half_octaves_resize_a_pyramid_level_from_the_reduction_just_above_it(rng):
    """``HalfOctaves.resized``: a level between half-octaves is resampled from the finer one
    (so an image pyramid costs a few reductions of the image), a half-octave's own shape is the
    reduction itself, and the result is the resize of that reduction, to the bit."""
    from eigenvision.faces.geometry import HalfOctaves

    photo = HalfOctaves(rng.random((300, 400)))
    assert photo.resized(photo.shape(4)) is photo[4]
    level = photo.resized((160, 213))  # 1.875x smaller: between steps 1 (212, 283) and 2
    np.testing.assert_array_equal(level, ev.transform.resize(photo[1], (160, 213)))
    # one pixel wider than step 2's: from step 1
    assert photo.shape(2) == (150, 200)
    np.testing.assert_array_equal(
        photo.resized((150, 201)), ev.transform.resize(photo[1], (150, 201))
    )
    np.testing.assert_array_equal(photo.resized((300, 400)), photo.image)
