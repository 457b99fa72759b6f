"""NearestNeighbor, the cell search and the nearest subspace against brute-force loops."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

import eigenvision as ev
from eigenvision import NearestNeighbor
from eigenvision.cluster import (
    neighbour_graph,
    spectral_labels,
)
from tests.conftest import blas_threads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("chunk_size", [7, 64, 10_000])
def test_nearest_neighbor_equals_brute_force(dtype, chunk_size, rng):
    gallery = rng.normal(size=(300, 12)).astype(dtype)
    probes = rng.normal(size=(25, 12)).astype(dtype)
    distances, indices = NearestNeighbor(chunk_size=chunk_size).fit(gallery).kneighbors(probes, 5)
    brute = np.sqrt(((probes[:, None].astype(float) - gallery[None].astype(float)) ** 2).sum(-1))
    expected = np.argsort(brute, axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_allclose(distances, np.take_along_axis(brute, expected, 1), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("n_jobs", "probe_block"), [(1, 4), (2, 512), (3, 5)])
def test_nearest_neighbor_threads_and_ties(dtype, n_jobs, probe_block, rng, monkeypatch):
    monkeypatch.setattr(NearestNeighbor, "_PARALLEL_SCORES", 0)  # threads even for tiny work
    # 30 copies of one row spread over chunks of 7: equal distances go to the lower index,
    # whichever thread and chunk saw them; other probes check the threaded merge itself.
    gallery = rng.normal(size=(400, 6)).astype(dtype)
    gallery[np.arange(30) * 13] = gallery[0]
    probes = np.vstack([gallery[:1], rng.normal(size=(40, 6)).astype(dtype)])
    index = NearestNeighbor(chunk_size=7, probe_block=probe_block, n_jobs=n_jobs).fit(gallery)
    distances, indices = index.kneighbors(probes, 9)
    np.testing.assert_array_equal(indices[0], np.arange(9) * 13)
    np.testing.assert_array_equal(distances[0], 0)
    brute = np.linalg.norm(probes[:, None].astype(float) - gallery[None].astype(float), axis=2)
    np.testing.assert_array_equal(indices[1:], np.argsort(brute[1:], axis=1, kind="stable")[:, :9])


def _crowded_gallery(rng):
    """Float32 gallery where 40 entries lie within float32 round-off of one probe's 5th
    nearest (far outliers make the centred norms, and so the score round-off, large)."""
    directions = rng.normal(size=(40, 8))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    crowd = directions * (1 + rng.uniform(0, 1e-4, size=(40, 1)))  # radii differ by < 1e-4
    far = rng.normal(size=(20, 8)) * 1e3
    gallery = np.vstack([far[:10], crowd, far[10:], rng.normal(size=(300, 8)) + 50])
    return gallery.astype(np.float32), np.zeros((1, 8), dtype=np.float32)


def test_near_ties_within_round_off_are_searched_again(rng, monkeypatch):
    # The fast float32 scores cannot order the crowd: the answer must come from the
    # round-off proof and a second search, not from which entries float32 happened to keep.
    gallery, probe = _crowded_gallery(rng)
    index = NearestNeighbor(chunk_size=16).fit(gallery)
    kept = []
    original = NearestNeighbor._candidates
    monkeypatch.setattr(
        NearestNeighbor,
        "_candidates",
        lambda self, probes, keep: kept.append(keep) or original(self, probes, keep),
    )
    distances, indices = index.kneighbors(probe, 5)
    brute = np.linalg.norm(gallery.astype(np.float64) - probe.astype(np.float64), axis=1)
    expected = np.argsort(brute, kind="stable")[:5]
    np.testing.assert_array_equal(indices[0], expected)
    np.testing.assert_allclose(distances[0], brute[expected], rtol=1e-12)
    assert kept[0] == 5 + NearestNeighbor._MARGIN and max(kept) > kept[0]


def test_without_the_round_off_proof_near_ties_go_wrong(rng, monkeypatch):
    # The test above can fail: trusting the first candidates (no proof) misses true neighbours.
    gallery, probe = _crowded_gallery(rng)
    monkeypatch.setattr(NearestNeighbor, "_round_off_bound", lambda self, norms: -np.inf)
    indices = NearestNeighbor(chunk_size=16).fit(gallery).kneighbors(probe, 5)[1]
    brute = np.linalg.norm(gallery.astype(np.float64) - probe.astype(np.float64), axis=1)
    assert not np.array_equal(indices[0], np.argsort(brute, kind="stable")[:5])


def test_concurrent_searches_agree(rng, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(NearestNeighbor, "_PARALLEL_SCORES", 0)
    before = blas_threads()
    gallery = rng.normal(size=(5000, 16)).astype(np.float32)
    probes = rng.normal(size=(64, 16)).astype(np.float32)
    index = NearestNeighbor(chunk_size=256, probe_block=8, n_jobs=2).fit(gallery)
    expected = index.kneighbors(probes, 3)[1]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: index.kneighbors(probes, 3)[1], range(16)))
    for indices in results:
        np.testing.assert_array_equal(indices, expected)
    assert blas_threads() == before


def test_nearest_neighbor_refuses_bad_n_jobs(rng):
    with pytest.raises(ValueError, match="NearestNeighbor.n_jobs must be .* got 0"):
        NearestNeighbor(n_jobs=0).fit(rng.normal(size=(10, 3)))


def test_nearest_neighbor_is_exact_where_the_expansion_is_not(rng):
    # Far from the origin, ||a||^2 - 2ab + ||b||^2 cancels catastrophically in float32.
    base = np.full(8, 1000.0, np.float32)
    gallery = base + rng.normal(scale=1e-2, size=(50, 8)).astype(np.float32)
    probe = base + rng.normal(scale=1e-2, size=(1, 8)).astype(np.float32)
    _, indices = NearestNeighbor().fit(gallery).kneighbors(probe, 3)
    brute = np.linalg.norm(gallery.astype(float) - probe.astype(float), axis=1)
    np.testing.assert_array_equal(indices[0], np.argsort(brute)[:3])


def test_nearest_subspace_is_the_smallest_reconstruction_error():
    from sklearn.decomposition import PCA

    digits = ev.datasets.load_digits()
    train, test = digits[:600], digits[600:700]
    labels, dffs = ev.nearest_subspace(train, test, 5)
    flat = test.images.reshape(len(test), -1).astype(np.float64)
    errors = []
    for label in np.unique(train.labels):
        members = train.images[train.labels == label].reshape(-1, 64).astype(np.float64)
        pca = PCA(5).fit(members)
        errors.append(np.sum((flat - pca.inverse_transform(pca.transform(flat))) ** 2, axis=1))
    errors = np.array(errors).T
    np.testing.assert_allclose(dffs, errors, rtol=1e-3, atol=1e-4)
    np.testing.assert_array_equal(labels, np.unique(train.labels)[np.argmin(errors, axis=1)])


def test_nearest_neighbor_follows_scikit_learns_fit_protocol(rng):
    """Regression (hardening round 4): ``fit(X, y)`` failed (no ``y``), so the index could
    not end a pipeline; a 1-D or (n, 0) gallery was taken; ``n_features_in_`` was missing."""
    from sklearn.pipeline import make_pipeline

    X, y = rng.normal(size=(30, 6)), np.arange(30) % 3
    pipeline = make_pipeline(ev.PixelStandardizer(), NearestNeighbor()).fit(X, y)
    index = pipeline[-1]
    assert index.n_features_in_ == 6
    _, nearest = index.kneighbors(pipeline[0].transform(X[:4]), 1)
    assert nearest[:, 0].tolist() == [0, 1, 2, 3]
    for gallery in (np.arange(5.0), np.empty((4, 0))):
        with pytest.raises(ValueError, match=r"Expected 2D array|0 feature\(s\)"):
            NearestNeighbor().fit(gallery)


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


def test_the_search_of_nearby_cells_finds_the_exact_neighbours_of_grouped_codes():
    """Issue 79: beyond EXACT_GRAPH_ROWS the neighbour graph is searched in nearby k-means
    cells (an inverted file). On 6,000 codes of 30 blobs its neighbours are the exact search's
    for at least 99% of the pairs, each found at its exact distance, each row first its own;
    the graph groups the blobs as the exact one does."""
    from sklearn.datasets import make_blobs

    from eigenvision.neighbors import cell_kneighbors

    X, truth = make_blobs(6000, 32, centers=30, cluster_std=3.0, random_state=0)
    distances, indices = cell_kneighbors(X, 11)
    exact_distances, exact = ev.NearestNeighbor().fit(X).kneighbors(X, 11)
    recall = np.mean([len(set(a) & set(b)) / 11 for a, b in zip(indices, exact, strict=True)])
    assert recall >= 0.99
    np.testing.assert_array_equal(indices[:, 0], np.arange(len(X)))
    brute = np.linalg.norm(X[indices] - X[:, None, :], axis=2)
    np.testing.assert_allclose(distances, brute, atol=1e-9)
    assert np.all(np.diff(distances, axis=1) >= 0)
    assert np.all(distances >= exact_distances - 1e-9)  # never nearer than the true ones
    approximate = spectral_labels(neighbour_graph(X, exact=False), 30)
    assert adjusted_rand_score(truth, approximate) == 1.0
    with pytest.raises(ValueError, match="k must lie"):
        cell_kneighbors(X[:5], 6)
