"""Illumination normalisation, LBP and HOG descriptors, the identity model and compare_faces."""

import numpy as np
import pytest
from skimage.feature import daisy, hog, local_binary_pattern
from sklearn.base import clone
from sklearn.mixture import GaussianMixture

import eigenvision as ev
from eigenvision.descriptors import FisherVectors, face_descriptors, lbp_histograms, local_daisy
from eigenvision.identity.describe import FaceDescriber
from tests.conftest import UNLEARNT_DESCRIPTIONS


def test_illumination_ignores_gain_and_flattens_side_light(att):
    """Tan & Triggs' chain is invariant to a global gain (gamma, then ratios), and a face lit
    from one side comes out nearer its evenly lit self than it went in."""
    face = att.images[0].astype(np.float64)
    np.testing.assert_allclose(
        ev.normalize.illumination(0.3 * face), ev.normalize.illumination(face), atol=1e-9
    )
    ramp = np.linspace(0.15, 1.0, face.shape[1])[None, :]  # light from the right
    lit = face * ramp

    def gap(a, b):
        a, b = a - a.mean(), b - b.mean()
        return 1 - np.sum(a * b) / np.sqrt(np.sum(a * a) * np.sum(b * b))

    before = gap(lit, face)
    after = gap(ev.normalize.illumination(lit), ev.normalize.illumination(face))
    assert after < before / 2
    with pytest.raises(ValueError, match="0 < gamma <= 1"):
        ev.normalize.illumination(face, gamma=0)


def test_lbp_histograms_are_scikit_images_patterns_counted_cell_by_cell(rng):
    image = (rng.random((40, 32)) * 256).astype(np.uint8)
    image[0, 0], image[-1, -1] = 0, 255  # the full range: a float copy stretches to the same
    found = lbp_histograms(image, cells=(4, 4), radii=(1, 2), points=8)
    expected = []
    for radius in (1, 2):
        codes = local_binary_pattern(image, 8, radius, method="uniform")
        for r in range(4):
            for c in range(4):
                cell = codes[r * 10 : (r + 1) * 10, c * 8 : (c + 1) * 8]
                counts = np.histogram(cell, bins=np.arange(11) - 0.5)[0]
                expected.append(counts / counts.sum())
    np.testing.assert_allclose(found, np.concatenate(expected))
    # any increasing map of the grey levels gives the same patterns
    np.testing.assert_allclose(
        lbp_histograms(image / 255.0, cells=(4, 4)), lbp_histograms(image, cells=(4, 4))
    )


@pytest.mark.parametrize(
    "shape, cell, orientations, root",
    [
        ((32, 24), 8, 9, False),
        ((70, 61), 8, 9, False),
        ((64, 64), 6, 9, True),
        ((40, 44), 12, 6, False),
    ],
)
def test_hog_of_a_stack_is_scikit_images_image_by_image(rng, shape, cell, orientations, root):
    """Sides that are not whole cells, other bin counts, square roots; grey levels on the bins'
    edges (0 and 90 degrees) and flat images; to scikit-image's single-precision cell sums."""
    from eigenvision.descriptors import hog_descriptors

    images = rng.random((6, *shape))
    images[1] = np.round(images[1] * 3) / 3
    images[2] = 0.5
    images[3] = np.linspace(0, 1, shape[1])
    expected = [
        hog(
            image,
            orientations=orientations,
            pixels_per_cell=(cell, cell),
            cells_per_block=(2, 2),
            block_norm="L2-Hys",
            transform_sqrt=root,
        )
        for image in images
    ]
    got = hog_descriptors(images, cell=cell, orientations=orientations, transform_sqrt=root)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-7)
    assert hog_descriptors(images[:0], cell=cell, orientations=orientations).shape == (
        0,
        len(expected[0]),
    )


def test_hog_refuses_images_it_cannot_describe(rng):
    from eigenvision.descriptors import hog_descriptor, hog_descriptors

    with pytest.raises(ValueError, match="2 x 2 cells"):
        hog_descriptors(rng.random((2, 15, 40)), cell=8)
    with pytest.raises(ValueError, match=r"\(n, H, W\)"):
        hog_descriptors(rng.random((15, 40)))
    with pytest.raises(ValueError, match="grey"):
        hog_descriptor(rng.random((20, 20, 3)))


def test_hog_of_a_large_stack_makes_no_temporary_the_size_of_the_stack(rng):
    """Regression: hog_descriptors made its temporaries (about eight arrays the size of the whole
    stack in float64) for every image at once, and an identity model's fit describes thousands
    of crops in one call (HISTORY.md has the peak it cost). Its compiled passes now hold the
    cells' histograms (a third of the rows returned) and one image's gradients (numba's own
    allocations, which tracemalloc does not see); each row is the image's whatever the
    stack."""
    import tracemalloc

    from eigenvision import descriptors

    images = rng.random((400, 64, 48)).astype(np.float32)
    descriptors.hog_descriptors(images[:1], transform_sqrt=True)  # compiled before measuring
    tracemalloc.start()
    try:
        rows = descriptors.hog_descriptors(images, transform_sqrt=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(
        rows[7:14], descriptors.hog_descriptors(images[7:14], transform_sqrt=True)
    )
    # the rows returned (4.0 MB) and the cells' sums (1.4 MB), not the 400 images' temporaries
    # (each 9.8 MB)
    assert peak - rows.nbytes < 4 * 2**20, peak / 2**20


def test_face_descriptors_are_the_roots_of_scikit_images_histograms(rng):
    crops = rng.random((3, 32, 24))
    hogs = face_descriptors(crops, kind="hog")
    for crop, row in zip(crops, hogs, strict=True):
        reference = hog(crop, orientations=9, pixels_per_cell=(8, 8), cells_per_block=(2, 2))
        np.testing.assert_allclose(row, np.sqrt(reference))
    coarse = face_descriptors(crops, kind="hog", hog_cell=12)
    reference = hog(crops[0], orientations=9, pixels_per_cell=(12, 12), cells_per_block=(2, 2))
    np.testing.assert_allclose(coarse[0], np.sqrt(reference))
    lbp = face_descriptors(crops, kind="lbp", cells=(4, 3), radii=(1, 2, 3))
    np.testing.assert_allclose(
        lbp[0], np.sqrt(lbp_histograms(crops[0], cells=(4, 3), radii=(1, 2, 3)))
    )
    both = face_descriptors(crops, kind="lbp+hog")
    assert both.shape[1] == face_descriptors(crops, kind="lbp").shape[1] + hogs.shape[1]
    with pytest.raises(ValueError, match="kind must be one of"):
        face_descriptors(crops, kind="sift")


def test_daisy_descriptors_are_the_roots_of_scikit_images_dense_histograms(rng):
    """DAISY on a grid every 8 pixels, 15 from the border: 13 histograms of 8 orientations per
    point, together summing to 1, so the squares of their roots sum to 1 per point; the
    identity descriptor concatenates LBP, HOG and DAISY in that order."""
    crops = rng.random((2, 48, 40))
    rows = face_descriptors(crops, kind="daisy")
    reference = daisy(crops[1], step=8, radius=15, rings=2, histograms=6, orientations=8)
    np.testing.assert_allclose(rows[1], np.sqrt(reference.ravel()), rtol=1e-6)
    points = rows[0].astype(np.float64).reshape(-1, 13 * 8)
    assert len(points) == ((48 - 31) // 8 + 1) * ((40 - 31) // 8 + 1)
    np.testing.assert_allclose(np.sum(points**2, axis=1), 1, rtol=1e-5)
    every = face_descriptors(crops, kind="lbp+hog+daisy")
    np.testing.assert_array_equal(every, np.hstack([face_descriptors(crops, kind="lbp+hog"), rows]))


def test_describe_splits_many_crops_between_threads_and_gives_each_crops_own_rows(rng, monkeypatch):
    """From 16 crops on ``describe`` runs in parts on the threads (two here); every row is the
    one the crop gets described alone, and under 16 crops the calling thread does it all."""
    import eigenvision.descriptors as descriptors
    import eigenvision.identity.describe as describing

    model = ev.IdentityModel(
        FaceDescriber(
            shape=(40, 36),
            descriptor=("lbp+hog", "daisy"),
            illumination=(True, False),
            descriptor_scales=((1.0,), (1.0,)),
            lbp_cells=(2, 2),
            hog_cell=8,
        )
    )
    crops = rng.random((17, 40, 36))
    parts = []
    split = describing.run_on_row_parts

    def counted(function, n_rows, n_parts):
        parts.append(n_parts)
        return split(function, n_rows, n_parts)

    monkeypatch.setattr(describing, "run_on_row_parts", counted)
    monkeypatch.setattr(descriptors, "n_threads", lambda: 2)
    rows = model.describe(crops)
    alone = np.stack([model.describe(crop) for crop in crops[:, None]])[:, 0]
    np.testing.assert_array_equal(rows, alone)
    assert parts == [2] + [1] * len(crops)  # one crop: under a part's worth, on this thread
    model.describe(crops[:15])
    assert parts[-1] == 1


def test_the_identity_model_verifies_people_it_never_saw(att, tmp_path):
    """Fitted on AT&T people 1-30 (its calibration on a tenth of them), it tells same from
    different among people 31-40 with an AUC above 0.95 (PLDA's ratio, and the score
    normalised against its cohort); its probability rises with the score and its threshold is
    where the probability is one half; a pair's score is its entry of the pairwise scores."""
    people = np.unique(att.labels)
    train = np.isin(att.labels, people[:30])
    describer = FaceDescriber(shape=(112, 92), **UNLEARNT_DESCRIPTIONS)
    model = ev.IdentityModel(describer, pca_components=100, n_components=25)
    model.fit(att.images[train], att.labels[train])
    test_images, test_labels = att.images[~train], att.labels[~train]
    rows, cols = np.triu_indices(len(test_images), 1)
    llr = model.plda_.pairwise_scores(model.describe(test_images))[rows, cols]
    scores = model.pairwise_scores(test_images)
    same = test_labels[rows] == test_labels[cols]
    assert ev.evaluate.auc(*ev.evaluate.roc_curve(same, llr)[:2]) > 0.95
    assert ev.evaluate.auc(*ev.evaluate.roc_curve(same, scores[rows, cols])[:2]) > 0.95
    probability = model.probability(np.sort(scores[rows, cols]))
    assert np.all(np.diff(probability) >= 0)
    assert model.probability(model.threshold_) == pytest.approx(0.5)
    pair = model.score_pairs(test_images[:2], test_images[2:4])
    np.testing.assert_allclose(pair, [scores[0, 2], scores[1, 3]], rtol=1e-6)  # float32 rows
    loaded = ev.load(ev.save(model, tmp_path / "identity.npz"))
    np.testing.assert_array_equal(loaded.score_pairs(test_images[:2], test_images[2:4]), pair)
    expected = r"crops must be \(n, 112, 92\) grey or \(n, 112, 92, 3\) colour aligned faces"
    with pytest.raises(ValueError, match=expected):
        model.describe(np.zeros((2, 80, 64)))


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
    describer = FaceDescriber(
        shape=crops.shape[1:],
        descriptor=("lbp+hog", "fisher"),
        illumination=True,
        fisher_clusters=4,
    )
    model = ev.IdentityModel(describer, pca_components=60, n_components=20, cohort_size=0)
    with pytest.raises(ev.NotFittedError, match="'fisher' description is learned"):
        model.describe(crops[:2])
    model.fit(crops[train], att.labels[train])
    assert (
        isinstance(model.describer.fisher_, FisherVectors)
        and model.describer.fisher_.n_clusters == 4
    )
    described = model.describe(crops[~train][:3])
    np.testing.assert_allclose(
        described[:, -model.description_widths()[1] :],
        model.describer.fisher_.transform(
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
    plain = ev.IdentityModel(
        FaceDescriber(shape=crops.shape[1:], descriptor="lbp+hog", illumination=True),
        pca_components=60,
        n_components=20,
        cohort_size=0,
    ).fit(crops[train], att.labels[train])
    assert plain.describer.fisher_ is None


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
    options = dict(pca_components=30, n_components=10, cohort_size=0)
    description = dict(shape=crops.shape[1:], illumination=True, fisher_clusters=2)
    describer = FaceDescriber(descriptor=("lbp+hog", "fisher"), **description)
    whole = ev.IdentityModel(clone(describer), **options).fit(crops, att.labels[:120])
    learnt = ev.IdentityModel(clone(describer), **options).fit_description(crops)
    parts = learnt.fit_descriptors(learnt.describe(crops), att.labels[:120])
    np.testing.assert_array_equal(parts.describer.fisher_.means_, whole.describer.fisher_.means_)
    np.testing.assert_array_equal(
        parts.pairwise_scores(crops[:6]), whole.pairwise_scores(crops[:6])
    )
    plain = ev.IdentityModel(FaceDescriber(descriptor="lbp+hog", **description), **options)
    assert plain.fit_description(crops) is plain and plain.describer.fisher_ is None


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
