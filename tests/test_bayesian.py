"""Bayesian matching (Moghaddam, Jebara & Pentland 2000) against brute-force pair loops."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

import eigenvision as ev
from tests.conftest import saved_unchecked


def _people(n_people=6, per_person=5, d=40, seed=0):
    rng = np.random.default_rng(seed)
    identities = rng.normal(size=(n_people, d))
    style = rng.normal(size=(3, d))  # intrapersonal variation lives mostly in a subspace
    X = (
        np.repeat(identities, per_person, axis=0)
        + rng.normal(size=(n_people * per_person, 3)) @ style
        + 0.2 * rng.normal(size=(n_people * per_person, d))
    )
    return X.reshape(-1, 5, d // 5), np.repeat(np.arange(n_people), per_person)


def _covariance(variances, space, which):
    """The model's covariance in the PCA step's coordinates, built from its eigenvectors."""
    # The intrapersonal codes are Z W with W = U L^(-1/2): U = W L^(1/2).
    pca_basis = space.pca_.components_.astype(np.float64)
    whiten = space.components_.astype(np.float64) @ pca_basis.T  # (m, m) = W^T
    intra_vectors = whiten.T * np.sqrt(space.intra_variances_)
    if which == "intra":
        return intra_vectors @ np.diag(variances) @ intra_vectors.T
    # intra_to_extra = L_I^(1/2) U_I^T U_E L_E^(-1/2), so U_E = U_I L_I^(-1/2) M L_E^(1/2).
    extra_vectors = (
        intra_vectors
        / np.sqrt(space.intra_variances_)
        @ space.intra_to_extra_
        * np.sqrt(space.extra_variances_)
    )
    return extra_vectors @ np.diag(variances) @ extra_vectors.T


def test_pair_covariances_equal_every_pair_enumerated():
    X, y = _people()
    space = ev.BayesianSpace(n_components=3, extra_components=4).fit(X, y)
    Z = space.pca_.transform(X).astype(np.float64)
    i, j = np.triu_indices(len(X), 1)
    same = y[i] == y[j]
    deltas = Z[i] - Z[j]
    intra = deltas[same].T @ deltas[same] / same.sum()
    extra = deltas[~same].T @ deltas[~same] / (~same).sum()
    for which, brute, variances, k in (
        ("intra", intra, space.intra_variances_, 3),
        ("extra", extra, space.extra_variances_, 4),
    ):
        eigenvalues = np.linalg.eigvalsh(brute)[::-1]
        np.testing.assert_allclose(variances[:k], eigenvalues[:k], rtol=1e-10)
        np.testing.assert_allclose(variances[k:], eigenvalues[k:].mean(), rtol=1e-10)
        # the regularised model keeps the leading eigenvectors of the brute-force covariance
        model = _covariance(variances, space, which)
        values, vectors = np.linalg.eigh(brute)
        top = vectors[:, ::-1][:, :k]
        np.testing.assert_allclose(model @ top, top * values[::-1][:k], atol=1e-8 * values.max())


def test_ml_search_equals_a_brute_force_likelihood_loop():
    X, y = _people(n_people=8, per_person=6, seed=1)
    gallery, probes = X[::2], X[1::2]
    labels = y[::2]
    rec = ev.Recognizer(4, method="bayesian").fit(gallery, labels)
    space = rec.feature_
    covariance = _covariance(space.intra_variances_, space, "intra")
    model = multivariate_normal(np.zeros(len(covariance)), covariance)
    Z_gallery = space.pca_.transform(gallery).astype(np.float64)
    Z_probes = space.pca_.transform(probes).astype(np.float64)
    best = np.empty(len(probes), dtype=int)
    log_likelihood = np.empty((len(probes), len(gallery)))
    for p, z in enumerate(Z_probes):  # the paper's S' = P(delta | Omega_I), pair by pair
        for g, w in enumerate(Z_gallery):
            log_likelihood[p, g] = model.logpdf(z - w)
        best[p] = np.argmax(log_likelihood[p])
    distances, _, indices = rec.kneighbors(probes, k=3, return_indices=True)
    np.testing.assert_array_equal(indices[:, 0], best)
    # squared code distance = -2 log P(delta | Omega_I) + const (images are float32)
    offset = -2 * log_likelihood[np.arange(len(probes))[:, None], indices] - distances**2
    np.testing.assert_allclose(offset, offset[0, 0], atol=1e-5 * np.max(distances**2))


def test_log_odds_equal_the_two_gaussians_and_the_prior():
    X, y = _people(seed=2)
    space = ev.BayesianSpace(
        n_components=3, extra_components=5, intra_prior=0.2, calibrate=False
    ).fit(X, y)
    intra = multivariate_normal(cov=_covariance(space.intra_variances_, space, "intra"))
    extra = multivariate_normal(cov=_covariance(space.extra_variances_, space, "extra"))
    a, b = X[:7], X[7:14]
    delta = (space.pca_.transform(a) - space.pca_.transform(b)).astype(np.float64)
    expected = intra.logpdf(delta) - extra.logpdf(delta) + np.log(0.2 / 0.8)
    codes_a, codes_b = space.transform(a), space.transform(b)
    np.testing.assert_allclose(space.log_odds(codes_a - codes_b), expected, rtol=1e-9, atol=1e-9)
    pairwise = space.pairwise_log_odds(codes_a, codes_b)
    np.testing.assert_allclose(np.diag(pairwise), expected, rtol=1e-9, atol=1e-9)
    probability = space.intra_probability(a, b)
    np.testing.assert_allclose(probability, 1 / (1 + np.exp(-expected)), rtol=1e-9)
    np.testing.assert_allclose(space.intra_probability(b, a), probability, rtol=1e-12)


def test_match_probability_and_verify_agree():
    X, y = _people(seed=3)
    rec = ev.Recognizer(3, method="bayesian").fit(X[::2], y[::2])
    probes = X[1::2]
    matrix = rec.match_probability(probes)
    assert matrix.shape == (len(probes), len(rec.classes_))
    assert np.all((matrix >= 0) & (matrix <= 1))
    for p in (0, 5, 11):
        for c, label in enumerate(rec.classes_):
            answer = rec.verify(probes[p], label)  # one probe's float32 codes: round-off apart
            assert answer.probability == pytest.approx(matrix[p, c], rel=1e-4, abs=1e-300)
    # each probe's own person is the most probable, as the nearest-neighbour answer says
    np.testing.assert_array_equal(rec.classes_[matrix.argmax(1)], rec.predict(probes))
    assert ev.Recognizer(3).fit(X, y).verify(X[0], 0).probability is None
    with pytest.raises(ValueError, match="method='bayesian'"):
        ev.Recognizer(3).fit(X, y).match_probability(X[:2])


def test_bayesian_refuses_what_it_cannot_model():
    X, y = _people()
    with pytest.raises(ValueError, match="at least 2 classes"):
        ev.BayesianSpace(2).fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="intrapersonal differences"):
        ev.BayesianSpace(1).fit(X[:7], np.arange(7) % 6)
    with pytest.raises(ValueError, match="intra_prior"):
        ev.BayesianSpace(2, intra_prior=1.0).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        ev.BayesianSpace(24).fit(X, y)  # the PCA step has n - c = 24 dimensions
    with pytest.raises(ValueError, match="pca_components"):
        ev.BayesianSpace(2, pca_components=1).fit(X, y)
    with pytest.raises(ValueError, match="requires y"):
        ev.BayesianSpace(2).fit(X, None)
    with pytest.raises(ValueError, match="whitened already"):
        ev.Recognizer(2, method="bayesian", metric="mahalanobis").fit(X, y)
    space = ev.BayesianSpace(2).fit(X, y)
    with pytest.raises(ValueError, match=r"must be \(n, 24\)"):
        space.log_odds(np.zeros((3, 5)))


def test_bayesian_model_file_round_trip(tmp_path):
    X, y = _people(seed=4)
    rec = ev.Recognizer(3, method="bayesian").fit(X[::2], y[::2])
    path = ev.save(rec, tmp_path / "bayes.npz")
    loaded = ev.load(path)
    np.testing.assert_array_equal(loaded.predict(X[1::2]), rec.predict(X[1::2]))
    np.testing.assert_allclose(loaded.match_probability(X[1::2]), rec.match_probability(X[1::2]))
    broken = ev.load(path)
    broken.feature_.intra_variances_ = -broken.feature_.intra_variances_
    saved_unchecked(broken, tmp_path / "broken.npz")
    with pytest.raises(ev.ModelFileError, match="intra_variances_"):
        ev.load(tmp_path / "broken.npz")


def test_att_closed_set_bayesian_reaches_95_percent(att):
    """The issue's target: 1-5 / 6-10, settings by cross-validation on 1-5, no virtual views."""
    from eigenvision.experiments.open_set import chosen

    number = np.array([int(n.split("/")[1].split(".")[0]) for n in att.names])
    train, test = att[number <= 5], att[number > 5]
    bayesian, settings, _ = chosen("bayesian", train)
    eigenfaces, _, _ = chosen("eigenfaces", train)
    assert bayesian.jitter == 0 and not bayesian.mirror
    rate = bayesian.score(test, test.labels)
    assert rate >= 0.95, settings
    assert rate > eigenfaces.score(test, test.labels) + 0.03  # eigenfaces: 91.5%


def test_att_open_set_rank1_and_false_accepts(att):
    """People 1-20 enrolled, threshold at 1% on 21-30, tested on 31-40 (the issue's protocol),
    at the settings open_set's cross-validation chose for "bayesian + views"."""
    from eigenvision.experiments.open_set import att_groups, open_set

    person, image, faces = att_groups()
    enrol = (person <= 20) & (image <= 5)
    rec = ev.Recognizer(20, method="bayesian", metric="cosine", shape=(56, 46), jitter=1)
    rec.fit(faces[enrol])
    row = open_set(
        rec,
        faces[enrol],
        faces[(person > 20) & (person <= 30)],
        faces[(person <= 20) & (image > 5)],
        faces[person > 30],
    )
    assert row["rank1"] >= 0.97
    assert row["calibrated_far"] <= 0.05 and row["calibrated_tar"] >= 0.8
    eigenfaces = ev.Recognizer(40).fit(faces[enrol])
    baseline = open_set(
        eigenfaces,
        faces[enrol],
        faces[(person > 20) & (person <= 30)],
        faces[(person <= 20) & (image > 5)],
        faces[person > 30],
    )
    assert row["tar_at_far_0.01"] >= baseline["tar_at_far_0.01"] + 0.15


def test_pixels_constant_in_every_image_do_not_count_as_dimensions():
    """Regression: digits have always-blank corner pixels; the PCA step kept n - c = 64
    dimensions of which 3 had no variance, and rho averaged those zeros."""
    X, y = _people(n_people=6, per_person=20, seed=5)
    X = X.reshape(len(X), -1)
    X[:, :3] = 0.25  # constant pixels: the data span 37 of the 40 dimensions
    space = ev.BayesianSpace(n_components=30).fit(X, y)
    assert space.n_components_ == 37 and np.all(space.intra_variances_ > 0)
    assert np.isfinite(space.transform(X)).all()


def test_calibrated_probabilities_are_platt_scaled_cross_fitted_ratios():
    """Each half of the people is modelled alone and scores the other half's pairs; Platt's
    (a, b) on those ratios, refitted here with scikit-learn, give the probabilities."""
    from sklearn.linear_model import LogisticRegression

    X, y = _people(n_people=12, per_person=5, seed=6)
    space = ev.BayesianSpace(n_components=3).fit(X, y)
    ratios, same = [], []
    for half in (0, 1):
        fit, held = y % 2 != half, y % 2 == half
        model = ev.BayesianSpace(n_components=3, calibrate=False).fit(X[fit], y[fit])
        codes = model.transform(X[held])
        i, j = np.triu_indices(len(codes), 1)
        ratios.append(model.pairwise_log_odds(codes, codes)[i, j])
        same.append(y[held][i] == y[held][j])
    platt = LogisticRegression(class_weight="balanced").fit(
        np.concatenate(ratios)[:, None], np.concatenate(same)
    )
    np.testing.assert_allclose(space.calibration_, [platt.coef_[0, 0], platt.intercept_[0]])
    assert space.calibration_[0] > 0
    codes = space.transform(X[:6])
    odds = space.log_odds(codes[:3] - codes[3:])
    np.testing.assert_allclose(
        space.intra_probability(X[:3], X[3:6]),
        1 / (1 + np.exp(-(space.calibration_[0] * odds + space.calibration_[1]))),
    )
    with pytest.warns(UserWarning, match="uncalibrated"):
        ev.BayesianSpace(n_components=2).fit(*_people(n_people=6, seed=7))
