"""Eigenfeatures: the FeatureDetector on the IMM faces, its geometry, scores and model files."""

import copy

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import eigenvision as ev
from eigenvision.evaluate import error_fractions, eye_error
from eigenvision.normalize import unit_norm


@pytest.fixture(scope="module")
def folds(imm):
    person = imm.labels.astype(int)
    return imm[person <= 6], imm[person > 6]


@pytest.fixture(scope="module")
def detector(folds):
    return ev.FeatureDetector().fit(folds[0])


def _eye_errors(detector, faces, *, transform=lambda image, box: (image, box, 1.0)):
    found_left, found_right = [], []
    for i in range(len(faces)):
        left, right = faces.landmarks["left_eye"][i], faces.landmarks["right_eye"][i]
        image, box, factor = transform(faces.images[i], ev.face_box(left, right))
        located = detector.locate(image, box=box)
        found_left.append(np.array(located["left_eye"]) / factor)
        found_right.append(np.array(located["right_eye"]) / factor)
    return eye_error(
        found_left, found_right, faces.landmarks["left_eye"], faces.landmarks["right_eye"]
    )


def test_locates_eyes_of_unseen_people_within_the_pupil(detector, folds):
    # Trained on people 1-6, tested on 7-12: the goal is >= 95% at e <= 0.05.
    fractions = error_fractions(_eye_errors(detector, folds[1]))
    assert fractions[0.05] >= 0.95
    assert fractions[0.25] == 1.0


def test_nose_and_mouth_found_near_their_landmarks(detector, folds):
    faces = folds[1]
    for feature in ("nose", "mouth"):
        errors = []
        for i in range(len(faces)):
            left, right = faces.landmarks["left_eye"][i], faces.landmarks["right_eye"][i]
            located = detector.locate(faces.images[i], box=ev.face_box(left, right))
            iod = np.linalg.norm(left - right)
            errors.append(
                np.linalg.norm(np.array(located[feature]) - faces.landmarks[feature][i]) / iod
            )
        assert np.mean(np.array(errors) <= 0.15) >= 0.9, feature


def test_whole_image_minimum_is_the_smallest_window_of_every_scale(detector, folds):
    """The lecture's criterion, brute force: every window of the photo at each searched scale."""
    faces = folds[1]
    left, right = faces.landmarks["left_eye"][0], faces.landmarks["right_eye"][0]
    box = ev.face_box(left, right)
    image = faces.images[0].astype(np.float64)
    x, y, score = detector.feature_minimum(image, "left_eye", box=box, whole_image=True)
    base = detector.iod / np.linalg.norm(right - left)
    maps = [
        detector.feature_map(image, "left_eye", factor=base * m) for m in detector.search_scales
    ]
    best = int(np.argmin([np.min(m) for m in maps]))
    assert score == pytest.approx(maps[best].min(), abs=1e-12)
    # reported at that window's centre, in the photo's pixels
    row, col = np.unravel_index(np.argmin(maps[best]), maps[best].shape)
    h, w = detector.patch_shapes_[detector.features_.index("left_eye")]
    scaled = np.array(maps[best].shape) + (h - 1, w - 1)
    factor_y, factor_x = np.array(image.shape) / scaled
    assert (x, y) == pytest.approx(((col + w / 2) * factor_x - 0.5, (row + h / 2) * factor_y - 0.5))


def test_any_resolution_and_a_loose_box(detector, folds):
    """Half resolution, box shifted by 10% and 15% too wide: still between the eyes."""
    rng = np.random.default_rng(0)

    def transform(image, box):
        factor = 0.5
        small = ev.transform.resize(
            image, (int(image.shape[0] * factor), int(image.shape[1] * factor))
        )
        x, y, w, h = (v * factor for v in box)
        dx, dy = rng.uniform(-0.1, 0.1, size=2) * w
        return small, (x + dx - 0.075 * w, y + dy, 1.15 * w, h), factor

    fractions = error_fractions(_eye_errors(detector, folds[1][::2], transform=transform))
    assert fractions[0.10] >= 0.9
    assert fractions[0.25] >= 0.95


def test_positions_are_in_the_input_image_pixels(detector, folds):
    face = folds[1].images[0]
    left, right = folds[1].landmarks["left_eye"][0], folds[1].landmarks["right_eye"][0]
    x, y, w, h = ev.face_box(left, right)
    x0, y0 = int(x) - 100, int(y) - 100  # margins beyond every search region: no clipping
    crop = face[y0 : int(y + h) + 100, x0 : int(x + w) + 100]
    whole = detector.locate(face, box=(x, y, w, h))
    cropped = detector.locate(crop, box=(x - x0, y - y0, w, h))
    for feature in detector.features_:
        np.testing.assert_allclose(np.add(cropped[feature], (x0, y0)), whole[feature], atol=1e-9)


def test_scales_given_to_locate_are_a_detector_of_those_search_scales(detector, folds):
    """``locate(scales=...)`` searches every feature as a detector with those ``search_scales``
    would (find's fitted boxes pass fewer), and refuses scales that are no sizes."""
    face = folds[1].images[1]
    box = ev.face_box(folds[1].landmarks["left_eye"][1], folds[1].landmarks["right_eye"][1])
    scales = (0.92, 1.0, 1.08)
    narrowed = copy.copy(detector).set_params(search_scales=scales)
    given = detector.locate(face, box=box, scales=scales)
    assert given == narrowed.locate(face, box=box)
    assert detector.search_scales != scales  # the detector's own settings left alone
    # the scales are used: one far from the face's size places elsewhere than the default
    far = detector.locate(face, box=box, scales=(0.6,))
    assert far == copy.copy(detector).set_params(search_scales=(0.6,)).locate(face, box=box)
    assert far.scores != detector.locate(face, box=box).scores
    for bad in ((), (1.0, 0.0), (1.0, -2.0), (np.nan,), "wide", 5):
        with pytest.raises(ValueError, match="locate: scales must be"):
            detector.locate(face, box=box, scales=bad)


def test_non_face_gets_low_confidence(detector, folds, rng):
    face = folds[1].images[0]
    box = ev.face_box(folds[1].landmarks["left_eye"][0], folds[1].landmarks["right_eye"][0])
    located = detector.locate(face, box=box)
    noise = detector.locate(rng.random(face.shape), box=box)
    assert min(located.confidence.values()) > 0.05
    assert max(noise.confidence.values()) < 0.02
    assert min(noise.scores.values()) > max(located.scores.values())


def test_template_detector_scores_distance_to_the_mean_patch(folds, rng):
    detector = ev.FeatureDetector(
        features=("left_eye", "right_eye"), n_components=0, rotations=(0.0,), scales=(1.0,)
    ).fit(folds[0][:10])
    space = detector.spaces_["left_eye"]
    assert space.components_.shape[0] == 0
    image = rng.random((40, 50))
    windows = sliding_window_view(image, space.image_shape_)
    flat = unit_norm(windows.reshape(-1, *space.image_shape_)).reshape(-1, space.mean_.size)
    expected = np.sum((flat - space.mean_) ** 2, axis=1).reshape(windows.shape[:2])
    np.testing.assert_allclose(
        detector.feature_map(image, "left_eye"), expected, rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        detector.feature_map(image, "left_eye", method="ssd"), expected, rtol=1e-9, atol=1e-12
    )


def test_patches_are_normalised_and_cut_at_the_landmarks(detector, folds):
    faces = folds[1]
    positions = {f: faces.landmarks[f][0] for f in detector.features_}
    patches = detector.patches(faces.images[0], locations=positions)
    for index, feature in enumerate(detector.features_):
        patch = patches[feature]
        assert patch.shape == tuple(detector.patch_shapes_[index])
        assert abs(patch.mean()) < 1e-12 and abs(np.linalg.norm(patch) - 1) < 1e-12
        # the patch of a true landmark is close to its feature space
        assert (
            detector.spaces_[feature].dffs(patch.reshape(1, -1))[0]
            < np.median(detector.score_quantiles_[index]) * 3
        )


def test_save_load_roundtrip(detector, folds, tmp_path):
    path = ev.save(detector, tmp_path / "features.npz")
    loaded = ev.load(path)
    face = folds[1].images[3]
    box = ev.face_box(folds[1].landmarks["left_eye"][3], folds[1].landmarks["right_eye"][3])
    assert loaded.locate(face, box=box) == detector.locate(face, box=box)
    assert loaded.get_params() == detector.get_params()


def test_bad_input(detector, folds):
    with pytest.raises(ValueError, match="needs landmarks"):
        ev.FeatureDetector().fit(folds[0].images)
    with pytest.raises(ValueError, match="lack"):
        ev.FeatureDetector().fit(
            folds[0].images, landmarks={"left_eye": folds[0].landmarks["left_eye"]}
        )
    with pytest.raises(ValueError, match="patch shape"):
        ev.FeatureDetector(features=("left_ear",)).fit(folds[0])
    with pytest.raises(ev.NotFittedError):
        ev.FeatureDetector().locate(folds[1].images[0])
    image = folds[1].images[0].copy()
    image[10, 10] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        detector.locate(image)
    with pytest.raises(ValueError, match="positive width"):
        detector.locate(folds[1].images[0], box=(0, 0, 0, 10))


def test_face_windows_put_the_eyes_where_window_eyes_reads_them(rng):
    # Two bright dots as eyes on a tilted face; in the window they must land at the
    # FACE_WINDOW positions, and window_eyes of a detection covering it reads them back.
    image = np.zeros((120, 160))
    left, right = np.array([50.0, 60.0]), np.array([98.0, 74.0])
    rows, cols = np.mgrid[:120, :160]
    for x, y in (left, right):
        image += np.exp(-((cols - x) ** 2 + (rows - y) ** 2) / 8.0)
    landmarks = {"left_eye": left[None], "right_eye": right[None]}
    windows = ev.face_windows(image[None], landmarks, iod=30, mirror=True)
    assert windows.shape == (2, 48, 42)
    left_half = cols[:48, :42] < 21
    for half, expected in ((left_half, (12, 6)), (~left_half, (12, 36))):  # (row, col)
        peak = np.unravel_index(np.argmax(np.where(half, windows[0], 0)), half.shape)
        assert np.allclose(peak, expected, atol=1)
    assert np.allclose(windows[1], windows[0][:, ::-1])  # the mirror
    detection = ev.Detection(x=10.0, y=20.0, width=42.0, height=48.0, scale=1.0, score=0.0)
    found_left, found_right = ev.window_eyes(detection)
    np.testing.assert_allclose(found_left, [10 + 6, 20 + 12])
    np.testing.assert_allclose(found_right, [10 + 6 + 30, 20 + 12])
    with pytest.raises(ValueError, match="face_windows needs landmarks"):
        ev.face_windows(image[None])
    with pytest.raises(ValueError, match=r"iod must lie in \[5, 400\]"):
        ev.face_windows(image[None], landmarks, iod=2)


def test_a_helen_trained_locator_finds_wild_eyes_by_decision(tmp_path):
    """Regression (issue 18): a locator trained on HELEN placed both eyes within 0.10 IOD on
    16% of held-out faces. The DFFS of a ten-component space of wild eyes is lower on smooth
    skin than on the eyes themselves; the decision against patches mined around each feature
    finds them. Held-out photos, true face box."""
    from eigenvision import datasets, evaluate
    from eigenvision.faces import photos
    from tests.conftest import require_helen_files

    files = require_helen_files()
    train_ids, test_ids = photos.helen_split(photo for photo, _, _ in files)
    train = datasets.load_helen(photo_ids=set(sorted(train_ids)[:250]))
    test = datasets.load_helen(photo_ids=set(sorted(test_ids)[:30]))

    def rate(detector):
        errors = []
        for i in range(len(test)):
            left, right = test.landmarks["left_eye"][i], test.landmarks["right_eye"][i]
            found = detector.locate(test.images[i], box=ev.face_box(left, right))
            errors.append(evaluate.eye_error(found["left_eye"], found["right_eye"], left, right))
        return np.mean(np.array(errors) <= 0.10)

    by_dffs = rate(ev.FeatureDetector(features=("left_eye", "right_eye")).fit(train))
    detector = ev.FeatureDetector(features=("left_eye", "right_eye"), score="decision").fit(train)
    by_decision = rate(detector)
    assert by_decision >= 0.7 and by_decision >= by_dffs + 0.3, (by_decision, by_dffs)
    loaded = ev.load(ev.save(detector, tmp_path / "eyes.npz"))
    again = loaded.locate(
        test.images[0],
        box=ev.face_box(test.landmarks["left_eye"][0], test.landmarks["right_eye"][0]),
    )
    first = detector.locate(
        test.images[0],
        box=ev.face_box(test.landmarks["left_eye"][0], test.landmarks["right_eye"][0]),
    )
    assert again.positions == first.positions and 0 <= again.confidence["left_eye"] <= 1


def test_the_lectures_left_eye_roc_over_the_whole_photo(imm):
    """The lecture's criterion on IMM (two folds of six people, 120 test faces): the global
    minimum of DFFS(10) over the whole photo, under a threshold and within 0.1 IOD, is 94% of
    the detections at 6% false alarms. Regression: with the eigenfeatures' eye patches
    (0.5 x 0.8 IOD) it was 89.2%, its misses on the shadow under the lip; with the face
    finder's placer's (``PLACEMENT_EYE_PATCH``, one IOD tall, chosen on HELEN photos) 98.3%."""
    from eigenvision.evaluate import detection_rate_at

    person = imm.labels.astype(int)
    eyes = {eye: ev.faces.geometry.PLACEMENT_EYE_PATCH for eye in ("left_eye", "right_eye")}
    minima, errors = [], []
    for train, test in ((person <= 6, person > 6), (person > 6, person <= 6)):
        detector = ev.FeatureDetector(
            features=("left_eye", "right_eye"), n_components=10, search_margin=1.0, patch=eyes
        ).fit(imm[train])
        faces = imm[test]
        for image, left, right in zip(
            faces.images, faces.landmarks["left_eye"], faces.landmarks["right_eye"], strict=True
        ):
            x, y, score = detector.feature_minimum(
                image, "left_eye", box=ev.face_box(left, right), whole_image=True
            )
            minima.append(score)
            errors.append(np.hypot(x - left[0], y - left[1]) / np.linalg.norm(right - left))
    assert len(minima) == 120
    assert detection_rate_at(minima, errors, false_alarm=0.06, radius=0.1) >= 0.94


def test_patches_name_the_features_their_locations_lack(detector, folds):
    """Regression (hardening round 4): locations without one of the features ended in a
    KeyError naming only the key; without an eye, in NumPy."""
    faces = folds[1]
    positions = {name: faces.landmarks[name][0] for name in ("left_eye", "right_eye", "nose")}
    with pytest.raises(ValueError, match=r"locations lack \['mouth'\]"):
        detector.patches(faces.images[0], locations=positions)
    positions["left_eye"] = positions["right_eye"]
    positions["mouth"] = faces.landmarks["mouth"][0]
    with pytest.raises(ValueError, match="coincide"):
        detector.patches(faces.images[0], locations=positions)


def _noise_detector(rng):
    """Four noise images with fixed landmarks and a small detector fitted on them."""
    faces = rng.random((4, 60, 60)).astype(np.float32)
    marks = {
        "left_eye": [[20.0, 25.0]] * 4,
        "right_eye": [[40.0, 25.0]] * 4,
        "nose": [[30.0, 35.0]] * 4,
        "mouth": [[30.0, 45.0]] * 4,
    }
    detector = ev.FeatureDetector(iod=10, rotations=(0,), scales=(1,)).fit(
        ev.ImageSet(faces, np.array([0, 0, 1, 1]), landmarks=marks)
    )
    return faces, detector


def test_unknown_feature_names_are_named(rng):
    """Regression: an unknown feature escaped as "tuple.index(x): x not in tuple"."""
    faces, detector = _noise_detector(rng)
    for call in (
        lambda: detector.search_region("left_ear", (0, 0, 40, 40)),
        lambda: detector.feature_map(faces[0], "left_ear"),
        lambda: detector.feature_minimum(faces[0], "left_ear"),
    ):
        with pytest.raises(ValueError, match="knows .* not 'left_ear'"):
            call()


def test_nan_boxes_and_empty_input_are_named(rng):
    """Regression: a NaN face box and empty input escaped as foreign errors."""
    faces, detector = _noise_detector(rng)
    with pytest.raises(ValueError, match="box must be finite"):
        detector.locate(faces[0], box=(0, 0, float("nan"), 40))
    with pytest.raises(ValueError, match="gallery is empty"):
        ev.NearestNeighbor().fit(np.empty((0, 3)))
    with pytest.raises(ValueError, match="at least 2 images"):
        ev.Recognizer(2).fit(np.empty((0, 4, 4)), np.array([]))
    with pytest.raises(ValueError, match="n, d >= 2"):
        ev.select_rank(np.empty((0, 5)))
