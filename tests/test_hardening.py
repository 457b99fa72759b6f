"""Defects found with hostile input: each test failed on the code before its fix (issue 17)."""

from __future__ import annotations

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import evaluate


def test_roc_curve_refuses_labels_it_cannot_read():
    """Regression: multiclass, {-1, 1} and string labels were cast to bool silently."""
    scores = [0.1, 0.4, 0.35, 0.8]
    with pytest.raises(ValueError, match="3 classes"):
        evaluate.roc_curve([0, 1, 2, 1], scores)
    with pytest.raises(ValueError, match="pos_label"):
        evaluate.roc_curve(["cat", "dog", "dog", "cat"], scores)
    # {-1, 1}: 1 is positive (scikit-learn's rule), not "non-zero is positive"
    fpr, tpr, _ = evaluate.roc_curve([-1, -1, 1, 1], scores)
    expected = evaluate.roc_curve([0, 0, 1, 1], scores)
    np.testing.assert_array_equal(fpr, expected[0])
    np.testing.assert_array_equal(tpr, expected[1])
    fpr, tpr, _ = evaluate.roc_curve(["cat", "dog", "dog", "cat"], scores, pos_label="dog")
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    ref = sklearn_metrics.roc_curve(
        ["cat", "dog", "dog", "cat"], scores, pos_label="dog", drop_intermediate=False
    )
    np.testing.assert_allclose(fpr, ref[0])
    np.testing.assert_allclose(tpr, ref[1])


def test_complex_input_is_refused_not_truncated(rng):
    """Regression: complex input lost its imaginary part in a silent cast."""
    image = rng.random((30, 30)) + 1j
    space = ev.Eigenspace(2).fit(rng.random((10, 5, 5)))
    for call in (
        lambda: ev.dffs_map(image, space),
        lambda: ev.ImageSet(image[None], np.array([0])),
        lambda: ev.normalize_image(image, shape=(10, 10)),
        lambda: ev.NearestNeighbor().fit(image),
        lambda: evaluate.roc_curve([0, 1], [1j, 2]),
        lambda: ev.select_rank(image),
    ):
        with pytest.raises((TypeError, ValueError), match="[Cc]omplex"):
            call()


def test_fisher_space_never_reports_components_it_did_not_make(rng):
    """Regression: with pca_components below n_components, n_components_ claimed more rows
    than components_ had."""
    X, y = rng.random((40, 12)), np.repeat(np.arange(8), 5)
    with pytest.raises(ValueError, match="pca_components"):
        ev.FisherSpace(n_components=7, pca_components=4).fit(X, y)
    space = ev.FisherSpace(n_components=4, pca_components=4).fit(X, y)
    assert space.n_components_ == len(space.components_) == 4


def test_kernel_pca_says_when_it_keeps_fewer_components(rng):
    """Regression: KernelPCA dropped zero-variance components without a word."""
    X = np.repeat(rng.random((3, 4)), 4, axis=0)  # 3 distinct points: rank 2 after centring
    with pytest.warns(UserWarning, match="keeps 2 of the 5"):
        model = ev.KernelPCA(5, kernel="linear").fit(X)
    assert model.n_components_ == 2


def test_gap_rank_ignores_the_near_singular_tail(rng):
    """Regression: the eigengap of 300 x 256 Gaussian noise chose 255 of 256."""
    noise = rng.normal(size=(300, 256))
    assert ev.select_rank(noise, method="gap").rank < 128
    X = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 30)) * 3 + rng.normal(size=(200, 30))
    assert ev.select_rank(X, method="gap").rank == 3
    with pytest.raises(ValueError, match="n_permutations"):
        ev.select_rank(X, n_permutations=0)


def test_detect_refuses_nan_threshold_zero_detections_and_zero_scales(rng):
    """Regression: detect(threshold=nan) returned [], max_detections=0 returned 72 windows,
    scales=[0] divided by zero."""
    space = ev.Eigenspace(2).fit(rng.random((10, 6, 6)))
    image = rng.random((40, 40))
    with pytest.raises(ValueError, match="threshold"):
        ev.detect(image, space, threshold=float("nan"))
    with pytest.raises(ValueError, match="max_detections"):
        ev.detect(image, space, max_detections=0)
    with pytest.raises(ValueError, match="scales"):
        ev.detect(image, space, scales=[0])
    assert len(ev.detect(image, space, max_detections=3)) == 3


@pytest.mark.parametrize(
    "fit",
    [
        lambda: ev.Eigenspace(3).fit(np.ones((20, 30))),  # Gram solver: 0 / 0
        lambda: ev.Eigenspace(3).fit(np.ones((1000, 600))),  # ARPACK: "starting vector is zero"
        lambda: ev.FisherSpace().fit(np.ones((20, 30)), np.repeat([0, 1], 10)),
        lambda: ev.ProbabilisticPCA(2).fit(np.ones((20, 30))),
        lambda: ev.Recognizer(3).fit(np.ones((6, 4, 4)), np.repeat([0, 1, 2], 2)),
    ],
)
def test_zero_variance_data_is_our_error(fit):
    """Regression: identical samples escaped as scipy's 'array must not contain infs or NaNs'
    or ARPACK error -9 instead of saying what is wrong."""
    with pytest.raises(ev.EigenvisionError, match="zero variance"):
        fit()


def test_size_parameters_are_bounded(rng):
    """Regression: size parameters were unbounded (a jitter of 10**6 padded every image by it)."""
    faces = rng.random((4, 6, 5)).astype(np.float32)
    with pytest.raises(ValueError, match="jitter"):
        ev.Recognizer(2, jitter=10**6).fit(faces, np.array([0, 0, 1, 1]))
    eyes = {"left_eye": [[1, 3]] * 4, "right_eye": [[4, 3]] * 4}
    marked = ev.ImageSet(faces, np.array([0, 0, 1, 1]), landmarks=eyes)
    with pytest.raises(ValueError, match="iod"):
        ev.FeatureDetector(iod=10**6).fit(marked)
    with pytest.raises(ValueError, match="iod"):
        ev.face_windows(marked, iod=10**5)
    with pytest.raises(ValueError, match="shape"):
        ev.transform.resize(faces[0], (10**6, 10**6))


def test_unknown_feature_names_are_named(rng):
    """Regression: an unknown feature escaped as "tuple.index(x): x not in tuple"."""
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
    for call in (
        lambda: detector.search_region("left_ear", (0, 0, 40, 40)),
        lambda: detector.feature_map(faces[0], "left_ear"),
        lambda: detector.feature_minimum(faces[0], "left_ear"),
    ):
        with pytest.raises(ValueError, match="knows .* not 'left_ear'"):
            call()


def test_nan_boxes_and_empty_input_are_named(rng):
    """Regression: a NaN face box and empty input escaped as foreign errors."""
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
    with pytest.raises(ValueError, match="box must be finite"):
        detector.locate(faces[0], box=(0, 0, float("nan"), 40))
    with pytest.raises(ValueError, match="gallery is empty"):
        ev.NearestNeighbor().fit(np.empty((0, 3)))
    with pytest.raises(ValueError, match="at least 2 images"):
        ev.Recognizer(2).fit(np.empty((0, 4, 4)), np.array([]))
    with pytest.raises(ValueError, match="n, d >= 2"):
        ev.select_rank(np.empty((0, 5)))


# ---------------------------------------------------------------- hardening round 3 (issue 44)
def test_nearest_neighbours_of_huge_and_tiny_codes_are_exact(rng):
    """Regression: squares of 1e200 overflowed, so distances came back [[0, 0], [inf, inf]]."""
    from scipy.spatial.distance import cdist

    gallery, probes = rng.random((40, 5)), rng.random((6, 5))
    for scale in (1e200, 1e-200, 2.0**300):
        distances, rows = ev.NearestNeighbor().fit(gallery * scale).kneighbors(probes * scale, 3)
        reference = cdist(probes, gallery)  # the same search at magnitude 1, scaled back
        np.testing.assert_array_equal(rows, np.argsort(reference, axis=1, kind="stable")[:, :3])
        np.testing.assert_allclose(distances, np.sort(reference, axis=1)[:, :3] * scale, rtol=1e-12)
    exact, _ = ev.NearestNeighbor().fit(gallery).kneighbors(probes, 3)
    scaled, _ = ev.NearestNeighbor().fit(gallery * 2.0**300).kneighbors(probes * 2.0**300, 3)
    np.testing.assert_array_equal(scaled, exact * 2.0**300)  # a power of two: bit for bit


def test_data_whose_variances_overflow_is_refused_with_the_fix():
    """Regression: Eigenspace(5).fit(digits * 1e200) ended in scipy's 'must not contain infs'."""
    digits = ev.datasets.load_digits().images.astype(np.float64)
    for factor in (1e200, 1e-200):
        with pytest.raises(ValueError, match="cannot be held in float64; rescale the data"):
            ev.Eigenspace(5).fit(digits * factor)
    ev.Eigenspace(5).fit(digits * 1e100)  # large, but its variances fit


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


def test_the_recognizer_is_a_classifier_to_scikit_learn(att):
    """Regression: cross_val_score(Recognizer(), ...) gave [0, 0, 0, 0, 0]: not tagged a
    classifier, it got unshuffled folds of person-sorted data (each fold a set of new people)."""
    from sklearn.base import is_classifier
    from sklearn.model_selection import cross_val_score

    assert is_classifier(ev.Recognizer())
    assert cross_val_score(ev.Recognizer(), att.images, att.labels, cv=5).min() > 0.9


def test_float32_data_keeps_its_rank_and_its_dtype(rng):
    """Regression: float32 data of exact rank 20 kept 112 components (float64's round-off
    tolerance) with whitened codes of round-off; KernelPCA and ProbabilisticPCA returned float64
    codes for float32 data; NearestNeighbor could not be cloned."""
    from sklearn.base import clone

    X32 = (rng.normal(size=(2000, 20)) @ rng.normal(size=(20, 200))).astype(np.float32)
    space = ev.Eigenspace(whiten=True).fit(X32)
    assert space.n_components_ == 20
    assert np.abs(space.transform(X32)).max() < 10
    small = X32[:60]
    for model in (ev.KernelPCA(3), ev.KernelPCA(3, n_landmarks=20), ev.ProbabilisticPCA(3)):
        assert model.fit(small).transform(small).dtype == np.float32, model
    assert clone(ev.NearestNeighbor(chunk_size=7)).get_params()["chunk_size"] == 7


def test_loading_refuses_what_would_read_nothing_or_elsewhere(tmp_path, rng):
    """Regression: load_photos(max_side=0) gave 1x1 photos; pattern '../*' read the parent."""
    from PIL import Image

    (tmp_path / "people" / "alice").mkdir(parents=True)
    Image.new("RGB", (40, 30)).save(tmp_path / "people" / "alice" / "1.png")
    Image.new("RGB", (40, 30)).save(tmp_path / "outside.png")
    with pytest.raises(ValueError, match=r"max_side must lie in \[16, 16384\]"):
        ev.load_photos(tmp_path / "people", max_side=0)
    for pattern in ("../*", "alice/../../*", "..\\*"):
        with pytest.raises(ValueError, match="pattern matches file names inside each folder"):
            ev.load_photos(tmp_path / "people", pattern=pattern)
    photos, labels, _ = ev.load_photos(tmp_path / "people", pattern="*.png", max_side=16)
    assert labels.tolist() == ["alice"] and max(photos[0].shape[:2]) == 16


def test_batches_keep_to_a_pixel_budget(tmp_path, rng):
    """Regression: twelve 9000 x 9000 PNGs (0.9 MB on disk) made one 3.6 GiB batch. A batch now
    holds at most max_batch_pixels pixels (here six 300 x 300 images, two per batch)."""
    from PIL import Image

    for i in range(6):
        pixels = (rng.random((300, 300)) * 255).astype(np.uint8)
        Image.fromarray(pixels).save(tmp_path / f"{i}.png")
    batches = list(ev.iter_image_batches(tmp_path, batch_size=4, max_batch_pixels=200_000))
    assert [len(b) for b in batches] == [2, 2, 2]
    assert all(b.size <= 200_000 for b in batches)
    whole = np.concatenate(list(ev.iter_image_batches(tmp_path, batch_size=4)))
    np.testing.assert_array_equal(np.concatenate(batches), whole)


def test_a_model_header_declaring_absurd_sizes_is_a_model_file_error(tmp_path, rng):
    """Regression: a header declaring 10^30 rows raised OverflowError from numpy."""
    import io
    import json
    import zipfile

    good = ev.save(ev.Eigenspace(2).fit(rng.random((10, 6))), tmp_path / "good.npz")
    with zipfile.ZipFile(good) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    header = json.loads(np.load(io.BytesIO(members["__header__.npy"])).tobytes())
    header["arrays"]["mean_"] = ["<f8", [10**30]]
    buffer = io.BytesIO()
    np.save(buffer, np.frombuffer(json.dumps(header).encode(), np.uint8))
    members["__header__.npy"] = buffer.getvalue()
    with zipfile.ZipFile(tmp_path / "bad.npz", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(ev.ModelFileError, match="declares shape"):
        ev.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("solver", ["auto", "svd"])
def test_dask_backend_checks_its_input_as_the_numpy_backend_does(rng, solver):
    """Regression (issue 44): Eigenspace(backend="dask") took complex input silently, gave
    Dask's NotImplementedError for object arrays, ZeroDivisionError for (n, 0), TypeError for
    lists, a '0-d Dask array' error for sparse input, and LinAlgError for huge values."""
    import dask.array as da
    import scipy.sparse as sp

    X = rng.random((40, 12))

    def fit(data):
        return ev.Eigenspace(4, backend="dask", solver=solver).fit(data)

    reference = ev.Eigenspace(4).fit(X)
    np.testing.assert_allclose(
        np.abs(fit(X.tolist()).components_), np.abs(reference.components_), atol=1e-10
    )
    for data, error, message in [
        (X + 1j, ValueError, "Complex data not supported"),  # scikit-learn's own message
        (np.empty((40, 0)), ValueError, "0 feature"),
        (sp.csr_matrix(X), TypeError, "dense data is required"),
        (X * 1e200, ValueError, "X reaches .*e.199.*rescale"),
        (da.from_array(X + 1j, chunks=10), TypeError, "complex"),
        (da.from_array(X.astype(object), chunks=10), TypeError, "dtype object.*astype"),
        (da.from_array(np.empty((40, 0))), ValueError, "0 features"),
        (da.from_array(X, chunks=10).map_blocks(sp.csr_matrix), TypeError, "sparse chunks"),
        (da.from_array(X * 1e200, chunks=10), ValueError, "X reaches .*e.199.*rescale"),
    ]:
        with pytest.raises(error, match=message):
            fit(data)
