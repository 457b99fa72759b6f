"""Streaming fits: the same subspace as a batch fit, from batches, files, memmaps."""

import numpy as np
import pytest
from PIL import Image
from scipy.linalg import subspace_angles
from sklearn.decomposition import PCA, IncrementalPCA

import eigenvision as ev


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
