"""Fisherfaces (FisherSpace) against scikit-learn's linear discriminant analysis."""

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

import eigenvision as ev
from tests.conftest import match_up_to_sign


def test_fisher_matches_sklearn_lda(rng, low_rank_codes):
    y = np.repeat(np.arange(5), 30)
    X = low_rank_codes + y[:, None] * 0.4
    ours = ev.FisherSpace().fit(X, y)
    assert ours.n_components_ == 4
    reduced = ev.Eigenspace(min(150 - 5, 30)).fit(X).transform(X)
    lda = LinearDiscriminantAnalysis(solver="eigen").fit(reduced, y)
    A, B = ours.transform(X), lda.transform(reduced)
    A, B = A - A.mean(0), B - B.mean(0)
    match_up_to_sign(A / np.linalg.norm(A, axis=0), B / np.linalg.norm(B, axis=0), atol=1e-8)
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
    match_up_to_sign(
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


def test_fisher_space_never_reports_components_it_did_not_make(rng):
    """Regression: with pca_components below n_components, n_components_ claimed more rows
    than components_ had."""
    X, y = rng.random((40, 12)), np.repeat(np.arange(8), 5)
    with pytest.raises(ValueError, match="pca_components"):
        ev.FisherSpace(n_components=7, pca_components=4).fit(X, y)
    space = ev.FisherSpace(n_components=4, pca_components=4).fit(X, y)
    assert space.n_components_ == len(space.components_) == 4
