"""Fisher vectors of faces: local DAISY descriptors and their mixture's gradients."""

import numpy as np
import pytest
from skimage.feature import daisy
from sklearn.mixture import GaussianMixture

import eigenvision as ev
from eigenvision.descriptors import FisherVectors, local_daisy


@pytest.fixture(scope="module")
def encoder_and_crops():
    crops = np.random.default_rng(0).random((12, 40, 36))
    encoder = FisherVectors(n_clusters=3, n_components=6, scales=(1.0, 0.8), sample_size=2000)
    return encoder.fit(crops), crops


def test_local_daisy_is_scikit_images_dense_daisy_rooted_with_the_points_places(rng):
    """Each row: the square roots of scikit-image's DAISY at a grid point, then the point's
    x and y across the crop and its scale, times the location weight; the mirror image's
    points placed where they lie on the crop (x negated)."""
    image = rng.random((40, 36))
    rows = local_daisy(image, step=5, radius=8, scales=(1.0,), mirror=True, location_weight=2.0)
    options = dict(step=5, radius=8, rings=2, histograms=6, orientations=8, normalization="l1")
    plain, flipped = daisy(image, **options), daisy(image[:, ::-1], **options)
    p, q, width = plain.shape
    assert rows.shape == (2 * p * q, width + 3)
    np.testing.assert_allclose(
        rows[: p * q, :width], np.sqrt(plain.reshape(p * q, width)), atol=1e-6
    )
    np.testing.assert_allclose(
        rows[p * q :, :width], np.sqrt(flipped.reshape(p * q, width)), atol=1e-6
    )
    x = 2.0 * ((np.arange(q) + 0.5) / q - 0.5)
    np.testing.assert_allclose(rows[:q, width], x, atol=1e-6)
    np.testing.assert_allclose(rows[p * q : p * q + q, width], -x, atol=1e-6)
    np.testing.assert_allclose(rows[:, width + 2], 0.0)  # one scale: its mean


def test_posteriors_are_scikit_learns_for_the_same_mixture(encoder_and_crops, rng):
    encoder, _ = encoder_and_crops
    mixture = GaussianMixture(3, covariance_type="diag")
    mixture.weights_, mixture.means_ = encoder.weights_, encoder.means_
    mixture.covariances_ = encoder.variances_
    mixture.precisions_cholesky_ = 1.0 / np.sqrt(encoder.variances_)
    points = rng.normal(size=(50, encoder.means_.shape[1]))
    np.testing.assert_allclose(
        encoder.posteriors(points), mixture.predict_proba(points), rtol=1e-9, atol=1e-12
    )


def test_a_fisher_vector_is_the_gradient_of_its_points_log_likelihood_loop_by_loop(
    encoder_and_crops, rng
):
    """Perronnin et al. (2010): for each Gaussian k, the mean over the points of
    gamma_k (x - mu_k) / sigma_k / sqrt(w_k), then of gamma_k ((x - mu_k)^2 / sigma_k^2 - 1) /
    sqrt(2 w_k); signed square root, unit length."""
    encoder, _ = encoder_and_crops
    points = rng.normal(size=(30, encoder.means_.shape[1]))
    gamma = encoder.posteriors(points)
    means, deviations = [], []
    for k in range(3):
        mu, sigma, w = encoder.means_[k], np.sqrt(encoder.variances_[k]), encoder.weights_[k]
        u = sum(gamma[i, k] * (points[i] - mu) / sigma for i in range(30)) / (30 * np.sqrt(w))
        v = sum(gamma[i, k] * ((points[i] - mu) ** 2 / sigma**2 - 1) for i in range(30))
        means.append(u)
        deviations.append(v / (30 * np.sqrt(2 * w)))
    expected = np.concatenate(means + deviations)
    expected = np.sign(expected) * np.sqrt(np.abs(expected))
    expected /= np.linalg.norm(expected)
    np.testing.assert_allclose(encoder.encode_points(points), expected, atol=1e-12)


def test_transform_encodes_each_crop_and_survives_a_round_trip(encoder_and_crops, tmp_path):
    encoder, crops = encoder_and_crops
    vectors = encoder.transform(crops)
    assert vectors.shape == (12, 2 * 3 * (6 + 3)) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    one = encoder.encode_points(encoder._projected(encoder._local(crops[5])))
    np.testing.assert_allclose(vectors[5], one, rtol=1e-5, atol=1e-7)
    loaded = ev.load(ev.save(encoder, tmp_path / "fisher.npz"))
    np.testing.assert_array_equal(loaded.transform(crops[:2]), vectors[:2])


def test_fisher_vectors_tell_att_people_apart(att):
    """Nearest neighbour by the cosine of Fisher vectors (a mixture fitted on people 21-40
    alone) names AT&T's people 1-20 from images 1-5 better than the cosine of the pixels
    themselves (standardised): the encoding carries identity, not only texture."""
    person = np.array([int(label[1:]) for label in att.labels])
    image = np.array([int(name.split("/")[1].split(".")[0]) for name in att.names])
    crops = att.images[:, ::2, ::2]
    encoder = FisherVectors(n_clusters=16, n_components=24, sample_size=20_000)
    encoder.fit(crops[person > 20])
    gallery = (person <= 20) & (image <= 5)
    probes = (person <= 20) & (image > 5)
    similarity = encoder.transform(crops[probes]) @ encoder.transform(crops[gallery]).T
    named = person[gallery][similarity.argmax(axis=1)]
    pixels = crops.reshape(len(crops), -1)
    pixels = pixels - pixels.mean(axis=1, keepdims=True)
    pixels /= np.linalg.norm(pixels, axis=1, keepdims=True)
    by_pixels = person[gallery][(pixels[probes] @ pixels[gallery].T).argmax(axis=1)]
    assert np.mean(named == person[probes]) > np.mean(by_pixels == person[probes])


def test_fisher_vectors_refuse_what_they_cannot_encode(encoder_and_crops):
    encoder, _ = encoder_and_crops
    with pytest.raises(ev.NotFittedError):
        FisherVectors().transform(np.zeros((1, 40, 36)))
    with pytest.raises(ValueError, match="non-empty"):
        encoder.transform(np.zeros((0, 40, 36)))
    bad = np.zeros((1, 40, 36))
    bad[0, 3, 3] = np.nan
    with pytest.raises(ValueError, match="finite"):
        encoder.transform(bad)
    with pytest.raises(ValueError, match="too small for DAISY's radius 10 at scale 0.7"):
        FisherVectors(n_clusters=2, n_components=4).fit(np.zeros((3, 20, 20)))
    with pytest.raises(ValueError, match="cannot fit 4096 Gaussians"):
        FisherVectors(n_clusters=4096).fit(np.random.default_rng(0).random((1, 40, 36)))


def test_an_identity_model_with_a_fisher_description(att, tmp_path):
    """IdentityModel(descriptor=(..., "fisher")) fits its mixture on the crops it learns
    from, describes each crop by that Fisher vector beside the other descriptions (so the
    fused ratio adds a PLDA model of the vectors), tells AT&T people 31-40 apart, and is
    saved and loaded with its encoder; describing before fitting says what to do."""
    crops = att.images[:, ::2, ::2]
    people = np.unique(att.labels)
    train = np.isin(att.labels, people[:30])
    options = dict(shape=crops.shape[1:], pca_components=60, n_components=20, cohort_size=0)
    options["illumination"] = True
    model = ev.IdentityModel(descriptor=("lbp+hog", "fisher"), fisher_clusters=4, **options)
    with pytest.raises(ev.NotFittedError, match="'fisher' description is learned"):
        model.describe(crops[:2])
    model.fit(crops[train], att.labels[train])
    assert isinstance(model.fisher_, FisherVectors) and model.fisher_.n_clusters == 4
    described = model.describe(crops[~train][:3])
    np.testing.assert_allclose(
        described[:, -model.description_widths()[1] :],
        model.fisher_.transform(
            np.stack([ev.normalize.illumination(c) for c in crops[~train][:3]])
        ),
        atol=1e-6,
    )
    rows, cols = np.triu_indices(100, 1)
    labels = att.labels[~train]
    scores = model.pairwise_scores(crops[~train])[rows, cols]
    assert ev.evaluate.auc(*ev.evaluate.roc_curve(labels[rows] == labels[cols], scores)[:2]) > 0.95
    loaded = ev.load(ev.save(model, tmp_path / "identity.npz"))
    np.testing.assert_array_equal(
        loaded.pairwise_scores(crops[~train][:4]), model.pairwise_scores(crops[~train][:4])
    )
    plain = ev.IdentityModel(descriptor="lbp+hog", **options).fit(crops[train], att.labels[train])
    assert plain.fisher_ is None


def test_fit_draws_its_sample_crop_by_crop(monkeypatch):
    """Regression: fit kept every local descriptor of every crop before drawing its sample
    (hundreds of megabytes for a model's 600 crops); now each crop gives an equal share as it
    is described (at most ``sample_size / n`` each), and the mixture sees ``sample_size``."""
    from eigenvision import descriptors

    crops = np.random.default_rng(0).random((6, 40, 36))
    held, seen = [], []
    original = descriptors.run_on_row_parts

    def holding(*args):
        result = original(*args)
        held.append(len(result))
        return result

    class Recording(GaussianMixture):
        def fit(self, X, y=None):
            seen.append(X)
            return super().fit(X, y)

    monkeypatch.setattr(descriptors, "run_on_row_parts", holding)
    monkeypatch.setattr(descriptors, "GaussianMixture", Recording)
    per_crop = len(local_daisy(crops[0], scales=(1.0, 0.8)))
    FisherVectors(n_clusters=2, n_components=4, scales=(1.0, 0.8), sample_size=60).fit(crops)
    assert per_crop > 10 and held == [60]  # 10 of each crop's points, not 6 x per_crop
    points = seen[0]
    assert points.shape == (60, 4 + 3)


def test_fit_description_then_fit_descriptors_is_fit(att):
    """Describing a set once (``fit_description``, ``describe``) and fitting on its rows gives
    the model ``fit`` gives, to the digit."""
    crops = att.images[:120, ::2, ::2]
    options = dict(shape=crops.shape[1:], pca_components=30, n_components=10, cohort_size=0)
    options.update(descriptor=("lbp+hog", "fisher"), illumination=True, fisher_clusters=2)
    whole = ev.IdentityModel(**options).fit(crops, att.labels[:120])
    learnt = ev.IdentityModel(**options).fit_description(crops)
    parts = learnt.fit_descriptors(learnt.describe(crops), att.labels[:120])
    np.testing.assert_array_equal(parts.fisher_.means_, whole.fisher_.means_)
    np.testing.assert_array_equal(
        parts.pairwise_scores(crops[:6]), whole.pairwise_scores(crops[:6])
    )
    plain = ev.IdentityModel(**{**options, "descriptor": "lbp+hog"})
    assert plain.fit_description(crops) is plain and plain.fisher_ is None


def test_a_tampered_fisher_vectors_model_is_refused(encoder_and_crops):
    """What ``ev.load`` checks of a file's members beyond their declared shapes: the mixture
    must read the PCA's outputs and 3 more values, and its weights be a distribution."""
    import copy

    from eigenvision.validation import check_state

    encoder, _ = encoder_and_crops
    check_state(encoder)
    narrow = copy.copy(encoder)
    narrow.means_, narrow.variances_ = encoder.means_[:, :-1], encoder.variances_[:, :-1]
    with pytest.raises(ValueError, match="3 more"):
        check_state(narrow)
    skewed = copy.copy(encoder)
    skewed.weights_ = encoder.weights_ * 2
    with pytest.raises(ValueError, match="weights_ sum to 1"):
        check_state(skewed)
