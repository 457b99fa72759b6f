"""Rank selection: parallel analysis and the spectrum's gap against permuted data."""

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import select_rank
from tests.synthetic import low_rank


# ------------------------------------------------------------ rank selection
@pytest.mark.parametrize("n, d, rank", [(200, 30, 3), (60, 400, 5), (500, 100, 8)])
def test_permutation_recovers_rank(n, d, rank, rng):
    # Parallel analysis compares with permuted copies that keep each column's variance, so
    # every signal component must stand above the noise *and* the spread-out signal.
    X = low_rank(rng, n, d, rank, noise=0.5, spectrum=(4.0, 3.0))
    result = select_rank(X, method="permutation", n_permutations=10, seed=1)
    assert result.rank == rank
    assert (
        result.reference.shape == (10, min(n, d))
        and result.threshold.shape == result.spectrum.shape
    )
    np.testing.assert_allclose(
        result.spectrum, np.linalg.svd(X - X.mean(0), compute_uv=False), rtol=1e-10
    )
    assert select_rank(X, method="permutation", n_permutations=10, seed=1).rank == result.rank


def test_gap_and_variance(rng):
    X = low_rank(rng, 300, 40, rank=4, noise=0.05)
    assert select_rank(X, method="gap").rank == 4
    result = select_rank(X, method="variance", fraction=0.9)
    eigen = result.spectrum**2
    ratio = np.cumsum(eigen) / eigen.sum()
    assert ratio[result.rank - 1] >= 0.9 > ratio[result.rank - 2]
    with pytest.raises(ValueError, match="method"):
        select_rank(X, method="elbow")


def test_usps_threes_spectrum_stands_above_permuted(usps):
    threes = usps.images[usps.labels == 3]
    assert len(threes) == 658  # the lecture's 658 USPS threes
    result = select_rank(threes, method="permutation", n_permutations=5, seed=0)
    assert 5 <= result.rank <= 60
    assert result.spectrum[0] > 2 * result.threshold[0]


def test_gap_rank_ignores_the_near_singular_tail(rng):
    """Regression: the eigengap of 300 x 256 Gaussian noise chose 255 of 256."""
    noise = rng.normal(size=(300, 256))
    assert ev.select_rank(noise, method="gap").rank < 128
    X = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 30)) * 3 + rng.normal(size=(200, 30))
    assert ev.select_rank(X, method="gap").rank == 3
    with pytest.raises(ValueError, match="n_permutations"):
        ev.select_rank(X, n_permutations=0)
