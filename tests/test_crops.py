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


def _badge_photo():
    """A photo with a sure face (p 0.99) and, as large, a badge the finder takes at p 0.57
    (the astronaut's name badge at the detection threshold 0.3)."""
    from dataclasses import replace

    from conftest import KnownFaces, known_face

    sure = known_face((40.0, 60.0), (70.0, 60.0))
    badge = replace(known_face((130.0, 150.0), (160.0, 150.0)), score=0.28, confidence=0.57)
    finder = KnownFaces({0: [sure, badge]})
    finder.threshold = 0.3
    finder.identity_threshold = 0.8
    return np.zeros((220, 220, 3)), finder, sure


def test_identity_work_takes_the_faces_at_the_identity_threshold():
    """Issue 80: naming, enrolling, comparing and grouping took every face found at the
    detection threshold (0.3), so a badge or a sign was named and grouped with people; they
    take the finder's stricter ``identity_threshold``, its ``threshold`` where it has none."""
    from eigenvision.faces.compare import faces_of_photo, model_crop
    from eigenvision.faces.crops import identity_faces, identity_threshold

    photo, finder, sure = _badge_photo()
    assert identity_threshold(finder) == 0.8
    assert identity_faces(finder, photo) == [sure]
    assert ev.single_face(finder, photo) == sure  # two faces of one size: refused before
    crops, _ = ev.photo_faces(finder, [photo], every_face=True)
    assert len(crops) == 1
    model = ev.default_identity_model("classical")
    faces, cuts, _ = faces_of_photo(photo, finder, model)
    assert faces == [sure]
    np.testing.assert_array_equal(cuts[0], model_crop(photo, sure, model))
    finder.identity_threshold = None  # a finder without one: its detection threshold
    assert identity_threshold(finder) == 0.3
    assert len(identity_faces(finder, photo)) == 2


def test_a_photo_without_a_face_at_the_identity_threshold_says_which_to_lower():
    from dataclasses import replace

    photo, finder, sure = _badge_photo()
    finder.faces_by_photo[0] = [replace(sure, confidence=0.6)]
    with pytest.raises(
        ev.NoFaceError, match=r"identity threshold 0\.8.*finder\.identity_threshold"
    ):
        ev.single_face(finder, photo)


def test_the_shipped_finder_takes_faces_for_identity_at_even_odds():
    """Issue 80: the shipped finder's identity threshold is its recipe's, stricter than the
    detection threshold (0.3) it used to share."""
    from eigenvision.faces.photos import DEFAULT_FINDER
    from eigenvision.faces.recipes import IDENTITY_THRESHOLD

    if not DEFAULT_FINDER.is_file():
        pytest.skip("data/face_finder.npz is not here")
    finder = ev.default_finder()
    assert finder.identity_threshold == max(finder.threshold, IDENTITY_THRESHOLD)
    assert finder.identity_threshold > finder.threshold


def test_photos_given_as_paths_or_none_get_the_librarys_error():
    """Regression: finder.find('photo.jpg') said 'could not convert string to float';
    single_face(None, photo) raised AttributeError."""
    finder = ev.default_finder()
    with pytest.raises(TypeError, match=r"file name \('photo.jpg'\).*ev.load_image"):
        finder.find("photo.jpg")
    with pytest.raises(TypeError, match="array of numbers"):
        finder.find(None)
    with pytest.raises(TypeError, match="finder must be a face finder.*default_finder"):
        ev.single_face(None, np.zeros((60, 60)))
    with pytest.raises(TypeError, match="finder must be a face finder"):
        ev.photo_faces("data/face_finder.npz", [np.zeros((60, 60))])


def test_align_face_scales_16_bit_photos_and_refuses_bad_geometry(rng):
    """Regression: a uint16 photo's crop reached 64888; shape (1.5, 10) gave a 1x10 crop; eyes
    1e300 apart ended in 'cannot convert float NaN to integer'."""
    photo = (rng.random((80, 90)) * 65535).astype(np.uint16)
    eyes = ((30.0, 35.0), (55.0, 36.0))
    crop = ev.align_face(photo, eyes, shape=(40, 32))
    np.testing.assert_allclose(crop, ev.align_face(photo / 65535.0, eyes, shape=(40, 32)))
    assert crop.max() <= 1.0
    with pytest.raises(ValueError, match=r"whole numbers, got \(1.5, 10\)"):
        ev.align_face(photo, eyes, shape=(1.5, 10))
    assert ev.align_face(photo, eyes, shape=(40.0, 32)).shape == (40, 32)
    with pytest.raises(ValueError, match="1e\\+300 pixels apart"):
        ev.align_face(photo, ((0.0, 0.0), (1e300, 0.0)))
