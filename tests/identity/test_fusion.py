"""PLDAFusion: the pair ratio less a weighed distance, calibrated by a logistic regression."""

import copy

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.identity import centred_on
from eigenvision.identity.describe import FaceDescriber


def _fused_model(rng, **options):
    """An IdentityModel with distance_fusion fitted on 128-d rows: 40 people, 5 faces each."""
    centres = rng.normal(size=(40, 128))
    X = np.repeat(centres, 5, axis=0) + 0.5 * rng.normal(size=(200, 128))
    labels = np.repeat(np.arange(40), 5)
    model = ev.IdentityModel(
        FaceDescriber(descriptor="deep", shape=(150, 150), illumination=False, mirror=False),
        pca_components=20,
        lda_components=None,
        n_components=5,
        calibration_share=0.3,
        cohort_size=30,
        cohort_top=5,
        distance_fusion=True,
        **options,
    )
    return model.fit_descriptors(X, labels), X, labels


def test_distance_fusion_scores_the_ratio_less_the_weighed_distance(rng, tmp_path):
    """With distance_fusion a pair's score is the model's normalised ratio less
    distance_weight_ times the Euclidean distance between the descriptions, normalised against
    the cohort's rows as the ratio is (a loop over the pairs and the cohort), the codes carry
    the descriptions after PLDA's, and a saved model scores alike."""
    model, X, _ = _fused_model(rng)
    weight = model.distance_weight_
    assert weight > 0
    ratio_only = copy.copy(model)
    ratio_only.distance_weight_ = None
    codes = model.encode_descriptors(X[:12])
    plda_codes = ratio_only.encode_descriptors(X[:12])
    np.testing.assert_array_equal(codes[:, -128:], X[:12])
    np.testing.assert_array_equal(codes[:, :-128], plda_codes)
    scores = model.pairwise_log_odds(codes, codes)
    cohort = model.cohort_rows_.astype(np.float64)
    assert cohort.shape == (len(model.cohort_coordinates_), 128)

    def statistics(x):  # the mean and spread of a face's 5 nearest cohort faces' distances
        nearest = sorted(np.linalg.norm(x - face) for face in cohort)[:5]
        return np.mean(nearest), np.std(nearest)

    for i in range(12):
        for j in range(12):
            expected = ratio_only.pairwise_log_odds(plda_codes[i : i + 1], plda_codes[j : j + 1])
            (mean_i, std_i), (mean_j, std_j) = statistics(X[i]), statistics(X[j])
            distance = np.linalg.norm(X[i] - X[j])
            normalised = ((distance - mean_i) / std_i + (distance - mean_j) / std_j) / 2
            expected = expected[0, 0] - weight * normalised
            assert scores[i, j] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(
        model.paired_log_odds(codes[:6], codes[6:]), np.diag(scores[:6, 6:]), rtol=1e-9
    )
    path = tmp_path / "fused.npz"
    ev.save(model, path)
    loaded = ev.load(path)
    np.testing.assert_allclose(loaded.pairwise_log_odds(codes, codes), scores, rtol=1e-12)
    # the distance does not move when the codes are centred on other faces
    moved = centred_on(model, codes=model.encode_descriptors(X[100:]))
    shifted = moved.pairwise_log_odds(codes, codes) - model.pairwise_log_odds(codes, codes)
    plain_shift = centred_on(ratio_only, codes=ratio_only.encode_descriptors(X[100:]))
    expected = plain_shift.pairwise_log_odds(plda_codes, plda_codes) - ratio_only.pairwise_log_odds(
        plda_codes, plda_codes
    )
    np.testing.assert_allclose(shifted, expected, atol=1e-9)


def test_distance_fusion_is_calibrated_by_a_logistic_regression_over_both_scores(rng):
    """The fused model's calibration is scikit-learn's logistic regression over (ratio,
    distance) of the held-out people's pairs: the same coefficients from the same pairs."""
    from sklearn.linear_model import LogisticRegression

    from eigenvision.identity.model import _calibration_pairs

    model, X, labels = _fused_model(rng)
    held = ~np.isin(labels, model.plda_.classes_)
    ratio_only = copy.copy(model)
    ratio_only.distance_weight_ = None
    scores, distances, same = _calibration_pairs(
        ratio_only, X[held], labels[held], np.random.default_rng(0), max_pairs=10_000
    )
    reference = LogisticRegression(C=1e6).fit(np.column_stack([scores, distances]), same)
    slope, weight = reference.coef_[0]
    # the pairs drawn differ from fit's (another draw), the model is the same: close, not equal
    assert model.distance_weight_ == pytest.approx(-weight / slope, rel=0.5)
    fused = model.calibration_[0] * (scores - model.distance_weight_ * distances)
    fused += model.calibration_[1]
    assert (
        np.mean((fused >= 0) == same)
        >= reference.score(np.column_stack([scores, distances]), same) - 0.02
    )


def test_the_fusions_logistic_regression_keeps_its_weights_non_negative(rng):
    """Where the unconstrained fit's weights are positive, _monotone_logistic is scikit-learn's
    logistic regression (balanced pairs, no penalty); where two scores are nearly collinear
    and the unconstrained fit weighs one against the other (a fold of LFW flipped the ratio's
    sign and accepted half the pairs), the weights stay at or above 0 and the fit is at least
    as good as either score alone."""
    from sklearn.linear_model import LogisticRegression

    from eigenvision.identity.model import _monotone_logistic

    same = np.repeat([True, False], 500)
    features = rng.normal(size=(1000, 2)) + np.where(same[:, None], [1.0, 0.5], [-1.0, -0.5])
    weights, intercept = _monotone_logistic(features, same)
    reference = LogisticRegression(C=1e8, tol=1e-10, max_iter=10_000).fit(features, same)
    np.testing.assert_allclose(weights, reference.coef_[0], rtol=1e-3)
    assert intercept == pytest.approx(reference.intercept_[0], abs=1e-3)
    strong = np.where(same, 2.0, -2.0) + rng.normal(size=1000)
    # the first score follows the second, less a part of the truth: given the second, it
    # speaks against the truth, and an unconstrained fit weighs it negatively
    collinear = np.column_stack(
        [strong - np.where(same, 1.0, -1.0) + 0.3 * rng.normal(size=1000), strong]
    )
    unconstrained = LogisticRegression(C=1e8, max_iter=10_000).fit(collinear, same).coef_[0]
    assert unconstrained[0] < 0  # the noisier copy weighed against the other
    weights, intercept = _monotone_logistic(collinear, same)
    assert np.all(weights > 0)
    accuracy = np.mean((collinear @ weights + intercept >= 0) == same)
    assert accuracy >= max(np.mean((column >= 0) == same) for column in collinear.T) - 0.01
