"""Probabilistic PCA by EM against PCA's maximum-likelihood solution."""

import numpy as np
import pytest
from scipy.linalg import subspace_angles
from sklearn.decomposition import PCA

import eigenvision as ev


def test_ppca_em_converges_to_pca(low_rank_codes):
    model = ev.ProbabilisticPCA(4, init="random", seed=1).fit(low_rank_codes)
    pca = PCA(4).fit(low_rank_codes)
    assert np.max(subspace_angles(model.components_.T, pca.components_.T)) < 1e-6
    n = len(low_rank_codes)
    ml_eigen = pca.explained_variance_ * (n - 1) / n  # EM is maximum likelihood: divisor n
    ml_noise = np.sum(PCA().fit(low_rank_codes).explained_variance_[4:]) * (n - 1) / n / (30 - 4)
    np.testing.assert_allclose(model.noise_variance_, ml_noise, rtol=1e-5)
    np.testing.assert_allclose(model.eigenvalues_, ml_eigen, rtol=1e-5)
    assert np.all(np.diff(model.log_likelihood_) > -1e-8)  # EM never decreases it
    # the log-likelihood equals the Gaussian with covariance W W^T + sigma^2 I
    from scipy.stats import multivariate_normal

    cov = model.W_ @ model.W_.T + model.noise_variance_ * np.eye(30)
    np.testing.assert_allclose(
        model.score_samples(low_rank_codes[:5]),
        multivariate_normal(model.mean_, cov).logpdf(low_rank_codes[:5]),
    )


def test_ppca_with_missing_pixels(rng):
    latent = rng.normal(size=(300, 3)) @ rng.normal(size=(3, 25)) * 2
    X = latent + 0.1 * rng.normal(size=latent.shape) + 1.0
    holes = X.copy()
    holes[rng.random(X.shape) < 0.25] = np.nan
    from sklearn.exceptions import ConvergenceWarning

    # EM with a quarter of the pixels missing and little noise converges slowly: it warns.
    with pytest.warns(ConvergenceWarning, match="missing pixels"):
        model = ev.ProbabilisticPCA(3, max_iter=1500).fit(holes)
    pca = PCA(3).fit(X)
    assert np.max(subspace_angles(model.components_.T, pca.components_.T)) < 0.05
    missing = np.isnan(holes)
    error = model.impute(holes)[missing] - X[missing]
    assert np.sqrt(np.mean(error**2)) < 0.2  # near the noise level 0.1, far below the spread
    assert np.all(np.diff(model.log_likelihood_) > -1e-6)
    # the likelihood of a sample with missing pixels is the marginal of the observed ones
    from scipy.stats import multivariate_normal

    obs = ~missing[0]
    cov = model.W_ @ model.W_.T + model.noise_variance_ * np.eye(25)
    expected = multivariate_normal(model.mean_[obs], cov[np.ix_(obs, obs)]).logpdf(holes[0, obs])
    np.testing.assert_allclose(model.score_samples(holes[:1])[0], expected)


def test_ppca_bad_input(low_rank_codes):
    with pytest.raises(ValueError, match="n_components"):
        ev.ProbabilisticPCA(30).fit(low_rank_codes)
    X = low_rank_codes.copy()
    X[:, 2] = np.nan
    with pytest.raises(ValueError, match="missing in every sample"):
        ev.ProbabilisticPCA(2).fit(X)
