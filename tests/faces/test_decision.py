"""Stage 2 of the photo pipeline, face or not (eigenvision.faces.decision)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.faces import photos
from eigenvision.faces.decision import FaceDecision


def test_the_decision_normalises_the_windows_it_is_given(finder, rng):
    """decision_function takes windows as cut (any grey levels): the same log-odds for a
    window, its zero-mean unit-norm copy and, equalised, any increasing change of contrast;
    and equal to the perceptron on the log distances of the windows normalised by hand."""
    from eigenvision.faces.decision import log_distances, network_log_odds
    from eigenvision.normalize import equalize_windows, unit_norm

    cut = finder.decision.windows(
        photos.sample_picture("astronaut"),
        [((190.0 + dx, 100.0), (240.0 + dx, 104.0), 0.0) for dx in range(8)],
    )
    for equalize, normalise in ((True, equalize_windows), (False, unit_norm)):
        model = copy.copy(finder.decision).set_params(equalize=equalize)
        scores = model.decision_function(cut)
        np.testing.assert_allclose(model.decision_function(unit_norm(cut)), scores, atol=1e-9)
        spaces = [*model.face_clusters_.values(), *model.nonface_clusters_.values()]
        network = {name: getattr(model, f"network_{name}_") for name in ev.faces.decision.NETWORK}
        features = log_distances(normalise(cut).reshape(len(cut), -1), spaces)
        np.testing.assert_allclose(scores, network_log_odds(features, network), atol=1e-12)
    equalized = copy.copy(finder.decision).set_params(equalize=True)
    np.testing.assert_allclose(
        equalized.decision_function(np.sqrt(cut) * 2 + 3),
        equalized.decision_function(cut),
        atol=1e-9,
    )


def test_log_distances_equal_each_spaces_own_and_a_brute_force_loop(rng):
    """The one-product log distances against Eigenspace.dffs / difs of every space, and a
    brute-force residual in a loop: spaces of several sizes, one fitting its rows exactly
    (DFFS 0, floored at 1e-12 both ways)."""
    from eigenvision.faces.decision import log_distances
    from eigenvision.normalize import unit_norm

    X = unit_norm(rng.random((40, 30)))
    spaces = [ev.Eigenspace(k).fit(unit_norm(rng.random((n, 30)))) for k, n in ((3, 20), (7, 9))]
    spaces.append(ev.Eigenspace(5).fit(X[:6]))  # rows 0-5 lie in this space
    reference = np.stack(
        [column for space in spaces for column in (space.dffs(X), space.difs(X))], axis=1
    )
    got = log_distances(X, spaces)
    np.testing.assert_allclose(got, np.log(np.maximum(reference, 1e-12)), rtol=0, atol=1e-10)
    for s, space in enumerate(spaces):
        for i, x in enumerate(X[:8]):
            codes = space.components_ @ (x - space.mean_)
            residual = x - space.mean_ - space.components_.T @ codes
            expected = max(residual @ residual, 1e-12)
            assert got[i, 2 * s] == pytest.approx(np.log(expected), abs=1e-9)
            assert got[i, 2 * s + 1] == pytest.approx(
                np.log(np.sum(codes**2 / space.explained_variance_)), abs=1e-12
            )
    assert np.all(got[:6, 4] < np.log(1e-11))  # the exact fits


@pytest.mark.parametrize("n_networks", [1, 3])
def test_averaged_perceptrons_are_one_perceptron(n_networks, rng):
    """fit_network's weights against scikit-learn's MLPClassifiers fitted here, seed by seed:
    the log-odds of the merged perceptron are the mean of theirs."""
    from scipy.special import logit
    from sklearn.neural_network import MLPClassifier

    from eigenvision.faces.decision import fit_network, network_log_odds

    positive = rng.normal(1.0, 1.0, (120, 4))
    negative = rng.normal(-0.5, 2.0, (300, 4))
    weights = fit_network(positive, negative, hidden=8, n_networks=n_networks, random_state=2)
    assert weights["hidden_weights"].shape == (4, 8 * n_networks)
    X = np.vstack([positive, negative])
    y = np.r_[np.ones(120), np.zeros(300)]
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    expected = np.mean(
        [
            logit(
                MLPClassifier(
                    (8,), alpha=1e-3, max_iter=500, early_stopping=True, random_state=seed
                )
                .fit(Z, y)
                .predict_proba(Z)[:, 1]
            )
            for seed in range(2, 2 + n_networks)
        ],
        axis=0,
    )
    np.testing.assert_allclose(network_log_odds(X, weights), expected, atol=1e-8)
    with pytest.raises(ValueError, match="n_networks must be an int in"):
        ev.FaceFinder(decision=FaceDecision(n_networks=0)).check_parameters()


def test_a_decision_shared_between_threads_scores_as_one_batch(finder, monkeypatch):
    """A photo's many candidates are decided in parts on two threads: the same log-odds, in
    the same order, as each window decided alone."""
    from eigenvision.faces import decision

    monkeypatch.setattr(decision, "n_threads", lambda: 2)  # two parts on a machine of any size
    image = ev.normalize.resize(photos.sample_picture("astronaut"), (320, 320))
    candidates = finder.search.candidates(image, 200)
    assert len(candidates) >= decision._PARALLEL_WINDOWS  # in parts
    parts = []
    decide = FaceDecision.decision_function
    monkeypatch.setattr(
        FaceDecision,
        "decision_function",
        lambda self, windows: parts.append(len(windows)) or decide(self, windows),
    )
    scores = finder.decision.candidate_scores(image, candidates)
    assert len(parts) == 2 and sum(parts) == len(candidates)
    windows = finder.decision.windows(image, candidates)
    alone = [decide(finder.decision, window[None])[0] for window in windows[::7]]
    np.testing.assert_allclose(scores[::7], alone, rtol=1e-10, atol=1e-10)
