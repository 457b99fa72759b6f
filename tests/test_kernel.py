"""KernelPCA against scikit-learn's, and its Nyström approximation."""

import numpy as np
import pytest
from scipy.linalg import subspace_angles
from sklearn.decomposition import KernelPCA as SkKernelPCA

import eigenvision as ev
from tests.conftest import match_up_to_sign


@pytest.mark.parametrize(
    "kernel, params",
    [
        ("rbf", {"gamma": 0.01}),
        ("poly", {"gamma": 0.02, "degree": 2, "coef0": 1.0}),
        ("linear", {}),
    ],
)
def test_kernel_pca_matches_sklearn(kernel, params, low_rank_codes):
    ours = ev.KernelPCA(5, kernel=kernel, **params).fit(low_rank_codes[:100])
    theirs = SkKernelPCA(5, kernel=kernel, **params).fit(low_rank_codes[:100])
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-9)
    match_up_to_sign(
        ours.transform(low_rank_codes[100:]), theirs.transform(low_rank_codes[100:]), atol=1e-9
    )


def test_linear_kernel_reproduces_eigenspace(low_rank_codes):
    linear = ev.KernelPCA(4, kernel="linear").fit(low_rank_codes).transform(low_rank_codes)
    match_up_to_sign(
        linear, ev.Eigenspace(4).fit(low_rank_codes).transform(low_rank_codes), atol=1e-9
    )


def test_nystroem(low_rank_codes):
    exact = ev.KernelPCA(3, gamma=0.01).fit(low_rank_codes)
    full = ev.KernelPCA(3, gamma=0.01, n_landmarks=150).fit(low_rank_codes)  # all points: exact
    match_up_to_sign(full.transform(low_rank_codes), exact.transform(low_rank_codes), atol=1e-8)
    np.testing.assert_allclose(full.eigenvalues_, exact.eigenvalues_, rtol=1e-8)
    approx = ev.KernelPCA(3, gamma=0.01, n_landmarks=60, seed=2).fit(low_rank_codes)
    Z, E = approx.transform(low_rank_codes), exact.transform(low_rank_codes)
    assert np.max(subspace_angles(Z, E)) < 0.35  # same leading kernel directions


def test_kernel_pca_says_when_it_keeps_fewer_components(rng):
    """Regression: KernelPCA dropped zero-variance components without a word."""
    X = np.repeat(rng.random((3, 4)), 4, axis=0)  # 3 distinct points: rank 2 after centring
    with pytest.warns(UserWarning, match="keeps 2 of the 5"):
        model = ev.KernelPCA(5, kernel="linear").fit(X)
    assert model.n_components_ == 2
