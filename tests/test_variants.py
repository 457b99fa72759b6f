"""Fisherfaces, probabilistic PCA by EM and kernel PCA against scikit-learn."""

import numpy as np
import pytest
from scipy.linalg import subspace_angles
from sklearn.decomposition import PCA
from sklearn.decomposition import KernelPCA as SkKernelPCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

import eigenvision as ev


@pytest.fixture
def data(rng):
    X = rng.normal(size=(150, 6)) @ rng.normal(size=(6, 30)) + 0.3 * rng.normal(size=(150, 30))
    return X


def _match_up_to_sign(A, B, atol):
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, atol=atol)


@pytest.mark.parametrize(
    "kernel, params",
    [
        ("rbf", {"gamma": 0.01}),
        ("poly", {"gamma": 0.02, "degree": 2, "coef0": 1.0}),
        ("linear", {}),
    ],
)
def test_kernel_pca_matches_sklearn(kernel, params, data):
    ours = ev.KernelPCA(5, kernel=kernel, **params).fit(data[:100])
    theirs = SkKernelPCA(5, kernel=kernel, **params).fit(data[:100])
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-9)
    _match_up_to_sign(ours.transform(data[100:]), theirs.transform(data[100:]), atol=1e-9)


def test_linear_kernel_reproduces_eigenspace(data):
    linear = ev.KernelPCA(4, kernel="linear").fit(data).transform(data)
    _match_up_to_sign(linear, ev.Eigenspace(4).fit(data).transform(data), atol=1e-9)


def test_nystroem(data):
    exact = ev.KernelPCA(3, gamma=0.01).fit(data)
    full = ev.KernelPCA(3, gamma=0.01, n_landmarks=150).fit(data)  # all points: exact
    _match_up_to_sign(full.transform(data), exact.transform(data), atol=1e-8)
    np.testing.assert_allclose(full.eigenvalues_, exact.eigenvalues_, rtol=1e-8)
    approx = ev.KernelPCA(3, gamma=0.01, n_landmarks=60, seed=2).fit(data)
    Z, E = approx.transform(data), exact.transform(data)
    assert np.max(subspace_angles(Z, E)) < 0.35  # same leading kernel directions


def test_fisher_matches_sklearn_lda(rng, data):
    y = np.repeat(np.arange(5), 30)
    X = data + y[:, None] * 0.4
    ours = ev.FisherSpace().fit(X, y)
    assert ours.n_components_ == 4
    reduced = ev.Eigenspace(min(150 - 5, 30)).fit(X).transform(X)
    lda = LinearDiscriminantAnalysis(solver="eigen").fit(reduced, y)
    A, B = ours.transform(X), lda.transform(reduced)
    A, B = A - A.mean(0), B - B.mean(0)
    _match_up_to_sign(A / np.linalg.norm(A, axis=0), B / np.linalg.norm(B, axis=0), atol=1e-8)
    # unit-length directions, S_w-orthogonal: the projected within-class scatter is diagonal
    np.testing.assert_allclose(np.linalg.norm(ours.components_, axis=1), 1.0, rtol=1e-12)
    Z = ours.transform(X)
    within = Z - np.stack([Z[y == c].mean(0) for c in range(5)])[y]
    scatter = within.T @ within
    np.testing.assert_allclose(scatter - np.diag(np.diag(scatter)), 0, atol=1e-8)
    with pytest.raises(ValueError, match="2 classes"):
        ev.FisherSpace().fit(X, np.zeros(150))


def test_generalized_eigh_matches_scipy(rng):
    from scipy.linalg import eigh

    from eigenvision._linalg import generalized_eigh as _generalized_eigh

    a = rng.normal(size=(40, 12)) @ rng.normal(size=(12, 40))
    a = a @ a.T  # rank 12: many zero eigenvalues, as S_b has
    root = rng.normal(size=(40, 40)) * np.logspace(0, -4, 40)  # condition number ~1e8
    b = root @ root.T + 1e-6 * np.eye(40)
    values, vectors = _generalized_eigh(a, b)
    expected_values, expected_vectors = eigh(a, b)
    np.testing.assert_allclose(values, expected_values, rtol=1e-7, atol=1e-9 * values[-1])
    top = slice(-12, None)  # the distinct eigenvalues; the null space has no unique basis
    _match_up_to_sign(
        vectors[:, top], expected_vectors[:, top], atol=1e-6 * np.abs(expected_vectors).max()
    )
    # as accurate as LAPACK's sygv: the residual of a v = w b v within twice scipy's. With b's
    # condition number ~1e8 both are ~5e-4 on entries of ~1e5: the fixed 1e-8 max|a| this test
    # had held by round-off luck (numpy 2.4's OpenBLAS broke it; scipy's own residual exceeds it)
    expected_residual = a @ expected_vectors - b @ expected_vectors * expected_values
    assert np.abs(a @ vectors - b @ vectors * values).max() <= 2 * np.abs(expected_residual).max()


def test_fisher_on_att_faces_beats_chance_by_far(att):
    train, test = att.split(5, order="name")
    space = ev.FisherSpace().fit(train.images, train.labels)
    gallery, probes = space.transform(train.images), space.transform(test.images)
    nearest = np.argmin(((probes[:, None] - gallery[None]) ** 2).sum(-1), axis=1)
    accuracy = np.mean(train.labels[nearest] == test.labels)
    assert accuracy >= 0.8  # OpenCV's FisherFaceRecognizer: 81.5% on this protocol


def test_ppca_em_converges_to_pca(data):
    model = ev.ProbabilisticPCA(4, init="random", seed=1).fit(data)
    pca = PCA(4).fit(data)
    assert np.max(subspace_angles(model.components_.T, pca.components_.T)) < 1e-6
    n = len(data)
    ml_eigen = pca.explained_variance_ * (n - 1) / n  # EM is maximum likelihood: divisor n
    ml_noise = np.sum(PCA().fit(data).explained_variance_[4:]) * (n - 1) / n / (30 - 4)
    np.testing.assert_allclose(model.noise_variance_, ml_noise, rtol=1e-5)
    np.testing.assert_allclose(model.eigenvalues_, ml_eigen, rtol=1e-5)
    assert np.all(np.diff(model.log_likelihood_) > -1e-8)  # EM never decreases it
    # the log-likelihood equals the Gaussian with covariance W W^T + sigma^2 I
    from scipy.stats import multivariate_normal

    cov = model.W_ @ model.W_.T + model.noise_variance_ * np.eye(30)
    np.testing.assert_allclose(
        model.score_samples(data[:5]), multivariate_normal(model.mean_, cov).logpdf(data[:5])
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


def test_ppca_bad_input(data):
    with pytest.raises(ValueError, match="n_components"):
        ev.ProbabilisticPCA(30).fit(data)
    X = data.copy()
    X[:, 2] = np.nan
    with pytest.raises(ValueError, match="missing in every sample"):
        ev.ProbabilisticPCA(2).fit(X)


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
