"""scikit-learn's estimator checks."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import eigenvision as ev


@parametrize_with_checks(
    [
        ev.Eigenspace(),
        ev.Eigenspace(2, solver="gram"),
        ev.Eigenspace(2, solver="covariance", whiten=True),
        ev.KernelPCA(2),
        ev.FisherSpace(),
        ev.BayesianSpace(1),
        ev.ProbabilisticPCA(1),
        ev.KernelPCA(2, n_landmarks=10),
        ev.PixelStandardizer(),
        ev.NearestNeighbor(),
        ev.PLDA(2),
        ev.JointBayesian(),
        ev.PLDAFusion(),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_scikit_learn_protocols():
    """Regression: NotFittedError was not scikit-learn's; PixelStandardizer had no
    n_features_in_ or feature names; Recognizer had no score for cross_val_score;
    singular_values_ held every value instead of the kept (k,)."""
    import numpy as np
    from sklearn.decomposition import PCA
    from sklearn.exceptions import NotFittedError
    from sklearn.model_selection import cross_val_score

    import eigenvision as ev

    with pytest.raises(NotFittedError):
        ev.Eigenspace(2).transform(np.zeros((1, 3)))
    rng = np.random.default_rng(0)
    X = rng.random((20, 6))
    scaler = ev.PixelStandardizer().fit(X)
    assert scaler.n_features_in_ == 6
    assert scaler.get_feature_names_out().tolist() == [f"x{i}" for i in range(6)]
    space = ev.Eigenspace(3).fit(X)
    ref = PCA(3).fit(X)
    np.testing.assert_allclose(space.singular_values_, ref.singular_values_, rtol=1e-10)
    np.testing.assert_allclose(space.explained_variance_, ref.explained_variance_, rtol=1e-10)
    centres = rng.random((3, 5, 4))
    faces = np.concatenate([c + 0.02 * rng.normal(size=(8, 5, 4)) for c in centres])
    labels = np.repeat(np.arange(3), 8)
    rates = cross_val_score(ev.Recognizer(3), faces.astype(np.float32), labels, cv=4)
    assert rates.tolist() == [1.0] * 4


#: The checks every estimator must pass, whatever data it takes: scikit-learn's API contract.
_API_CHECKS = {
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_get_params_invariance",
    "check_mixin_order",
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_set_params",
    "check_do_not_raise_errors_in_init_or_set_params",
}


@pytest.mark.parametrize(
    "estimator",
    [
        ev.IdentityModel(),
        ev.FisherVectors(),
        ev.Recognizer(2),
        ev.FaceFinder(),
        ev.EyeRegressor(),
        ev.FeatureDetector(),
    ],
    ids=lambda estimator: type(estimator).__name__,
)
def test_image_estimators_start_scikit_learns_checks(estimator):
    """Regression (hardening round 4): ``check_estimator`` refused to start on PLDAFusion
    (no default for ``widths``), IdentityModel and FisherVectors (``transform`` without
    ``TransformerMixin``). The estimators of face images and photos cannot take the checks'
    random (n, d) rows, but every check of the API contract passes."""
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(estimator, on_fail=None)
    passed = {result["check_name"] for result in results if result["status"] == "passed"}
    assert _API_CHECKS <= passed, sorted(_API_CHECKS - passed)
    if hasattr(estimator, "transform"):
        assert hasattr(estimator, "fit_transform") and hasattr(estimator, "set_output")
