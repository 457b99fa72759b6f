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
