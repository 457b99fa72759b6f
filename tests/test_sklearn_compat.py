"""scikit-learn's estimator checks."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import eigenvision as ev


@parametrize_with_checks(
    [
        ev.Eigenspace(),
        ev.Eigenspace(2, solver="gram"),
        ev.Eigenspace(2, solver="covariance", whiten=True),
        ev.KernelPCA(2),
        ev.FisherSpace(),
        ev.ProbabilisticPCA(1),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
