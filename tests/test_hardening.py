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
        with pytest.raises(TypeError, match="complex"):
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
        ev.normalize.resize(faces[0], (10**6, 10**6))


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
