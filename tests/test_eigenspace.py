"""Eigenspace against numpy/scipy/scikit-learn and the lecture's identities and tables."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from PIL import Image
from scipy.linalg import subspace_angles
from scipy.stats import multivariate_normal
from sklearn.decomposition import PCA, IncrementalPCA

import eigenvision as ev
from eigenvision import Eigenspace
from tests.synthetic import low_rank

EXACT_SOLVERS = ["svd", "gram", "covariance"]


def _numpy_pca(X, k):
    centred = X.astype(np.float64) - X.mean(axis=0, dtype=np.float64)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    return s, vt[:k]


@pytest.mark.parametrize("solver", EXACT_SOLVERS)
@pytest.mark.parametrize("shape", [(40, 300), (500, 30), (64, 64)])
def test_subspace_equals_numpy_svd(solver, shape, rng):
    X = low_rank(rng, *shape, rank=12)
    space = Eigenspace(10, solver=solver).fit(X)
    s, vt = _numpy_pca(X, 10)
    assert np.max(subspace_angles(space.components_.T, vt.T)) < 1e-6
    np.testing.assert_allclose(space.singular_values_[:10], s[:10], rtol=1e-10)
    np.testing.assert_allclose(space.components_ @ space.components_.T, np.eye(10), atol=1e-10)
    np.testing.assert_allclose(space.mean_, X.mean(axis=0), atol=1e-12)


@pytest.mark.parametrize("solver", EXACT_SOLVERS + ["randomized"])
def test_float32_stays_float32(solver, rng):
    X = low_rank(rng, 60, 200, rank=8, dtype=np.float32)
    space = Eigenspace(8, solver=solver).fit(X)
    assert space.components_.dtype == np.float32 and space.mean_.dtype == np.float32
    assert space.transform(X).dtype == np.float32
    assert space.inverse_transform(space.transform(X)).dtype == np.float32
    s, vt = _numpy_pca(X, 8)
    # documented float32 accuracy: principal angles below 1e-3 rad on well-separated spectra
    assert np.max(subspace_angles(space.components_.T.astype(np.float64), vt.T)) < 1e-3


def test_agrees_with_sklearn_pca(rng):
    X = low_rank(rng, 200, 40, rank=6, noise=0.3)
    ours = Eigenspace(6).fit(X)
    theirs = PCA(6, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.components_, theirs.components_, atol=1e-10)  # same sign rule
    np.testing.assert_allclose(ours.eigenvalues_[:6], theirs.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, theirs.explained_variance_ratio_, rtol=1e-10
    )
    np.testing.assert_allclose(ours.noise_variance_, theirs.noise_variance_, rtol=1e-10)
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), atol=1e-10)
    np.testing.assert_allclose(ours.score_samples(X), theirs.score_samples(X), rtol=1e-10)
    white = Eigenspace(6, whiten=True).fit(X)
    np.testing.assert_allclose(
        white.transform(X), PCA(6, whiten=True).fit(X).transform(X), atol=1e-9
    )
    np.testing.assert_allclose(white.inverse_transform(white.transform(X)), ours.reconstruct(X))


@pytest.mark.parametrize("whiten", [False, True])
def test_leading_components_are_the_smaller_fit(whiten, rng):
    """leading(k) of a 12-component fit against scikit-learn's 4-component PCA of the same data
    (components, variances, noise, codes, likelihood); the larger fit is left as it was."""
    X = low_rank(rng, 150, 30, rank=8, noise=0.3)
    big = Eigenspace(12, whiten=whiten).fit(X)
    before = big.components_.copy(), big.noise_variance_
    small = big.leading(4)
    theirs = PCA(4, svd_solver="full", whiten=whiten).fit(X)
    assert small.n_components_ == small.n_components == 4 and small.image_shape_ is None
    np.testing.assert_allclose(small.components_, theirs.components_, atol=1e-10)
    np.testing.assert_allclose(small.explained_variance_, theirs.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(
        small.explained_variance_ratio_, theirs.explained_variance_ratio_, rtol=1e-10
    )
    np.testing.assert_allclose(small.noise_variance_, theirs.noise_variance_, rtol=1e-10)
    np.testing.assert_allclose(small.transform(X), theirs.transform(X), atol=1e-9)
    # the probabilistic PCA density (scipy; scikit-learn's score_samples is off with whiten=True)
    V = theirs.components_
    covariance = V.T * theirs.explained_variance_ @ V + theirs.noise_variance_ * (
        np.eye(30) - V.T @ V
    )
    density = multivariate_normal(theirs.mean_, covariance).logpdf(X)
    np.testing.assert_allclose(small.score_samples(X), density, rtol=1e-10)
    np.testing.assert_array_equal(big.components_, before[0])
    assert big.n_components_ == 12 and big.noise_variance_ == before[1]
    streamed = Eigenspace(6).partial_fit(X[:100])
    cut = streamed.leading(3).partial_fit(X[100:])  # goes on with its own copy of the stream
    whole = Eigenspace(6).partial_fit(X[:100]).partial_fit(X[100:])
    np.testing.assert_allclose(
        np.abs(cut.components_ @ whole.components_[:3].T), np.eye(3), atol=1e-8
    )
    np.testing.assert_allclose(
        streamed.partial_fit(X[100:]).components_, whole.components_, atol=1e-10
    )  # the original's stream is untouched
    images = Eigenspace(5).fit(X.reshape(150, 5, 6)).leading(2)
    assert images.image_shape_ == (5, 6) and images.eigenimages_.shape == (2, 5, 6)
    for bad in (0, 13, 2.0, True):
        with pytest.raises(ValueError, match=r"k must be an int in \[1, 12\]"):
            big.leading(bad)


def test_randomized_is_close(rng):
    X = low_rank(rng, 300, 500, rank=10, noise=0.01)
    space = Eigenspace(10, solver="randomized", seed=3).fit(X)
    _, vt = _numpy_pca(X, 10)
    assert np.max(subspace_angles(space.components_.T, vt.T)) < 1e-4
    again = Eigenspace(10, solver="randomized", seed=3).fit(X)
    np.testing.assert_array_equal(space.components_, again.components_)


def test_lecture_identities(rng):
    X = low_rank(rng, 30, 50, rank=20, noise=0.2)
    full = Eigenspace().fit(X)
    for r in (1, 5, 15):
        space = Eigenspace(r).fit(X)
        residual = np.sum((X - space.reconstruct(X)) ** 2)
        # ||X - X_hat||_F^2 = sum_{j > r} d_j^2
        np.testing.assert_allclose(residual, np.sum(full.singular_values_[r:] ** 2), rtol=1e-9)
        np.testing.assert_allclose(space.dffs(X).sum(), residual, rtol=1e-9)
        Z, X_hat = space.transform(X), space.reconstruct(X)
        dist_z = np.linalg.norm(Z[:, None] - Z[None], axis=-1)
        dist_x = np.linalg.norm(X_hat[:, None] - X_hat[None], axis=-1)
        np.testing.assert_allclose(dist_z, dist_x, atol=1e-9)
    # all components: the training data comes back exactly
    np.testing.assert_allclose(full.reconstruct(X), X, atol=1e-10)
    np.testing.assert_allclose(full.dffs(X), 0, atol=1e-18)


def test_dffs_difs_definitions(rng):
    X = low_rank(rng, 80, 20, rank=5, noise=0.5)
    space = Eigenspace(5).fit(X)
    probe = rng.normal(size=(7, 20))
    centred = probe - X.mean(axis=0)
    Z = centred @ space.components_.T
    np.testing.assert_allclose(space.dffs(probe), (centred**2).sum(1) - (Z**2).sum(1), rtol=1e-9)
    np.testing.assert_allclose(space.difs(probe), (Z**2 / space.eigenvalues_[:5]).sum(1))
    on_space = space.inverse_transform(rng.normal(size=(4, 5)))
    np.testing.assert_allclose(space.dffs(on_space), 0, atol=1e-20)


def test_n_components_fraction_and_images(rng):
    images = rng.random((30, 6, 5))
    space = Eigenspace(0.9).fit(images)
    ratio = np.cumsum(space.eigenvalues_) / space.total_variance_
    k = space.n_components_
    assert ratio[k - 1] >= 0.9 > ratio[k - 2]
    assert space.image_shape_ == (6, 5) and space.eigenimages_.shape == (k, 6, 5)
    assert space.reconstruct(images).shape == images.shape
    with pytest.raises(ValueError, match=r"image shape \(5, 6\) does not match"):
        space.transform(rng.random((2, 5, 6)))


@pytest.mark.parametrize(
    "X, n_components, match",
    [
        (np.array([[1.0, np.nan], [2.0, 3.0]]), 1, "NaN"),
        (np.array([[1.0, np.inf], [2.0, 3.0]]), 1, "infinity"),
        (np.empty((0, 3)), 1, "0 sample"),
        (np.ones((1, 3)), 1, "minimum of 2"),
        (np.ones((5, 3)), 1, "zero variance"),
        (np.arange(15.0).reshape(5, 3), 4, "out of range"),
        (np.arange(15.0).reshape(5, 3), 0, "n_components must be an int"),
        (np.arange(15.0).reshape(5, 3), 1.5, "n_components"),
    ],
)
def test_bad_input(X, n_components, match):
    with pytest.raises((ValueError, ev.EigenvisionError), match=match):
        Eigenspace(n_components).fit(X)


@pytest.mark.parametrize(
    "value, match", [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")]
)
@pytest.mark.parametrize("model", ["eigenspace", "fisher", "recognizer"])
def test_non_finite_probes_are_refused(rng, model, value, match):
    # Finiteness is checked on the codes: every non-finite pixel must still be caught,
    # also where a component is zero (NaN * 0 is NaN) and in a float32 stack.
    images = rng.random((12, 4, 5)).astype(np.float32)
    labels = np.repeat([0, 1, 2], 4)
    fitted = {
        "eigenspace": lambda: Eigenspace(3).fit(images),
        "fisher": lambda: ev.FisherSpace().fit(images, labels),
        "recognizer": lambda: ev.Recognizer(3).fit(images, labels),
    }[model]()
    if model == "eigenspace":
        fitted.components_[:, 0] = 0.0
    for index in [(0, 0, 0), (11, 3, 4)]:
        probes = images.copy()
        probes[index] = value
        project = fitted.predict if model == "recognizer" else fitted.transform
        with pytest.raises(ValueError, match=match):
            project(probes)


def test_transform_errors(rng):
    with pytest.raises(ev.NotFittedError, match="fit"):
        Eigenspace(2).transform(np.ones((2, 3)))
    space = Eigenspace(2).fit(rng.random((10, 4)))
    with pytest.raises(ValueError, match="4 features"):
        space.transform(rng.random((3, 5)))
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        space.inverse_transform(np.ones((3, 3)))


LSA_X, LSA_TERMS, _ = ev.datasets.load_lsa_example()


def test_lsa_example_of_the_lecture():
    space = Eigenspace(2, center=False).fit(LSA_X)
    np.testing.assert_allclose(
        Eigenspace(center=False).fit(LSA_X).singular_values_.round(2),
        [3.34, 2.54, 2.35, 1.64, 1.50, 1.31, 0.85, 0.56, 0.36],
    )
    X_hat = space.reconstruct(LSA_X)
    corr = np.corrcoef(X_hat)
    human, user, minors = (LSA_TERMS.index(t) for t in ("human", "user", "minors"))
    assert round(corr[human, user], 2) == 0.94
    assert round(corr[human, minors], 2) == -0.83
    raw = np.corrcoef(LSA_X)
    assert round(raw[human, user], 2) == -0.38 and round(raw[human, minors], 2) == -0.29
    # the printed r = 2 reconstruction, e.g. the row "human" and the cell (trees, m4)
    np.testing.assert_allclose(
        X_hat[human].round(2), [0.16, 0.40, 0.38, 0.47, 0.18, -0.05, -0.12, -0.16, -0.09]
    )
    assert X_hat[LSA_TERMS.index("trees"), 8].round(2) == 0.66


# ------------------------------------------------------------ property tests
finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(3, 12), st.integers(2, 9)), elements=finite))
def test_properties_on_arbitrary_data(X):
    if np.ptp(X, axis=0).max() < 1e-3:
        return  # (near-)constant data is rejected, tested above
    space = Eigenspace().fit(X)
    k = space.n_components_
    rank = np.linalg.matrix_rank(X - X.mean(axis=0), tol=1e-8 * np.abs(X).max() * max(X.shape))
    gram = space.components_ @ space.components_.T
    np.testing.assert_allclose(gram, np.eye(k), atol=1e-6)
    assert np.all(space.dffs(X) >= 0)
    if rank == min(X.shape[0] - 1, X.shape[1]):
        np.testing.assert_allclose(space.reconstruct(X), X, atol=1e-6 * (1 + np.abs(X).max()))
    assert np.all(np.diff(space.eigenvalues_) <= 1e-9 * space.eigenvalues_[0])


def test_default_keeps_only_components_with_variance():
    """Regression: with n_components=None zero-variance components were kept and divided by a
    2.2e-308 floor: whitened codes of 1e138 / inf and score_samples -4e280 on the digits."""
    X = ev.datasets.load_digits().X.astype(np.float64)  # two pixels are always blank
    space = ev.Eigenspace(whiten=True).fit(X)
    assert space.n_components_ == np.linalg.matrix_rank(X - X.mean(axis=0))  # numpy's count
    codes = space.transform(X)
    # whitened training codes have unit variance per component: nothing explodes
    np.testing.assert_allclose(codes.std(axis=0, ddof=1), 1.0, rtol=1e-6)
    assert np.isfinite(space.score_samples(X)).all()
    asked = ev.Eigenspace(64, whiten=True).fit(X)  # beyond the rank on purpose: still finite
    assert np.isfinite(asked.transform(X)).all() and np.isfinite(asked.score(X))


def test_float32_scatter_keeps_every_component_above_its_round_off(rng):
    """Regression: the round-off bound on float32 scatter spectra was ten times numpy's, so
    real components under 15% of the first singular value were cut (1,800 jittered AT&T
    faces at 28 x 23 kept 27 of 644 dimensions, and BayesianSpace(n_components=40) refused
    them). A full-rank float32 sample whose singular values fall to 3% of the first keeps all
    its components, as numpy's rank of the same data in float64 says; a truly deficient one
    (two pixels always blank) still loses exactly those."""
    singular = np.logspace(0, -1.5, 100)
    basis = np.linalg.qr(rng.normal(size=(100, 100)))[0]
    X = (rng.normal(size=(1800, 100)) * singular) @ basis.T
    X32 = X.astype(np.float32)
    space = ev.Eigenspace().fit(X32)
    assert space.solver_ == "covariance"
    assert space.n_components_ == np.linalg.matrix_rank(X - X.mean(axis=0)) == 100
    ev.BayesianSpace(n_components=40).fit(X32, np.arange(1800) % 40)  # refused before
    X32[:, :2] = 0.5
    assert ev.Eigenspace().fit(X32).n_components_ == 98


def test_default_rank_of_float32_data_is_numpys():
    """Regression (hardening round 4): ``Eigenspace()`` on float32 digits kept 55 components
    where ``np.linalg.matrix_rank`` counts 61 (the float32 scatter hid the smallest ones)."""
    from sklearn.datasets import load_digits

    X = load_digits().data
    rank = np.linalg.matrix_rank(X - X.mean(axis=0))
    for data in (X.astype(np.float32), X):
        space = ev.Eigenspace().fit(data)
        assert space.n_components_ == rank == 61
        assert space.components_.dtype == data.dtype


def test_inverse_transform_refuses_nan_codes(rng):
    """Regression (hardening round 4): NaN codes came back as NaN images without a word."""
    space = ev.Eigenspace(3).fit(rng.random((20, 6, 5)))
    with pytest.raises(ValueError, match="NaN or infinite codes"):
        space.inverse_transform(np.full((1, 3), np.nan))


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


def test_data_whose_variances_overflow_is_refused_with_the_fix():
    """Regression: Eigenspace(5).fit(digits * 1e200) ended in scipy's 'must not contain infs'."""
    digits = ev.datasets.load_digits().images.astype(np.float64)
    for factor in (1e200, 1e-200):
        with pytest.raises(ValueError, match="cannot be held in float64; rescale the data"):
            ev.Eigenspace(5).fit(digits * factor)
    ev.Eigenspace(5).fit(digits * 1e100)  # large, but its variances fit


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


def _angle(a, b):
    return float(np.max(subspace_angles(a.T.astype(np.float64), b.T.astype(np.float64))))


def _batches(X, size):
    for start in range(0, len(X), size):
        yield X[start : start + size]


def test_stream_equals_batch_on_usps(usps):
    X = usps.images.reshape(len(usps), -1).astype(np.float64)
    batch = ev.Eigenspace(30).fit(X)
    stream = ev.Eigenspace(30).fit_stream(_batches(X, 500))
    assert _angle(batch.components_, stream.components_) < 1e-6
    np.testing.assert_allclose(stream.eigenvalues_[:30], batch.eigenvalues_[:30], rtol=1e-9)
    np.testing.assert_allclose(stream.mean_, batch.mean_, atol=1e-12)
    assert stream.n_samples_ == len(X) and stream.solver_ == "stream"


def test_stream_of_60000_by_784_equals_scikit_learn():
    rng = np.random.default_rng(0)
    basis = rng.normal(size=(20, 784))
    scales = np.geomspace(30, 1, 20)[:, None]

    def chunks():
        for seed in range(12):  # 12 x 5000 = 60000 rows, generated batch by batch
            r = np.random.default_rng(seed)
            yield (
                3.0
                + (r.normal(size=(5000, 20)) @ (scales * basis))
                + 0.1 * r.normal(size=(5000, 784))
            )

    stream = ev.Eigenspace(10).fit_stream(chunks())
    X = np.concatenate(list(chunks()))
    reference = PCA(10, svd_solver="covariance_eigh").fit(X)
    assert _angle(stream.components_, reference.components_) < 1e-6
    np.testing.assert_allclose(
        stream.explained_variance_ratio_, reference.explained_variance_ratio_, rtol=1e-8
    )


def test_partial_fit_and_memmap(usps, tmp_path):
    X = usps.images[:2000].astype(np.float32)
    stored = np.lib.format.open_memmap(
        tmp_path / "usps.npy", mode="w+", dtype=np.float32, shape=X.shape
    )
    stored[:] = X
    stored.flush()
    mapped = np.load(tmp_path / "usps.npy", mmap_mode="r")
    incremental = ev.Eigenspace(15)
    for batch in _batches(mapped, 256):
        incremental.partial_fit(batch)
    batch_fit = ev.Eigenspace(15).fit(X.astype(np.float64))
    assert incremental.image_shape_ == (16, 16)
    assert _angle(incremental.components_, batch_fit.components_) < 1e-4  # float32 batches
    with pytest.raises(ValueError, match="features"):
        incremental.partial_fit(np.zeros((3, 10)))


def test_iter_image_batches_reads_lazily(tmp_path, rng):
    for person in ("a", "b"):
        (tmp_path / person).mkdir()
        for i in range(7):
            Image.fromarray((rng.random((12, 10)) * 255).astype(np.uint8)).save(
                tmp_path / person / f"{i}.png"
            )
    batches = list(ev.iter_image_batches(tmp_path, batch_size=4))
    assert [len(b) for b in batches] == [4, 4, 4, 2]
    whole = ev.load_image_set(tmp_path)
    np.testing.assert_array_equal(np.concatenate(batches), whole.images)
    stream = ev.Eigenspace(5).fit_stream(ev.iter_image_batches(tmp_path, batch_size=3))
    assert (
        _angle(
            stream.components_, ev.Eigenspace(5).fit(whole.images.astype(np.float64)).components_
        )
        < 1e-4
    )
    with pytest.raises(ValueError, match="no batches"):
        ev.Eigenspace(2).fit_stream(iter([]))


def test_incremental_svd_beyond_the_scatter_limit(att):
    """10,304 pixels exceed max_scatter_features: the incremental SVD, measured against batch."""
    X = att.images.reshape(len(att), -1).astype(np.float64)
    X = X[np.random.default_rng(0).permutation(len(X))]
    batch = ev.Eigenspace(20).fit(X)
    stream = ev.Eigenspace(20).fit_stream(_batches(X, 50))
    assert stream.solver_ == "incremental-svd" and stream.image_shape_ is None
    assert _angle(stream.components_, batch.components_) < 0.02  # documented: 0.008 rad
    np.testing.assert_allclose(stream.eigenvalues_[:20], batch.eigenvalues_[:20], rtol=0.01)
    np.testing.assert_allclose(stream.mean_, batch.mean_, atol=1e-9)
    np.testing.assert_allclose(stream.total_variance_, batch.total_variance_, rtol=1e-12)
    ipca = IncrementalPCA(20, batch_size=50).fit(X)
    assert _angle(ipca.components_, batch.components_) > 0.5  # the peer keeps only 20 directions
    with pytest.raises(ValueError, match="int n_components"):
        ev.Eigenspace(0.9).fit_stream(_batches(X, 50))


def test_incremental_svd_is_exact_within_its_rank():
    rng = np.random.default_rng(4)
    X = 2.0 + rng.normal(size=(900, 40)) @ rng.normal(size=(40, 300))  # rank 40 < 20 + 100
    space = ev.Eigenspace(20)
    space.max_scatter_features = 100
    space.fit_stream(_batches(X, 128))
    reference = ev.Eigenspace(20).fit(X)
    assert space.solver_ == "incremental-svd"
    assert _angle(space.components_, reference.components_) < 1e-8
    np.testing.assert_allclose(space.noise_variance_, reference.noise_variance_, rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shifted_moments_give_the_centred_scatter(dtype):
    """syrk fills one triangle; symmetric_scatter mirrors it and removes the mean (row blocks)."""
    from eigenvision._linalg import shifted_moments, symmetric_scatter

    X = np.random.default_rng(5).normal(3.0, 1.0, size=(700, 600)).astype(dtype)
    count, total, upper = shifted_moments(X, X[0].astype(np.float64))
    scatter = symmetric_scatter(count, total, upper)
    centred = X.astype(np.float64) - X.astype(np.float64).mean(axis=0)
    reference = centred.T @ centred
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(scatter, reference, atol=tolerance * np.abs(reference).max())
    np.testing.assert_array_equal(scatter, scatter.T)
