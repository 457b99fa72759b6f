"""Clustering in component space (the lecture's appendix), with scikit-learn's algorithms."""

import sys

import numpy as np
import pytest
from sklearn.cluster import AgglomerativeClustering
from sklearn.metrics import adjusted_rand_score

import eigenvision as ev
from eigenvision.cluster import (
    affinity,
    eigengap_groups,
    laplacian_spectrum,
    neighbour_graph,
    pair_mixture,
    spectral_labels,
)
from tests.synthetic import likeliest_mixture, two_kinds


def _blobs(rng, n_groups=4, per_group=25, d=10, spread=0.3):
    centres = rng.normal(size=(n_groups, d)) * 4
    X = np.repeat(centres, per_group, axis=0) + spread * rng.normal(size=(n_groups * per_group, d))
    return X, np.repeat(np.arange(n_groups), per_group)


@pytest.mark.parametrize("method", ["agglomerative", "spectral", "kmeans"])
def test_separated_groups_are_found_and_counted(method, rng):
    """Four well separated groups: each method finds them exactly, without being told how
    many (the eigengap of the self-tuning affinity's Laplacian)."""
    X, truth = _blobs(rng)
    labels = ev.cluster(X, method=method)
    assert adjusted_rand_score(truth, labels) == 1.0
    assert eigengap_groups(affinity(X)) == 4


def test_groups_are_numbered_by_size_and_trivial_inputs_answer_trivially(rng):
    X, _ = _blobs(rng, n_groups=3, per_group=10)
    X = np.concatenate([X[:10], X[10:15], X[20:30]])  # groups of 10, 5, 10
    labels = ev.cluster(X, n_clusters=3)
    assert np.bincount(labels).tolist() == [10, 10, 5]
    assert labels[0] == 0  # of two equal groups the one seen first comes first
    assert ev.cluster(X[:1]).tolist() == [0]
    assert ev.cluster(X[:5], n_clusters=1).tolist() == [0] * 5


def test_agglomerative_is_scikit_learns_on_the_codes(rng):
    X, _ = _blobs(rng, spread=2.0)
    space = ev.Eigenspace(3).fit(X)
    expected = AgglomerativeClustering(4, linkage="average").fit_predict(space.transform(X))
    found = ev.cluster(X, model=space, n_clusters=4)
    assert adjusted_rand_score(expected, found) == 1.0


def test_digits_cluster_better_in_an_eigenspace_than_in_pixels():
    """The lecture's claim on scikit-learn's 1,797 digits, ten groups: average-linkage
    clustering of 20 eigenspace codes agrees with the digits better (adjusted Rand index)
    than the same clustering of the 64 pixels."""
    digits = ev.datasets.load_digits()
    pixels = ev.cluster(digits.images, n_clusters=10)
    codes = ev.cluster(digits.images, model=ev.Eigenspace(20), n_clusters=10)
    assert adjusted_rand_score(digits.labels, codes) > adjusted_rand_score(digits.labels, pixels)


def test_people_never_seen_are_grouped_by_an_identity_model(att):
    """PLDA trained on AT&T people 1-20 groups the 200 images of people 21-40 (not told how
    many people) better than an eigenspace clustering told there are 20."""
    names = np.unique(att.labels)
    train = np.isin(att.labels, names[:20])
    X = att.images.reshape(len(att.images), -1)
    plda = ev.PLDA(19, pca_components=60).fit(X[train], att.labels[train])
    by_identity = ev.cluster(X[~train], model=plda)
    space = ev.Eigenspace(60).fit(X[train])
    by_codes = ev.cluster(X[~train], model=space, n_clusters=20)
    truth = att.labels[~train]
    assert adjusted_rand_score(truth, by_identity) > adjusted_rand_score(truth, by_codes)
    with pytest.raises(ValueError, match="fit it on people first"):
        ev.cluster(X[~train], model=ev.PLDA())


def test_bad_input_is_refused_by_name(rng):
    X, _ = _blobs(rng)
    with pytest.raises(ValueError, match="method must be one of"):
        ev.cluster(X, method="dbscan")
    with pytest.raises(ValueError, match="n_clusters=101 exceeds the 100 images"):
        ev.cluster(X, n_clusters=101)
    with pytest.raises(ValueError, match="n_clusters must be a positive int"):
        ev.cluster(X, n_clusters=0)
    with pytest.raises(ValueError, match="finite real numbers"):
        ev.cluster(np.where(X > 3, np.nan, X))
    with pytest.raises(ValueError, match="n >= 1"):
        ev.cluster(np.zeros((0, 4)))


def test_pair_mixture_is_scikit_learns_mixture_of_the_set_pairs(rng):
    """The two kinds of pairs of a set: scikit-learn's tied two-component mixture fitted to the
    scores of every pair, its posterior of the higher component (predict_proba); written
    over the scores themselves when asked; None where one Gaussian does as well by BIC (a
    set of one kind of pair)."""
    scores, truth = two_kinds(rng, 4, 10)
    pairs = scores[np.triu_indices(len(scores), 1)].reshape(-1, 1)
    reference = likeliest_mixture(pairs)
    mixture = pair_mixture(scores)
    high = int(np.argmax(reference.means_[:, 0]))
    assert mixture.high == pytest.approx(reference.means_[high, 0], rel=1e-12)
    assert mixture.low == pytest.approx(reference.means_[1 - high, 0], rel=1e-12)
    assert mixture.weight == pytest.approx(reference.weights_[high], rel=1e-12)
    assert mixture.variance == pytest.approx(reference.covariances_.item(), rel=1e-12)
    expected = reference.predict_proba(scores.reshape(-1, 1))[:, high].reshape(scores.shape)
    np.testing.assert_allclose(mixture.probability(scores), expected, rtol=1e-9, atol=1e-12)
    assert mixture.high == pytest.approx(4.0, abs=0.3)
    assert mixture.low == pytest.approx(-6.0, abs=0.3)
    written = mixture.probability(scores, out=scores)
    assert written is scores
    np.testing.assert_allclose(scores, expected, rtol=1e-9, atol=1e-12)
    one_kind, _ = two_kinds(rng, 1, 40)
    strangers, _ = two_kinds(rng, 40, 1)
    assert pair_mixture(one_kind) is None and pair_mixture(strangers) is None
    with pytest.raises(ValueError, match="n >= 3"):
        pair_mixture(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="finite"):
        pair_mixture(np.where(np.eye(5) > 0, 0.0, np.nan))


def test_pair_mixture_of_a_large_set_learns_from_pairs_drawn_at_random(rng):
    """A set of 633 faces or more is fitted on 200,000 of its pairs (never the triangle's
    copy): the same two kinds as from every pair, the same draw each time."""
    scores, _ = two_kinds(rng, 70, 10)  # 700 faces: 244,650 pairs
    pairs = scores[np.triu_indices(len(scores), 1)].reshape(-1, 1)
    every = likeliest_mixture(pairs)
    drawn = pair_mixture(scores)
    high = int(np.argmax(every.means_[:, 0]))
    assert drawn.high == pytest.approx(every.means_[high, 0], abs=0.05)
    assert drawn.low == pytest.approx(every.means_[1 - high, 0], abs=0.05)
    assert drawn.weight == pytest.approx(every.weights_[high], abs=0.01)
    assert pair_mixture(scores) == drawn


def test_average_linkage_reads_the_upper_triangle_without_copying_it(rng):
    """average_linkage copied a set's distances to clear their diagonal, which scikit-learn
    never reads: the groups are scikit-learn's on the distances as given, the input is not
    written, and a diagonal that is not finite (which scikit-learn refuses) is still
    ignored."""
    import tracemalloc

    from eigenvision.cluster import average_linkage

    X, _ = _blobs(rng, per_group=250)
    distances = np.sqrt(((X[:, None] - X[None]) ** 2).sum(axis=-1))
    reference = AgglomerativeClustering(
        n_clusters=None, metric="precomputed", linkage="average", distance_threshold=3.0
    ).fit_predict(distances)
    kept = distances.copy()
    tracemalloc.start()
    try:
        labels = average_linkage(distances, 3.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert adjusted_rand_score(reference, labels) == 1.0
    assert peak < 2 * distances.nbytes  # scikit-learn's condensed copy and its indices
    np.testing.assert_array_equal(distances, kept)
    np.fill_diagonal(distances, np.inf)
    assert adjusted_rand_score(reference, average_linkage(distances, 3.0)) == 1.0
    assert np.isinf(np.diagonal(distances)).all()


def test_pair_precision_recall_counts_pairs_as_a_loop_does(rng):
    truth, found = rng.integers(0, 5, 60), rng.integers(0, 4, 60)
    same_true = truth[:, None] == truth[None, :]
    same_found = found[:, None] == found[None, :]
    upper = np.triu(np.ones((60, 60), bool), 1)
    both = np.sum(same_true & same_found & upper)
    precision, recall = both / np.sum(same_found & upper), both / np.sum(same_true & upper)
    assert ev.evaluate.pair_precision_recall(truth, found) == pytest.approx(
        (precision, recall, 2 * precision * recall / (precision + recall)), rel=1e-12
    )
    assert ev.evaluate.pair_precision_recall([1, 2, 3], [0, 0, 0])[1:] == (1.0, 0.0)


def test_without_a_count_separated_blobs_in_many_dimensions_are_found():
    """Issue 79's example: 20 blobs of 128 dimensions, 2,000 points. The dense self-tuning
    affinity answered one group (its weak links to every far row outweigh a group's own); the
    neighbour graph's eigengap counts 20 and its spectrum groups them."""
    from sklearn.datasets import make_blobs

    X, truth = make_blobs(2000, 128, centers=20, cluster_std=4.0, random_state=0)
    assert eigengap_groups(neighbour_graph(X)) == 20
    assert adjusted_rand_score(truth, ev.cluster(X)) >= 0.99
    assert adjusted_rand_score(truth, ev.cluster(X, method="agglomerative")) >= 0.99


def test_without_a_count_digits_codes_give_between_6_and_20_groups():
    digits = ev.datasets.load_digits()
    codes = ev.Eigenspace(20).fit_transform(digits.images)
    labels = ev.cluster(codes)
    assert 6 <= len(np.unique(labels)) <= 20
    assert adjusted_rand_score(digits.labels, labels) > 0.5


def test_neighbour_graph_is_the_self_tuning_affinity_of_each_rows_neighbours(rng):
    """Against a brute-force loop over scikit-learn's exact neighbours: the weight of each
    row's k nearest, exp(-d^2 / (s_i s_j)) with s the 7th neighbour's distance, kept where
    either end chose the edge."""
    from sklearn.neighbors import NearestNeighbors

    X = rng.normal(size=(60, 5))
    k = 8
    graph = neighbour_graph(X, n_neighbors=k).toarray()
    distances, indices = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    width = distances[:, 7]
    expected = np.zeros((60, 60))
    for i in range(60):
        for j in indices[i, 1:]:
            weight = np.exp(-np.sum((X[i] - X[j]) ** 2) / (width[i] * width[j]))
            expected[i, j] = expected[j, i] = weight
    np.testing.assert_allclose(graph, expected, rtol=1e-12, atol=1e-15)


def test_the_sparse_spectrum_is_lapacks_and_finds_a_repeated_eigenvalue(rng):
    """LOBPCG on a sparse graph of 1,500 rows in 6 separate parts: the smallest eigenvalues
    of its normalised Laplacian as scipy's dense eigh gives them, 0 six times."""
    from scipy import sparse
    from scipy.linalg import eigh

    X, _ = _blobs(rng, n_groups=6, per_group=250, d=8, spread=0.3)
    graph = neighbour_graph(X)
    values, vectors = laplacian_spectrum(graph, 10)
    dense = graph.toarray()
    scale = 1 / np.sqrt(dense.sum(axis=1))
    laplacian = np.eye(len(X)) - scale[:, None] * dense * scale[None, :]
    expected = eigh(laplacian, eigvals_only=True, subset_by_index=[0, 9])
    np.testing.assert_allclose(values, expected, atol=1e-5)
    assert np.sum(values < 1e-6) == 6
    residual = sparse.csr_array(laplacian) @ vectors - vectors * values
    assert np.abs(residual).max() < 1e-3
    labels = spectral_labels(graph, 6)
    assert adjusted_rand_score(np.repeat(np.arange(6), 250), labels) == 1.0


def test_with_a_count_given_the_results_are_scikit_learns_as_before(rng):
    from sklearn.cluster import KMeans, SpectralClustering

    X, _ = _blobs(rng, spread=2.0)
    expected = AgglomerativeClustering(4, linkage="average").fit_predict(X)
    assert adjusted_rand_score(expected, ev.cluster(X, n_clusters=4)) == 1.0
    expected = KMeans(4, n_init=10, random_state=0).fit_predict(X)
    assert adjusted_rand_score(expected, ev.cluster(X, method="kmeans", n_clusters=4)) == 1.0
    similarity = affinity(X)
    expected = SpectralClustering(
        4, affinity="precomputed", random_state=0, assign_labels="cluster_qr"
    ).fit_predict(similarity)
    found = ev.cluster(X, method="spectral", n_clusters=4)
    assert adjusted_rand_score(expected, found) == 1.0


@pytest.mark.parametrize("method", [None, "agglomerative", "spectral", "kmeans"])
def test_identical_rows_are_one_group_not_a_nan_error(method):
    """Issue 80: ev.cluster(np.ones((20, 64))) ended in scipy's "must not contain infs or
    NaNs" (the self-tuning width of a row among copies of itself underflowed to 0/0)."""
    assert ev.cluster(np.ones((20, 64)), method=method).tolist() == [0] * 20


def test_a_method_told_the_count_makes_no_n_by_n_matrix(rng, monkeypatch):
    """Issue 80: k-means told the count built the (n, n) affinity first (30,000 rows asked
    for 6.7 GiB); told the count, k-means and average linkage need no affinity at all."""
    module = sys.modules["eigenvision.cluster"]  # ev.cluster is the function

    def refuse(*args, **kwargs):
        raise AssertionError("an affinity was built")

    monkeypatch.setattr(module, "affinity", refuse)
    monkeypatch.setattr(module, "neighbour_graph", refuse)
    X, truth = _blobs(rng)
    assert adjusted_rand_score(truth, ev.cluster(X, method="kmeans", n_clusters=4)) == 1.0
    assert adjusted_rand_score(truth, ev.cluster(X, n_clusters=4)) == 1.0


def test_dense_paths_are_refused_beyond_the_budget_before_allocating(monkeypatch):
    """Regression (hardening round 4): ``ev.cluster(np.random.rand(30000, 2),
    method="kmeans", n_clusters=3)`` asked for 6.7 GiB; k-means now needs no n x n matrix,
    and the paths that do (average linkage, spectral given a count) are refused before
    allocating anything beyond ``DENSE_BUDGET``, naming the paths that fit."""
    import importlib
    import tracemalloc

    from sklearn.cluster import KMeans

    clustering = importlib.import_module("eigenvision.cluster")  # ev.cluster is the function
    rng = np.random.default_rng(0)
    X = rng.random((3000, 2))
    monkeypatch.setattr(clustering, "DENSE_BUDGET", 8 * 3000 * 3000)  # one matrix, not two
    tracemalloc.start()
    for method in ("agglomerative", "spectral"):
        with pytest.raises(ValueError, match="over the 0 GiB budget.*method='kmeans'"):
            ev.cluster(X, method=method, n_clusters=3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 * 3000 * 3000 / 10  # refused before the matrix was made
    ours = ev.cluster(X, method="kmeans", n_clusters=3)
    theirs = KMeans(3, n_init=10, random_state=0).fit_predict(X)
    assert adjusted_rand_score(ours, theirs) == 1.0


def test_a_low_rank_affinitys_spectrum_is_the_dense_one(rng):
    """The Laplacian spectrum of ``W = F F^T`` read from the ``(r, r)`` Gram matrix: the
    eigenvalues scipy's dense eigh gives for the ``(n, n)`` affinity, and eigenvectors of it."""
    from scipy.linalg import eigh

    from eigenvision.cluster import LowRankAffinity

    factor = np.abs(rng.normal(size=(300, 12))) + np.repeat(np.eye(3), [100, 100, 100], 0) @ (
        5 * rng.random((3, 12))
    )
    similarity = LowRankAffinity(factor)
    values, vectors = laplacian_spectrum(similarity, 6)
    dense = factor @ factor.T
    scale = 1 / np.sqrt(dense.sum(axis=1))
    laplacian = np.eye(300) - scale[:, None] * dense * scale[None, :]
    np.testing.assert_allclose(values, eigh(laplacian, eigvals_only=True)[:6], atol=1e-10)
    np.testing.assert_allclose(laplacian @ vectors, vectors * values, atol=1e-10)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(6), atol=1e-10)
    with pytest.raises(ValueError, match="rank 12"):
        laplacian_spectrum(similarity, 13)


def test_a_nystroem_kernel_groups_without_an_n_by_n_matrix(monkeypatch):
    """Issue 79 (the lecture's appendix): a KernelPCA with landmarks gives its Nyström kernel
    ``k(X, L) K_LL^-1 k(L, X)`` as a factor; spectral clustering on it finds 20 blobs of 128
    dimensions, counted or told, with the dense budget at one byte and no affinity built."""
    import importlib

    from sklearn.datasets import make_blobs
    from sklearn.metrics.pairwise import rbf_kernel

    from eigenvision.cluster import nystroem_affinity

    clustering = importlib.import_module("eigenvision.cluster")
    X, truth = make_blobs(2000, 128, centers=20, cluster_std=4.0, random_state=0)
    model = ev.KernelPCA(10, gamma=1e-3, n_landmarks=300).fit(X)
    landmarks = model.landmarks_
    expected = (
        rbf_kernel(X[:50], landmarks, gamma=1e-3)
        @ np.linalg.pinv(rbf_kernel(landmarks, gamma=1e-3), hermitian=True, rtol=1e-10)
        @ rbf_kernel(landmarks, X[:50], gamma=1e-3)
    )
    np.testing.assert_allclose(nystroem_affinity(X[:50], model).toarray(), expected, atol=1e-6)

    def refuse(*args, **kwargs):
        raise AssertionError("a dense affinity was built")

    monkeypatch.setattr(clustering, "DENSE_BUDGET", 1)
    monkeypatch.setattr(clustering, "affinity", refuse)
    assert adjusted_rand_score(truth, ev.cluster(X, model=model)) == 1.0
    told = ev.cluster(X, model=model, method="spectral", n_clusters=20)
    assert adjusted_rand_score(truth, told) == 1.0
    with pytest.raises(ValueError, match="n_landmarks"):
        nystroem_affinity(X, ev.KernelPCA(10).fit(X[:100]))


def test_a_large_sets_graph_is_searched_in_cells_by_default(monkeypatch):
    import importlib

    from sklearn.datasets import make_blobs

    clustering = importlib.import_module("eigenvision.cluster")
    X, truth = make_blobs(1500, 16, centers=10, random_state=0)
    exact = neighbour_graph(X)
    monkeypatch.setattr(clustering, "EXACT_GRAPH_ROWS", 1000)
    by_cells = neighbour_graph(X)
    assert (by_cells != neighbour_graph(X, exact=False)).nnz == 0
    assert (by_cells != exact).nnz < 0.01 * exact.nnz
    assert adjusted_rand_score(truth, ev.cluster(X)) == 1.0
