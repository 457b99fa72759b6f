"""Data drawn from known models, for the tests of more than one module."""

import numpy as np


def low_rank(rng, n, d, rank, noise=0.05, dtype=np.float64, spectrum=(5.0, 1.0)):
    spectrum = np.linspace(*spectrum, rank)
    X = (rng.normal(size=(n, rank)) * spectrum) @ np.linalg.qr(rng.normal(size=(d, rank)))[0].T
    return (X + noise * rng.normal(size=(n, d)) + rng.normal(size=d)).astype(dtype)


def two_kinds(rng, n_people, per_person, *, low=-6.0, high=4.0, spread=2.0):
    """A symmetric (n, n) set of pair scores: pairs of one person around ``high``, of two
    around ``low``, and their truth."""
    truth = np.repeat(np.arange(n_people), per_person)
    same = truth[:, None] == truth[None, :]
    noise = rng.normal(size=(len(truth), len(truth))) * spread
    scores = np.where(same, high, low) + (noise + noise.T) / np.sqrt(2)
    return scores, truth


def likeliest_mixture(pairs, seed=0):
    """scikit-learn's tied two-component mixtures of the pair scores started from the bulk and
    the top 10, 1, 0.1 and 0.01 percent: the one of highest likelihood."""
    from sklearn.mixture import GaussianMixture

    fits = [
        GaussianMixture(
            2,
            covariance_type="tied",
            means_init=np.quantile(pairs, [0.25, top]).reshape(2, 1),
            random_state=seed,
        ).fit(pairs)
        for top in (0.9, 0.99, 0.999, 0.9999)
    ]
    return max(fits, key=lambda fit: fit.score(pairs))
