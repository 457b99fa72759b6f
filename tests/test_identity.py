"""PLDA and the Joint Bayesian model against brute-force Gaussian likelihoods."""

import copy

import numpy as np
import pytest
from scipy.linalg import block_diag
from scipy.stats import multivariate_normal
from sklearn.base import clone

import eigenvision as ev
from eigenvision.identity import centred_on, half_precision, log_likelihood, quantized

#: One description of a crop, one PLDA model: descriptor rows of any width fit.
ONE_DESCRIPTION = {"descriptor": "daisy", "illumination": True}


def _people(rng, n_people=30, per_person=4, d=6, identity_rank=3):
    """Codes drawn from the identity model: ``x = F h + e``, known ``S_b`` and ``S_w``."""
    loadings = rng.normal(size=(d, identity_rank))
    between = loadings @ loadings.T
    shape = rng.normal(size=(d, d)) * 0.5
    within = shape @ shape.T + 0.1 * np.eye(d)
    people = rng.multivariate_normal(np.zeros(d), between, size=n_people)
    noise = rng.multivariate_normal(np.zeros(d), within, size=n_people * per_person)
    X = np.repeat(people, per_person, axis=0) + noise
    return X, np.repeat(np.arange(n_people), per_person), between, within


def _stacked_pair_ratio(between, within, a, b):
    """``log N([a; b]; 0, [[T, S_b], [S_b, T]]) - log N([a; b]; 0, [[T, 0], [0, T]])`` of each
    pair (scipy), ``T = S_b + S_w``: the same-identity against the different-identity model."""
    total = between + within
    zero = np.zeros_like(total)
    same = multivariate_normal(
        np.zeros(2 * len(total)), np.block([[total, between], [between, total]])
    )
    apart = multivariate_normal(np.zeros(2 * len(total)), np.block([[total, zero], [zero, total]]))
    return [same.logpdf(np.r_[u, v]) - apart.logpdf(np.r_[u, v]) for u, v in zip(a, b, strict=True)]


MODELS = [
    ev.PLDA(n_components=3),
    ev.PLDA(n_components=3, length_norm=True),
    ev.PLDA(n_components=2, within_components=2, max_iter=60),
    ev.JointBayesian(),
]


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_the_pair_ratio_is_the_stacked_pairs_gaussian_likelihood_ratio(model, rng):
    """score_pairs against scipy: ``log N([a; b]; 0, [[T, S_b], [S_b, T]]) - log N([a; b];
    0, [[T, 0], [0, T]])`` with the fitted ``S_b = F F^T`` and ``S_w``."""
    X, y, _, _ = _people(rng)
    model = clone(model).fit(X, y)
    between = model.identity_loadings_ @ model.identity_loadings_.T
    a, b = model.encode(X[:8]), model.encode(X[8:16])
    brute = _stacked_pair_ratio(between, model.within_covariance_, a, b)
    np.testing.assert_allclose(model.score_pairs(X[:8], X[8:16]), brute, rtol=1e-10, atol=1e-9)
    matrix = model.pairwise_scores(X[:8], X[8:16])
    np.testing.assert_allclose(np.diag(matrix), brute, rtol=1e-10, atol=1e-9)
    square = model.pairwise_scores(X[:10])
    np.testing.assert_allclose(square, square.T, atol=1e-10)


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_em_never_lowers_the_marginal_likelihood_which_is_the_stacked_gaussians(model, rng):
    """The log-likelihood EM reports is each person's images stacked, ``N(0, I (x) S_w +
    1 1^T (x) S_b)``, summed (scipy); it never decreases from one iteration to the next."""
    X, y, _, _ = _people(rng, n_people=12, per_person=3)
    y[-2:] = [12, 13]  # two people with one image each
    model = clone(model).fit(X, y)
    history = np.array(model.log_likelihood_)
    assert len(history) >= 2
    assert np.all(np.diff(history) >= -1e-9 * np.abs(history[:-1]))
    between = model.identity_loadings_ @ model.identity_loadings_.T
    within = model.within_covariance_
    Z = model.encode(X)
    codes = np.unique(y, return_inverse=True)[1]
    brute = 0.0
    for person in np.unique(codes):
        stacked = Z[codes == person].ravel()
        n = int(np.sum(codes == person))
        covariance = np.kron(np.eye(n), within) + np.kron(np.ones((n, n)), between)
        brute += multivariate_normal(np.zeros(len(stacked)), covariance).logpdf(stacked)
    assert log_likelihood(Z, codes, between, within) == pytest.approx(brute, rel=1e-12)
    assert history[-1] == pytest.approx(brute, rel=1e-12)


def test_plda_recovers_the_covariances_it_was_drawn_from(rng):
    X, y, between, within = _people(rng, n_people=600, per_person=5, d=5, identity_rank=2)
    model = ev.PLDA(n_components=2).fit(X, y)
    rotation = model.pca_.components_.astype(np.float64)  # back from the PCA step's axes
    found_between = rotation.T @ model.identity_loadings_ @ model.identity_loadings_.T @ rotation
    found_within = rotation.T @ model.within_covariance_ @ rotation
    assert np.linalg.norm(found_between - between) < 0.1 * np.linalg.norm(between)
    assert np.linalg.norm(found_within - within) < 0.1 * np.linalg.norm(within)


def test_identity_models_are_estimators_that_save_and_refuse_bad_input(rng, tmp_path):
    X, y, _, _ = _people(rng)
    model = ev.PLDA(n_components=3).fit(X, y)
    assert model.transform(X).shape == (len(X), 3)
    loaded = ev.load(ev.save(model, tmp_path / "plda.npz"))
    np.testing.assert_array_equal(
        loaded.score_pairs(X[:5], X[5:10]), model.score_pairs(X[:5], X[5:10])
    )
    assert clone(ev.JointBayesian(pca_components=4)).get_params() == {
        "length_norm": False,
        "max_iter": 200,
        "pca_components": 4,
        "tol": 1e-7,
    }
    with pytest.raises(ValueError, match="more images .* than people"):
        ev.PLDA().fit(X[::4], y[::4])
    with pytest.raises(ValueError, match="n_components=9 exceeds"):
        ev.PLDA(n_components=9).fit(X, y)
    with pytest.raises(ValueError, match="PLDA.within_components must be an int"):
        ev.PLDA(within_components=0).fit(X, y)
    with pytest.raises(ValueError, match="pairs rows"):
        model.score_pairs(X[:3], X[:4])


def test_length_norm_is_plda_on_whitened_codes_of_one_length(rng, tmp_path):
    """``length_norm``: the codes are the PCA step's, whitened (numpy's eigh of the sample
    covariance), scaled to length ``sqrt(r)`` and centred again, compared as a plain PLDA
    fitted on those codes compares them (the model is the same up to a rotation of the code
    space); a code of zero length stays finite; the model saves and loads."""
    X, y, _, _ = _people(rng, n_people=40, d=5)
    X = X * rng.uniform(0.5, 3, size=len(X))[:, None]  # lengths that vary: heavy tails
    model = ev.PLDA(n_components=3, length_norm=True).fit(X, y)
    centred = X - X.mean(axis=0)
    variances, vectors = np.linalg.eigh(np.cov(centred, rowvar=False))
    whitened = centred @ vectors / np.sqrt(variances)
    expected = whitened * np.sqrt(5) / np.linalg.norm(whitened, axis=1, keepdims=True)
    expected -= expected.mean(axis=0)
    codes = model.encode(X)
    np.testing.assert_allclose(
        np.linalg.norm(codes + model.code_mean_, axis=1), np.sqrt(5), rtol=1e-12
    )
    np.testing.assert_allclose(codes @ codes.T, expected @ expected.T, rtol=1e-9, atol=1e-9)
    plain = ev.PLDA(n_components=3, tol=0, max_iter=500).fit(expected, y)
    normalised = ev.PLDA(n_components=3, length_norm=True, tol=0, max_iter=500).fit(X, y)
    np.testing.assert_allclose(
        normalised.score_pairs(X[:10], X[10:20]),
        plain.score_pairs(expected[:10], expected[10:20]),
        rtol=1e-6,
        atol=1e-6,
    )
    identity = normalised.transform(X)
    reference = plain.transform(expected)
    np.testing.assert_allclose(identity @ identity.T, reference @ reference.T, rtol=1e-6, atol=1e-6)
    assert np.isfinite(model.encode(X.mean(axis=0, keepdims=True))).all()
    loaded = ev.load(ev.save(model, tmp_path / "normalised.npz"))
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    np.testing.assert_array_equal(
        loaded.score_pairs(X[:4], X[4:8]), model.score_pairs(X[:4], X[4:8])
    )


def test_lda_step_is_plda_on_scikit_learns_discriminant_codes(rng, tmp_path):
    """``lda_components``: the model compares codes as a length-normalised PLDA fitted on
    scikit-learn's LDA codes (``LinearDiscriminantAnalysis(solver="svd")``) of the PCA
    step's whitened codes compares them: Fisher's directions, each of unit variance, then
    the length normalisation (PLDA is the same up to a rotation of the code space); the
    codes are ``lda_components`` wide, ``transform`` is the posterior mean through both
    steps, the model saves and loads, and a step wider than the people allow is refused."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    X, y, _, _ = _people(rng, n_people=40, d=8, identity_rank=4)
    X = X * rng.uniform(0.5, 3, size=len(X))[:, None]
    model = ev.PLDA(
        n_components=3, pca_components=7, lda_components=5, length_norm=True, tol=0, max_iter=500
    ).fit(X, y)
    whitened = ev.Eigenspace(7, whiten=True).fit(X).transform(X)
    discriminant = LinearDiscriminantAnalysis(n_components=5).fit(whitened, y).transform(whitened)
    reference = ev.PLDA(
        n_components=3, pca_components=5, length_norm=True, tol=0, max_iter=500
    ).fit(discriminant, y)
    np.testing.assert_allclose(
        model.score_pairs(X[:30], X[30:60]),
        reference.score_pairs(discriminant[:30], discriminant[30:60]),
        rtol=1e-6,
        atol=1e-6,
    )
    assert model.encode(X).shape == (len(X), 5) and model.lda_.shape == (7, 5)
    plain = ev.PLDA(n_components=3, pca_components=7, lda_components=5).fit(X, y)
    step = plain.pca_.transform(X).astype(np.float64) @ plain.lda_
    np.testing.assert_allclose(
        plain.transform(X), (step - step.mean(axis=0)) @ plain._posterior().T, atol=1e-9
    )
    loaded = ev.load(ev.save(model, tmp_path / "lda.npz"))
    np.testing.assert_array_equal(
        loaded.score_pairs(X[:4], X[4:8]), model.score_pairs(X[:4], X[4:8])
    )
    with pytest.raises(ValueError, match="lda_components=40 exceeds min"):
        ev.PLDA(pca_components=7, lda_components=40).fit(X, y)
    with pytest.raises(ValueError, match="n_components=6 exceeds the LDA step's 5 dimensions"):
        ev.PLDA(n_components=6, pca_components=7, lda_components=5).fit(X, y)


@pytest.mark.parametrize(
    "model",
    [
        ev.PLDA(n_components=3, pca_components=30, lda_components=5, length_norm=True),
        ev.PLDA(n_components=3, pca_components=12),
        ev.JointBayesian(pca_components=10, length_norm=True),
    ],
    ids=["lda+length_norm", "pca", "joint_bayesian"],
)
def test_a_compact_plda_scores_as_fitted_from_one_map(rng, tmp_path, model):
    """``compact()`` replaces the PCA (and LDA) step by their product ``step_``: the codes,
    the transform and the pair scores are the fitted model's; the step is checked against
    the two steps by hand; the file is smaller, loads and scores the same; a compact model
    is returned as it is, and a file with both forms, or neither, is refused."""
    X, y, _, _ = _people(rng, n_people=40, d=60, identity_rank=4)
    fitted = clone(model).fit(X, y)
    compact = fitted.compact()
    assert compact.pca_ is None and compact.lda_ is None and fitted.pca_ is not None
    by_hand = fitted.pca_.components_ / np.sqrt(fitted.pca_.explained_variance_)[:, None]
    if not fitted.pca_.whiten:
        by_hand = fitted.pca_.components_
    if fitted.lda_ is not None:
        by_hand = fitted.lda_.T @ by_hand
    np.testing.assert_allclose(compact.step_, by_hand, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compact.encode(X), fitted.encode(X), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(compact.transform(X), fitted.transform(X), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        compact.score_pairs(X[:40], X[40:80]),
        fitted.score_pairs(X[:40], X[40:80]),
        rtol=1e-9,
        atol=1e-9,
    )
    small = ev.save(compact, tmp_path / "compact.npz")
    large = ev.save(fitted, tmp_path / "fitted.npz")
    if fitted.lda_ is not None:  # s x d components against r x d
        assert small.stat().st_size < large.stat().st_size
    loaded = ev.load(small)
    np.testing.assert_array_equal(loaded.encode(X[:5]), compact.encode(X[:5]))
    assert compact.compact().step_ is compact.step_
    both = compact.compact()
    both.pca_ = fitted.pca_
    with pytest.raises(ValueError, match="holds both"):
        ev.load(ev.save(both, tmp_path / "both.npz"))
    neither = compact.compact()
    neither.step_ = None
    with pytest.raises(ValueError, match="holds neither"):
        ev.load(ev.save(neither, tmp_path / "neither.npz"))
    with pytest.raises(ValueError, match="X has 5 features"):
        compact.encode(X[:, :5])


def test_plda_saves_without_its_transform_map_and_reads_files_that_hold_it(rng, tmp_path):
    """``components_`` (as large as the PCA step) is made on demand from the loadings, not
    saved: the file holds no such member, the map made after loading equals the one fit made
    (the posterior mean of the identity variable, checked by hand), and a file written
    before (the member saved) loads to the same transform."""
    import zipfile

    from conftest import written_in_format

    X, y, _, _ = _people(rng)
    model = ev.PLDA(n_components=3).fit(X, y)
    F, within = model.identity_loadings_, model.within_covariance_
    posterior = np.linalg.inv(np.eye(3) + F.T @ np.linalg.inv(within) @ F) @ F.T
    posterior = posterior @ np.linalg.inv(within)
    expected = posterior @ model.pca_.components_
    np.testing.assert_allclose(model.components_, expected, rtol=1e-9, atol=1e-12)
    path = ev.save(model, tmp_path / "plda.npz")

    def own_map(name):
        return "components_" in name and "pca_" not in name

    assert not [name for name in zipfile.ZipFile(path).namelist() if own_map(name)]
    loaded = ev.load(path)
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    older = clone(model).fit(X, y)
    older.__dict__["components_"] = older.components_  # saved as a member, as files were
    former_path = written_in_format(ev.save(older, tmp_path / "former.npz"), 1)
    assert [name for name in zipfile.ZipFile(former_path).namelist() if own_map(name)]
    former = ev.load(former_path)  # the member dropped on reading (_migrations.DERIVED)
    np.testing.assert_array_equal(former.components_, model.components_)
    np.testing.assert_array_equal(former.transform(X), model.transform(X))


def test_identity_on_att_people_never_seen(att):
    """Trained on AT&T people 1-20, PLDA tells same from different on people 21-40 (every pair
    of their 200 images) better than the Euclidean distance between eigenface codes."""
    names = np.unique(att.labels)
    train = np.isin(att.labels, names[:20])
    X = att.images.reshape(len(att.images), -1)
    rows, cols = np.triu_indices(int((~train).sum()), 1)
    same = att.labels[~train][rows] == att.labels[~train][cols]
    plda = ev.PLDA(n_components=19, pca_components=60).fit(X[train], att.labels[train])
    scores = plda.pairwise_scores(X[~train])[rows, cols]
    codes = ev.Eigenspace(60).fit(X[train]).transform(X[~train])
    distances = np.linalg.norm(codes[rows] - codes[cols], axis=1)
    auc = {
        name: ev.evaluate.auc(*ev.evaluate.roc_curve(same, value)[:2])
        for name, value in (("plda", scores), ("eigenfaces", -distances))
    }
    assert auc["plda"] > auc["eigenfaces"] > 0.9


def test_mirror_describes_a_face_by_the_mean_of_it_and_its_mirror_image(rng, tmp_path):
    """IdentityModel(mirror=True) describes each crop by the mean of its descriptors and its
    mirror image's, with its own LBP grid, radii and HOG cell; a model file from before those
    parameters keeps its behaviour (no mirror, an 8 x 8 grid, radii 1 and 2, 8-pixel cells)."""
    import json

    from eigenvision.descriptors import face_descriptors
    from eigenvision.normalize import illumination

    crops = rng.random((3, 120, 104))
    lit = np.stack([illumination(crop) for crop in crops])
    options = {"kind": "daisy", "cells": (10, 8), "radii": (1, 2, 3), "hog_cell": 12}
    plain = face_descriptors(lit, **options)
    flipped = face_descriptors(lit[:, :, ::-1], **options)
    whole = ev.IdentityModel(descriptor="daisy", descriptor_scales=(1.0,), illumination=True)
    np.testing.assert_allclose(whole.describe(crops), (plain + flipped) / 2)
    whole.set_params(mirror=False)
    np.testing.assert_array_equal(whole.describe(crops), plain)
    people = np.repeat(np.arange(12), 3)
    model = ev.IdentityModel(
        descriptor="lbp+hog", mirror=False, illumination=True, pca_components=20, n_components=5
    )
    model.fit_descriptors(rng.random((36, 30)), people)
    path = ev.save(model, tmp_path / "old.npz")
    with np.load(path, allow_pickle=False) as archive:
        stored = {key: archive[key] for key in archive.files}
    header = json.loads(bytes(stored["__header__"]).decode())
    for added in ("mirror", "lbp_cells", "lbp_radii", "hog_cell", "descriptor_scales"):
        header["model"]["params"].pop(added)
    header["model"]["params"].update(shape=[80, 64], eye_positions=[[0.3, 0.4], [0.7, 0.4]])
    header["format_version"] = 1  # written before these parameters existed
    stored["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **stored)
    old = ev.load(path)
    assert old.mirror is False
    small = rng.random((2, 80, 64))
    np.testing.assert_array_equal(
        old.describe(small),
        face_descriptors(np.stack([illumination(crop) for crop in small]), kind="lbp+hog"),
    )


def test_descriptor_scales_describe_the_crop_rescaled_and_concatenate(rng):
    """IdentityModel(descriptor_scales=...) describes the normalised crop rescaled by each
    scale (scikit-image's rescale, anti-aliased), mirror means per scale, side by side."""
    from skimage.transform import rescale

    from eigenvision.descriptors import daisy_descriptor
    from eigenvision.normalize import illumination

    crops = rng.random((2, 120, 104))
    model = ev.IdentityModel(descriptor="daisy", descriptor_scales=(0.7, 1.0), illumination=True)
    expected = []
    for crop in crops:
        row = []
        for scale in (0.7, 1.0):
            lit = rescale(illumination(crop), scale, order=1, anti_aliasing=True)
            assert lit.shape == (round(120 * scale), round(104 * scale))
            plain, flipped = daisy_descriptor(lit), daisy_descriptor(lit[:, ::-1])
            row.append((np.sqrt(plain) + np.sqrt(flipped)) / 2)
        expected.append(np.concatenate(row))
    described = model.describe(crops)
    assert described.shape == (2, 42 * 104 + 120 * 104)  # 7 x 6 and 12 x 10 DAISY points
    np.testing.assert_allclose(described, expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="descriptor_scales"):
        ev.IdentityModel(descriptor_scales=(0.0,)).fit(crops, [0, 1])


def test_descriptions_pair_descriptors_illumination_and_scales_item_by_item():
    """descriptor, illumination and descriptor_scales pair item by item; "both" doubles each
    descriptor; the default describes DAISY normalised and not at 0.7 of the crop, LBP + HOG
    of the normalised crop at full size and the normalised crop's Fisher vector, side by
    side."""
    crops = np.random.default_rng(1).random((2, 120, 104))
    model = ev.IdentityModel(fisher_clusters=2)
    assert model.descriptions() == [
        ("daisy", True, (0.7,)),
        ("daisy", False, (0.7,)),
        ("lbp+hog", True, (1.0,)),
        ("fisher", True, (1.0,)),
    ]
    model.fit_description(crops)
    blocks = []
    for kind, lit, scales in model.descriptions():
        alone = ev.IdentityModel(descriptor=kind, illumination=lit, descriptor_scales=scales)
        alone.fisher_ = model.fisher_
        blocks.append(alone.describe(crops))
    np.testing.assert_array_equal(model.describe(crops), np.hstack(blocks))
    assert model.description_widths() == [block.shape[1] for block in blocks]
    both = ev.IdentityModel(descriptor="daisy", illumination="both", descriptor_scales=(0.7, 1.0))
    assert both.descriptions() == [("daisy", True, (0.7, 1.0)), ("daisy", False, (0.7, 1.0))]
    assert ev.IdentityModel(
        descriptor=("lbp", "hog"), illumination=False, descriptor_scales=((1.0,), (0.5, 1.0))
    ).descriptions() == [("lbp", False, (1.0,)), ("hog", False, (0.5, 1.0))]
    with pytest.raises(ValueError, match="illumination must pair.*one item per descriptor"):
        ev.IdentityModel(descriptor=("lbp", "hog"), illumination=(True,) * 3).descriptions()
    # three descriptors beside the four-item default illumination: the message says the fix
    with pytest.raises(ValueError, match="got 4 items for 3 descriptors; give it one item"):
        ev.IdentityModel(descriptor=("daisy", "daisy", "lbp+hog")).descriptions()
    # Regression: illumination=True, the former way to ask for one normalised description,
    # described DAISY twice with the three-description default (its evidence counted twice)
    with pytest.raises(ValueError, match=r"description \('daisy', True, \(0.7,\)\) comes twice"):
        ev.IdentityModel(illumination=True).descriptions()
    with pytest.raises(ValueError, match="comes twice"):
        ev.IdentityModel(descriptor="hog", illumination=(True, True)).fit(crops, [0, 1])
    with pytest.raises(ValueError, match="descriptor_scales must pair with the descriptions"):
        ev.IdentityModel(descriptor_scales=((0.7,), (1.0,))).descriptions()
    with pytest.raises(ValueError, match="IdentityModel.descriptor must be one of"):
        ev.IdentityModel(descriptor=("daisy", "sift")).fit_descriptors(np.zeros((8, 4)), [0] * 8)


def _two_descriptions(**options):
    """An identity model of two small descriptions of 24 x 24 crops: pixels, and LBP of the
    normalised crop (576 and 40 columns)."""
    return ev.IdentityModel(
        shape=(24, 24),
        descriptor=("pixels", "lbp"),
        illumination=(False, True),
        lbp_cells=(2, 2),
        lbp_radii=(1,),
        descriptor_scales=(1.0,),
        mirror=False,
        **options,
    )


def test_descriptions_are_plda_models_whose_ratios_add(rng, tmp_path):
    """Several descriptions give a PLDAFusion of blocks as wide as describe's; its ratio is the
    stacked pair's Gaussian likelihood ratio (scipy) of the joint model whose blocks are
    independent: block-diagonal S_b and S_w from the blocks' PLDAs."""
    model = _two_descriptions(pca_components=4, n_components=2, cohort_size=0)
    widths = model.description_widths()
    assert widths == [24 * 24, 2 * 2 * 10]  # pixels; uniform LBP histograms of 8 neighbours
    X, y, _, _ = _people(rng, d=sum(widths))
    with pytest.raises(ValueError, match=r"2 descriptions \[576, 40\] wide"):
        model.fit_descriptors(X[:, :-1], y)
    model.fit_descriptors(X, y)
    fused = model.plda_
    assert isinstance(fused, ev.PLDAFusion) and fused.widths == (576, 40)
    blocks = list(fused.models_.values())
    between = [part.identity_loadings_ @ part.identity_loadings_.T for part in blocks]
    within = [part.within_covariance_ for part in blocks]
    a, b = fused.encode(X[:6]), fused.encode(X[6:12])
    assert a.shape == (6, 8)
    np.testing.assert_allclose(a[:, 4:], blocks[1].encode(X[:6, 576:]))
    brute = _stacked_pair_ratio(block_diag(*between), block_diag(*within), a, b)
    np.testing.assert_allclose(fused.paired_log_odds(a, b), brute, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.diag(fused.pairwise_log_odds(a, b)), brute, rtol=1e-9)
    loaded = ev.load(ev.save(model, tmp_path / "two.npz"))
    np.testing.assert_array_equal(loaded.plda_.encode(X[:3]), fused.encode(X[:3]))
    with pytest.raises(ValueError, match="columns wide"):
        fused.encode(X[:3, :-1])
    loaded.plda_.models_["block1"] = loaded.plda_.models_["block0"].fit(X[:, :4], y)
    with pytest.raises(ValueError, match="widths say"):
        ev.validation.check_state(loaded)
    loaded.plda_ = blocks[0]
    with pytest.raises(ValueError, match="needs a PLDAFusion of 2 descriptions"):
        ev.validation.check_state(loaded)
    loaded.set_params(descriptor="pixels", illumination=True)
    ev.validation.check_state(loaded)  # one description, one PLDA


def test_identity_model_lda_step_in_every_description(rng, tmp_path):
    """``IdentityModel(lda_components=)`` gives each description's PLDA the LDA step: codes
    (and the cohort's) as wide as the steps together, each block as its own PLDA with the
    same step; the saved model scores as fitted."""
    model = _two_descriptions(
        pca_components=6, lda_components=4, n_components=2, cohort_size=20, cohort_top=5
    )
    X, y, _, _ = _people(rng, n_people=40, d=sum(model.description_widths()))
    model.fit_descriptors(X, y)
    blocks = list(model.plda_.models_.values())
    assert [part.step_.shape for part in blocks] == [(4, 576), (4, X.shape[1] - 576)]
    assert model.plda_.encode(X[:5]).shape == (5, 8)
    assert model.cohort_coordinates_.shape == (20, 4)  # the blocks' identity ranks together
    alone = ev.PLDA(n_components=2, pca_components=6, lda_components=4, length_norm=True)
    held = np.isin(y, np.unique(y)[np.isin(np.unique(y), blocks[1].classes_)])
    alone.fit(X[held, 576:], y[held])
    np.testing.assert_allclose(blocks[1].encode(X[:5, 576:]), alone.encode(X[:5, 576:]))
    loaded = ev.load(ev.save(model, tmp_path / "lda.npz"))
    codes = model.plda_.encode(X[:6])
    np.testing.assert_array_equal(
        loaded.pairwise_log_odds(codes, codes), model.pairwise_log_odds(codes, codes)
    )


def test_adaptive_symmetric_normalisation_against_a_brute_force_loop(rng):
    """IdentityModel(cohort_size=c, cohort_top=k): a pair's ratio s becomes ((s - mu_a) /
    sigma_a + (s - mu_b) / sigma_b) / 2, mu and sigma over each face's k best ratios against a
    cohort of c faces of distinct training people (Matějka et al. 2017); checked pair by pair
    with PLDA's own ratio and Python's sort."""
    X, labels, _, _ = _people(rng, n_people=40, per_person=4)
    model = ev.IdentityModel(
        **ONE_DESCRIPTION, pca_components=6, n_components=3, cohort_size=15, cohort_top=5
    )
    model.fit_descriptors(X, labels)
    codes = model.plda_.encode(X)
    cohort = model.cohort_coordinates_  # float32, in PLDA's pair coordinates
    assert cohort.shape == (15, 3)
    coordinates = model.plda_.pair_coordinates(codes)
    members = np.abs(coordinates[:, None, :] - cohort[None]).max(axis=2).argmin(axis=0)
    np.testing.assert_allclose(coordinates[members], cohort, rtol=1e-6, atol=1e-6)
    assert len(set(labels[members])) == 15  # one face each of 15 people

    def statistics(code):
        # the ratio of the code and each member's code: the coordinates checked with it
        ratios = [
            model.plda_.paired_log_odds(code[None], codes[member][None])[0] for member in members
        ]
        best = sorted(ratios, reverse=True)[:5]
        return np.mean(best), np.std(best)

    a, b = codes[:4], codes[10:13]
    expected = np.empty((4, 3))
    for i in range(4):
        for j in range(3):
            raw = model.plda_.paired_log_odds(a[i][None], b[j][None])[0]
            (mean_a, std_a), (mean_b, std_b) = statistics(a[i]), statistics(b[j])
            expected[i, j] = ((raw - mean_a) / std_a + (raw - mean_b) / std_b) / 2
    # the cohort's coordinates are float32: its statistics within their round-off
    np.testing.assert_allclose(model.pairwise_log_odds(a, b), expected, rtol=1e-5)
    np.testing.assert_allclose(model.paired_log_odds(a[:3], b), np.diag(expected), rtol=1e-5)
    np.testing.assert_allclose(model.paired_log_odds(b, a[:3]), np.diag(expected), rtol=1e-5)
    assert model.probability(model.threshold_) == pytest.approx(0.5)
    raw = ev.IdentityModel(**ONE_DESCRIPTION, pca_components=6, n_components=3, cohort_size=0)
    raw.fit_descriptors(X, labels)
    assert raw.cohort_coordinates_ is None
    np.testing.assert_array_equal(raw.pairwise_log_odds(a, b), raw.plda_.pairwise_log_odds(a, b))


def test_an_identity_model_file_from_before_the_cohort_scores_raw_ratios(rng, tmp_path):
    """Files without ``cohort_size`` (or ``length_norm``, ``lda_components``) load as written
    (raw ratios, no LDA step); a cohort of codes of another width is refused."""
    import json

    X, labels, _, _ = _people(rng, n_people=20, per_person=3)
    model = ev.IdentityModel(**ONE_DESCRIPTION, pca_components=6, n_components=3, cohort_size=0)
    path = ev.save(model.fit_descriptors(X, labels), tmp_path / "old.npz")
    with np.load(path, allow_pickle=False) as archive:
        stored = {key: archive[key] for key in archive.files}
    header = json.loads(bytes(stored["__header__"]).decode())
    for added in ("cohort_size", "cohort_top", "length_norm", "lda_components"):
        header["model"]["params"].pop(added)
    header["format_version"] = 1  # a file from before: the format its parameters had
    stored["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **stored)
    old = ev.load(path)
    assert old.cohort_size == 0 and old.cohort_coordinates_ is None
    assert old.length_norm is False and ev.IdentityModel().length_norm is True
    assert old.lda_components is None and ev.IdentityModel().lda_components == 200
    codes = old.plda_.encode(X[:5])
    np.testing.assert_array_equal(
        old.pairwise_log_odds(codes, codes), old.plda_.pairwise_log_odds(codes, codes)
    )
    normalised = ev.IdentityModel(
        **ONE_DESCRIPTION, pca_components=6, n_components=3, cohort_size=8
    )
    normalised.fit_descriptors(X, labels).cohort_coordinates_ = np.zeros((8, 4))
    with pytest.raises(ValueError, match="cohort_coordinates_ must hold pair coordinates"):
        ev.validation.check_state(normalised)


def test_an_identity_model_file_whose_cohort_is_codes_is_refused_with_the_fix(rng, tmp_path):
    """Issue 77: files written before ``cohort_coordinates_`` hold the cohort's codes
    (``cohort_``), which runtime code read through a branch of its own; such a (format 1)
    file is refused, naming what to do, and no model has a ``cohort_`` any more."""
    from conftest import written_in_format

    X, labels, _, _ = _people(rng, n_people=30, per_person=3)
    model = ev.IdentityModel(
        **ONE_DESCRIPTION, pca_components=6, n_components=3, cohort_size=10, cohort_top=4
    ).fit_descriptors(X, labels)
    assert not hasattr(model, "cohort_")
    old = copy.copy(model)
    old.cohort_, old.cohort_coordinates_ = model.plda_.encode(X[::9]), None  # as files held it
    path = written_in_format(ev.save(old, tmp_path / "old.npz"), 1)
    with pytest.raises(ev.ModelFileError, match="cohort in pair coordinates; train the model"):
        ev.load(path)


def test_a_large_sets_pair_scores_need_no_temporary_as_large_as_themselves(rng, monkeypatch):
    """Scoring every pair of a large set (``cluster_faces`` of thousands of faces) made
    several matrices as large as the scores at once (each description's scores, their sum
    and the normalisation's temporaries; CHANGELOG has the measured peaks). The scores now
    equal the formula's (PLDA's ratio summed over the descriptions, normalised
    against the cohort), the cross term a block of rows at a time and the rest in place; the
    memory Python allocates meanwhile (tracemalloc) stays under 2.5 times the result's."""
    import tracemalloc

    from eigenvision import identity

    model = _two_descriptions(pca_components=4, n_components=2, cohort_size=20, cohort_top=5)
    X, y, _, _ = _people(rng, n_people=40, d=sum(model.description_widths()))
    model.fit_descriptors(X, y)
    for module in (identity.plda, identity.model):  # many blocks in a small set
        monkeypatch.setattr(module, "_BLOCK_ROWS", 64)
    codes = model.plda_.encode(np.repeat(X, 5, axis=0) + rng.normal(size=(800, X.shape[1])))
    blocks = list(model.plda_.models_.values())
    raw = 0.0
    for part, columns in zip(blocks, (slice(0, 4), slice(4, None)), strict=True):
        a = codes[:, columns]
        own = np.einsum("ij,jk,ik->i", a, part.quadratic_, a)
        raw = raw + own[:, None] + own[None, :] + a @ part.cross_ @ a.T + part.offset_
    mean, std = model.cohort_statistics(codes)
    expected = ((raw - mean[:, None]) / std[:, None] + (raw - mean) / std) / 2
    tracemalloc.start()
    try:
        scores = model.pairwise_log_odds(codes, codes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(scores, expected, rtol=1e-10, atol=1e-10)
    assert peak < 2.5 * scores.nbytes


def test_many_crops_are_encoded_a_block_at_a_time(rng, monkeypatch):
    """IdentityModel.encode described every crop before encoding any, and the descriptions
    are many times the crops' size (CHANGELOG has the measured sizes). A block of crops at a
    time, the codes equal those of the crops encoded one by one, and the memory allocated
    meanwhile (tracemalloc) stays under half of what describing them all at once allocates;
    a single crop and a stack of the wrong shape are answered as before."""
    import tracemalloc

    from eigenvision import identity

    model = _two_descriptions(pca_components=4, n_components=2, cohort_size=0)
    X, y, _, _ = _people(rng, n_people=30, d=sum(model.description_widths()))
    model.fit_descriptors(X, y)
    crops = rng.uniform(0, 255, size=(300, 24, 24))
    one_by_one = np.concatenate([model.encode(crop[None]) for crop in crops])
    tracemalloc.start()
    try:
        model.describe(crops)
        described = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    monkeypatch.setattr(identity.model, "_CROPS_AT_ONCE", 32)
    tracemalloc.start()
    try:
        codes = model.encode(crops)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(codes, one_by_one, rtol=1e-12, atol=1e-12)
    assert peak < described / 2
    np.testing.assert_allclose(model.encode(crops[0]), one_by_one[:1], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="aligned faces"):
        model.encode(crops[:, :20])


def test_describing_crops_keeps_no_reference_to_them(rng):
    """``describe`` leaves nothing that holds the crops or their normalised and rescaled copies
    once it returns (a self-calling closure made a reference cycle that held them until the
    garbage collector ran): with the collector off, they are freed at once."""
    import gc
    import weakref

    model = ev.IdentityModel(
        shape=(24, 24), descriptor="lbp", illumination=True, descriptor_scales=(0.7,), mirror=True
    )
    crops = rng.random((3, 24, 24))
    held = weakref.ref(crops)
    enabled = gc.isenabled()
    gc.disable()
    try:
        assert model.describe(crops).shape[0] == 3
        del crops
        assert held() is None
    finally:
        if enabled:
            gc.enable()


def test_a_saved_model_scores_in_its_own_pair_basis_whatever_the_eigensolver_gives(
    rng, tmp_path, monkeypatch
):
    """The cohort is kept in pair coordinates, so the basis they are in is kept with the model
    (``pair_basis_``): a model read where the eigensolver gives its vectors other signs (BLAS
    builds and thread counts do) scores as it did where it was saved."""
    from eigenvision import identity

    X, labels, _, _ = _people(rng, n_people=30, per_person=3)
    model = ev.IdentityModel(
        **ONE_DESCRIPTION, pca_components=6, n_components=3, cohort_size=10, cohort_top=4
    ).fit_descriptors(X, labels)
    codes = model.plda_.encode(X[:9])
    expected = model.pairwise_log_odds(codes, codes)
    path = ev.save(model, tmp_path / "model.npz")
    eigh = identity.plda.linalg.eigh

    def other_signs(*args, **kwargs):
        values, vectors = eigh(*args, **kwargs)
        return values, vectors * np.where(np.arange(vectors.shape[1]) % 2, -1.0, 1.0)

    monkeypatch.setattr(identity.plda.linalg, "eigh", other_signs)
    loaded = ev.load(path)
    np.testing.assert_allclose(loaded.pairwise_log_odds(codes, codes), expected, rtol=1e-12)
    np.testing.assert_array_equal(loaded.plda_.pair_basis_, model.plda_.pair_basis_)


def test_a_pair_basis_that_does_not_diagonalise_the_covariances_is_refused(rng, tmp_path):
    """``pair_basis_`` is read, not solved again, when a model is loaded: a basis of the right
    shape whose coordinates are not the covariances' (another model's, or tampered) would
    score every pair wrongly, so it is refused by name; the model's own passes."""
    from eigenvision.validation import check_state

    X, labels, _, _ = _people(rng, n_people=20, per_person=3)
    model = ev.PLDA(n_components=3).fit(X, labels)
    check_state(model)
    model.pair_basis_ = model.pair_basis_ * 1.01  # V^T S_w V = 1.02 I
    with pytest.raises(ValueError, match="pair_basis_ does not make its covariances diagonal"):
        check_state(model)
    model.pair_basis_ = model.pair_basis_[:, ::-1] / 1.01  # another order: still diagonal
    check_state(model)
    rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    model.pair_basis_ = model.pair_basis_ @ rotation  # V^T S_w V = I, V^T S_b V not diagonal
    with pytest.raises(ev.ModelFileError, match="pair_basis_"):
        ev.load(ev.save(model, tmp_path / "rotated.npz"))


def test_half_precision_rounds_the_large_maps_and_scores_as_rounded(rng, tmp_path):
    """``half_precision`` keeps each description's map and the cohort in float16 and drops the
    blocks' copies of the training names; its codes are those of the rounded map computed in
    float32 (checked by hand), its ratios within float16's round-off of the fitted model's,
    the fitted model is left as it was, and a saved copy scores exactly as the copy."""
    model, X, _ = _fitted_with_cohort(rng)
    halved = half_precision(model)
    blocks, fitted = list(halved.plda_.models_.values()), list(model.plda_.models_.values())
    assert [block.step_.dtype for block in blocks] == [np.float16, np.float16]
    assert [block.classes_ for block in blocks] == [None, None]
    assert halved.cohort_coordinates_.dtype == np.float16
    assert fitted[0].step_.dtype == np.float64 and fitted[0].classes_ is not None
    assert model.cohort_coordinates_.dtype == np.float32

    rows = X[:8, :576]
    step = fitted[0].step_.astype(np.float16).astype(np.float64)
    by_hand = (rows - fitted[0].mean_) @ step.T
    by_hand *= np.sqrt(4) / np.linalg.norm(by_hand, axis=1, keepdims=True)
    np.testing.assert_allclose(blocks[0].encode(rows), by_hand - fitted[0].code_mean_, atol=1e-12)

    codes, rounded = model.plda_.encode(X[:10]), halved.plda_.encode(X[:10])
    assert 0 < np.abs(codes - rounded).max() <= 2e-3 * np.abs(codes).max()
    full, half = model.pairwise_log_odds(codes, codes), halved.pairwise_log_odds(rounded, rounded)
    assert np.abs(full - half).max() <= 1e-2 * np.abs(full).max()

    loaded = ev.load(ev.save(halved, tmp_path / "half.npz"))
    assert [block.step_.dtype for block in loaded.plda_.models_.values()] == [np.float16] * 2
    np.testing.assert_array_equal(
        loaded.pairwise_log_odds(loaded.plda_.encode(X[:10]), rounded), half
    )


def test_half_precision_compacts_a_plda_and_refuses_other_models(rng):
    """A PLDA with its PCA step is made compact and rounded; anything else is refused by name."""
    X, y, _, _ = _people(rng, n_people=20, d=8)
    plda = ev.PLDA(n_components=2, pca_components=5).fit(X, y)
    halved = half_precision(plda)
    assert halved.step_.dtype == np.float16 and halved.pca_ is None
    assert plda.pca_ is not None and plda.classes_ is not None
    np.testing.assert_allclose(halved.transform(X[:4]), plda.transform(X[:4]), rtol=0, atol=1e-2)
    with pytest.raises(TypeError, match="half_precision takes an IdentityModel"):
        half_precision(ev.Eigenspace(2).fit(X))


def _as_stored(model, quantised):
    """``model`` with its maps and cohort replaced by ``quantised``'s, multiplied out by hand in
    float64: what the 8-bit form should score as."""
    by_hand = copy.deepcopy(model)
    pairs = zip(by_hand.plda_.models_.values(), quantised.plda_.models_.values(), strict=True)
    for block, small in pairs:
        block.step_ = small.step_.astype(np.float64) * small.step_scale_.astype(np.float64)[:, None]
    scale = quantised.cohort_scale_.astype(np.float64)
    by_hand.cohort_coordinates_ = quantised.cohort_coordinates_.astype(np.float64) * scale
    return by_hand


def test_quantized_keeps_the_maps_in_eight_bits_and_scores_as_stored(rng, tmp_path):
    """``quantized`` keeps each description's map with one scale per row and the cohort with
    one per axis, each value within half a step of the fitted model's and each slice's largest
    at 127; it scores as the stored integers multiplied out by hand, leaves the fitted model as
    it was, and its saved copy scores exactly as the copy in a file half of float16's."""
    model, X, _ = _fitted_with_cohort(rng)
    small = quantized(model)
    blocks, fitted = list(small.plda_.models_.values()), list(model.plda_.models_.values())
    for block, full in zip(blocks, fitted, strict=True):
        assert block.step_.dtype == np.int8 and block.step_scale_.shape == (4,)
        assert block.classes_ is None and block.within_covariance_.dtype == np.float32
        step = block.step_scale_.astype(np.float64)[:, None]
        assert np.all(np.abs(block.step_ * step - full.step_) <= step / 2 * (1 + 1e-6))
        np.testing.assert_array_equal(np.abs(block.step_).max(axis=1), 127)
    cohort, scale = small.cohort_coordinates_, small.cohort_scale_.astype(np.float64)
    assert cohort.dtype == np.int8 and scale.shape == (4,)
    assert np.all(np.abs(cohort * scale - model.cohort_coordinates_) <= scale / 2 * (1 + 1e-6))
    assert fitted[0].step_.dtype == np.float64 and model.cohort_coordinates_.dtype == np.float32

    by_hand = _as_stored(model, small)
    codes, expected = small.plda_.encode(X[:10]), by_hand.plda_.encode(X[:10])
    np.testing.assert_allclose(codes, expected, rtol=1e-6, atol=1e-9)
    scores = small.pairwise_log_odds(codes, codes)
    np.testing.assert_allclose(scores, by_hand.pairwise_log_odds(expected, expected), atol=1e-5)
    full = model.plda_.encode(X[:10])
    assert (
        0 < np.abs(scores - model.pairwise_log_odds(full, full)).max() <= 0.1 * np.abs(scores).max()
    )

    path = ev.save(small, tmp_path / "small.npz")
    loaded = ev.load(path)
    np.testing.assert_array_equal(
        loaded.pairwise_log_odds(loaded.plda_.encode(X[:10]), codes), scores
    )
    halved = half_precision(loaded)  # and back: the 8-bit values in float16
    assert halved.cohort_scale_ is None and halved.plda_.models_["block0"].step_scale_ is None
    np.testing.assert_allclose(halved.plda_.encode(X[:10]), codes, atol=2e-2)


def test_quantized_model_files_are_checked_and_shrink_the_shipped_model(rng, tmp_path):
    """An 8-bit map or cohort without its scale, a scale beside a float one, and integers other
    than int8 are refused by name when loaded; the shipped identity model is the 8-bit form."""
    X, y, _, _ = _people(rng, n_people=20, d=8)
    plda = quantized(ev.PLDA(n_components=2, pca_components=5).fit(X, y))
    assert plda.pca_ is None and plda.step_.dtype == np.int8
    ev.load(ev.save(plda, tmp_path / "fine.npz"))
    tampered = (
        ("step_scale_", None, "step_ is int8: integers must be int8 with their step_scale_"),
        ("step_", plda.step_.astype(np.int16), "step_ is int16"),
        ("step_", plda.step_.astype(np.float32), "step_scale_ scales an 8-bit step_"),
    )
    for name, value, message in tampered:
        broken = copy.copy(plda)
        setattr(broken, name, value)
        with pytest.raises(ev.ModelFileError, match=message):
            ev.load(ev.save(broken, tmp_path / f"{name}.npz"))
    with pytest.raises(TypeError, match="quantized takes an IdentityModel"):
        quantized(ev.Eigenspace(2).fit(X))
    model = quantized(_fitted_with_cohort(rng)[0])
    model.cohort_scale_ = None
    with pytest.raises(ev.ModelFileError, match="cohort_coordinates_ is int8: integers must"):
        ev.load(ev.save(model, tmp_path / "cohort.npz"))

    shipped = ev.default_identity_model("classical")
    assert shipped.cohort_coordinates_.dtype == np.int8
    assert {block.step_.dtype for block in shipped.plda_.models_.values()} == {np.dtype(np.int8)}
    # four descriptions' 8-bit maps, the Fisher vectors' 200 x 17,152 the largest
    assert ev.faces.compare.DEFAULT_IDENTITY.stat().st_size < 10_000_000


def test_centred_on_a_quantized_model_is_the_centred_stored_model(rng):
    """Centring an 8-bit model moves its cohort as the stored values multiplied out, kept in
    float32 without a scale."""
    model, X, _ = _fitted_with_cohort(rng)
    small = quantized(model)
    codes = small.plda_.encode(X[:30])
    adapted, expected = (
        centred_on(small, codes=codes),
        centred_on(_as_stored(model, small), codes=codes),
    )
    assert adapted.cohort_scale_ is None and adapted.cohort_coordinates_.dtype == np.float32
    np.testing.assert_allclose(adapted.cohort_coordinates_, expected.cohort_coordinates_, atol=1e-5)
    moved = adapted.plda_.encode(X[30:])
    np.testing.assert_allclose(
        adapted.pairwise_log_odds(moved, moved),
        expected.pairwise_log_odds(expected.plda_.encode(X[30:]), expected.plda_.encode(X[30:])),
        atol=1e-4,
    )


def _fitted_with_cohort(rng):
    """A small two-description identity model with a cohort, its training rows and people."""
    model = _two_descriptions(
        pca_components=6, lda_components=4, n_components=2, cohort_size=20, cohort_top=5
    )
    X, y, _, _ = _people(rng, n_people=40, d=sum(model.description_widths()))
    return model.fit_descriptors(X, y), X, y


def test_centred_on_moves_every_code_and_the_cohort_by_the_new_faces_mean(rng, monkeypatch):
    """``centred_on``: each block's codes lose the mean of the new faces' codes, the cohort's
    coordinates move with them (the adapted model encodes the cohort as one model), and the
    normalised scores are the cohort normalisation of the moved codes, computed by hand."""
    model, X, _ = _fitted_with_cohort(rng)
    domain = X[:12] + 0.5  # faces of another kind: described rows, as the crops would be
    crops = np.zeros((12, 24, 24))
    fitted_means = [block.code_mean_.copy() for block in model.plda_.models_.values()]
    monkeypatch.setattr(type(model), "describe", lambda self, c: domain[: len(c)])
    adapted = centred_on(model, crops)
    shift = model.plda_.encode(domain).mean(axis=0)
    assert np.abs(shift).max() > 0.1
    np.testing.assert_allclose(
        adapted.plda_.encode(X[20:30]), model.plda_.encode(X[20:30]) - shift, atol=1e-12
    )
    np.testing.assert_allclose(adapted.plda_.encode(domain).mean(axis=0), 0, atol=1e-12)
    moved = model.cohort_coordinates_ - model.plda_.pair_coordinates(shift[None])
    np.testing.assert_allclose(adapted.cohort_coordinates_, moved, rtol=1e-6, atol=1e-6)
    codes = adapted.plda_.encode(X[20:30])
    raw = adapted.plda_.pairwise_log_odds(codes, codes)
    u = adapted.plda_.pair_coordinates(codes)
    against = adapted.plda_.pairwise_log_odds(u, moved, coordinates=True)
    best = -np.sort(-against, axis=1)[:, : model.cohort_top]
    mu, sd = best.mean(axis=1), best.std(axis=1)
    by_hand = ((raw - mu[:, None]) / sd[:, None] + (raw - mu[None]) / sd[None]) / 2
    np.testing.assert_allclose(adapted.pairwise_log_odds(codes, codes), by_hand, atol=1e-5)
    np.testing.assert_array_equal(
        [block.code_mean_ for block in model.plda_.models_.values()], fitted_means
    )  # the model adapted from is left as it was
    # the faces' codes instead of the faces: the same model, nothing encoded again
    by_codes = centred_on(model, codes=model.plda_.encode(domain))
    np.testing.assert_allclose(by_codes.plda_.encode(X[20:30]), codes, atol=1e-12)
    np.testing.assert_array_equal(by_codes.cohort_coordinates_, adapted.cohort_coordinates_)


def test_centred_on_refuses_what_it_cannot_centre(rng):
    """Fewer than two crops, another model, or codes not length-normalised: refused by name;
    an empty stack of crops is refused by ``describe`` itself, naming the shape."""
    model, X, y = _fitted_with_cohort(rng)
    with pytest.raises(ValueError, match="at least 2 faces"):
        centred_on(model, np.zeros((1, 24, 24)))
    with pytest.raises(ValueError, match=r"n >= 1, got shape \(0, 24, 24\)"):
        model.encode(np.zeros((0, 24, 24)))
    with pytest.raises(TypeError, match="centred_on takes an IdentityModel"):
        centred_on(model.plda_, np.zeros((3, 24, 24)))
    with pytest.raises(ValueError, match="crops or their codes, one of the two"):
        centred_on(model)
    with pytest.raises(ValueError, match="crops or their codes, one of the two"):
        centred_on(model, np.zeros((3, 24, 24)), codes=np.zeros((3, 8)))
    for codes in (np.zeros((3, 7)), np.zeros((1, 8)), np.full((3, 8), np.nan)):
        with pytest.raises(ValueError, match=r"an \(n, 8\) array of at least 2 finite codes"):
            centred_on(model, codes=codes)
    plain = _two_descriptions(pca_components=6, n_components=2, length_norm=False, cohort_size=0)
    plain.fit_descriptors(X, y)
    with pytest.raises(ValueError, match="length_norm=True"):
        centred_on(plain, np.zeros((3, 24, 24)))


def test_the_identity_recipe_fits_on_lfw_people_and_returns_the_eight_bit_form(
    tmp_path, monkeypatch, capsys
):
    """``build_identity_model`` (``eigenvision build-models --identity``) on a small copy of
    ``lfw_train``: the model is fitted on the photos cut on the eyes given, in the 8-bit form
    the shipped file has, and scores two photos of one person above two of two people; it shows
    its progress while it describes the faces."""
    from conftest import require_dataset_folder

    from eigenvision.faces.recipes import build_identity_model

    source = require_dataset_folder("lfw_train")
    root = tmp_path / "lfw_train"
    (root / "images").mkdir(parents=True)
    (root / "pairsDevTrain.txt").write_text("0\n")
    people = [p for p in sorted((source / "images").iterdir()) if len(list(p.glob("*.jpg"))) >= 4]
    for person in people[:24]:
        (root / "images" / person.name).mkdir()
        for photo in sorted(person.glob("*.jpg"))[:4]:
            (root / "images" / person.name / photo.name).symlink_to(photo)
    lfw = ev.datasets.load_lfw(root)
    eyes = np.broadcast_to(np.asarray(ev.datasets.LFW_EYES), (len(lfw), 2, 2))
    options = dict(pca_components=30, lda_components=12, n_components=6, cohort_size=8)
    options.update(fisher_clusters=4)
    monkeypatch.setattr(ev.descriptors, "FISHER_SAMPLE", 24)  # the mixture's crops: seconds
    model = build_identity_model(
        root,
        eyes=eyes,
        progress=True,
        cohort_top=4,
        calibration_share=0.2,
        temper=False,  # tempered_on_att has its own test
        **options,
    )
    # regression: after the eyes, the build (tens of minutes on lfw_train) showed nothing
    assert "describing faces" in capsys.readouterr().err
    assert isinstance(model, ev.IdentityModel) and model.cohort_coordinates_.dtype == np.int8
    assert isinstance(model.fisher_, ev.FisherVectors)  # the recipe's learnt description
    assert {block.step_.dtype for block in model.plda_.models_.values()} == {np.dtype(np.int8)}
    crops = np.stack([ev.faces.compare.model_crop(image, eyes[0], model) for image in lfw.images])
    same, other = model.score_pairs(crops[[0, 4]], crops[[1, 8]])
    assert np.isfinite([same, other]).all() and same > other


def test_tempering_divides_the_calibration_by_the_likeliest_temperature(rng):
    """tempered: the temperature minimises the pairs' balanced log loss (a brute-force grid
    agrees), the decision stays where it was, and an underconfident model is left alone
    (T >= 1)."""
    from scipy.special import expit

    from eigenvision.identity import tempered

    X, labels, _, _ = _people(rng, n_people=30, per_person=3)
    model = ev.IdentityModel(
        **ONE_DESCRIPTION, pca_components=6, n_components=3, cohort_size=0
    ).fit_descriptors(X, labels)
    a, b = model.calibration_
    threshold = -b / a
    # another source's pairs: the model is three times too sure of them
    scores = rng.normal(threshold, 4 / a, size=4000)
    same = rng.random(4000) < expit((a * scores + b) / 3)
    adjusted = tempered(model, scores, same)
    weights = np.where(same, 0.5 / same.sum(), 0.5 / (~same).sum())
    grid = np.exp(np.linspace(0, np.log(1000), 20001))
    sign = np.where(same, 1.0, -1.0)
    losses = [np.sum(weights * np.logaddexp(0, -sign * (a * scores + b) / t)) for t in grid]
    assert adjusted.temperature_ == pytest.approx(grid[int(np.argmin(losses))], rel=1e-3)
    assert 2 < adjusted.temperature_ < 4.5
    np.testing.assert_allclose(
        adjusted.probability(scores), expit((a * scores + b) / adjusted.temperature_)
    )
    assert -adjusted.calibration_[1] / adjusted.calibration_[0] == pytest.approx(threshold)
    assert adjusted.threshold_ == model.threshold_ and model.calibration_[0] == a
    # pairs the model is less sure of than it should be: no sharpening
    sharp = rng.random(4000) < expit(4 * (a * scores + b))
    assert tempered(model, scores, sharp).temperature_ == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="both"):
        tempered(model, scores, np.ones(4000, dtype=bool))


def _fused_model(rng, **options):
    """An IdentityModel with distance_fusion fitted on 128-d rows: 40 people, 5 faces each."""
    centres = rng.normal(size=(40, 128))
    X = np.repeat(centres, 5, axis=0) + 0.5 * rng.normal(size=(200, 128))
    labels = np.repeat(np.arange(40), 5)
    model = ev.IdentityModel(
        descriptor="deep",
        shape=(150, 150),
        illumination=False,
        mirror=False,
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


def test_five_point_alignment_is_for_the_deep_chip_only(rng):
    centres = rng.normal(size=(10, 64))
    X = np.repeat(centres, 3, axis=0)
    with pytest.raises(ValueError, match="alignment='five_points'.*descriptor='deep'"):
        ev.IdentityModel(alignment="five_points", descriptor="pixels").fit_descriptors(
            X, np.repeat(np.arange(10), 3)
        )
    with pytest.raises(ValueError, match="alignment"):
        ev.IdentityModel(alignment="nose").fit_descriptors(X, np.repeat(np.arange(10), 3))


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


def test_plda_and_joint_bayesian_fit_data_with_constant_pixels():
    """Regression (hardening round 4): ``ev.PLDA(5).fit(digits.data, digits.target)`` ended in
    NumPy's "Matrix is not positive definite" (3 of the 64 pixels are constant, so the default
    PCA step kept null directions). The PCA step now stops at the data's numerical rank, and a
    singular step the user asked for is refused with what to change."""
    from sklearn.datasets import load_digits
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    digits = load_digits()
    X, y = digits.data, digits.target
    rank = np.linalg.matrix_rank(X - X.mean(axis=0))
    for model in (ev.PLDA(5), ev.JointBayesian()):
        model.fit(X[::2], y[::2])
        assert model.pca_.n_components_ == rank < 64
        # a usable model: nearest class mean in its codes beats chance by far, near LDA's
        codes = model.transform(X)
        means = np.stack([codes[::2][y[::2] == c].mean(axis=0) for c in range(10)])
        nearest = np.argmin(((codes[1::2, None] - means) ** 2).sum(-1), axis=1)
        lda = LinearDiscriminantAnalysis().fit(X[::2], y[::2]).score(X[1::2], y[1::2])
        assert np.mean(nearest == y[1::2]) > lda - 0.1
    with pytest.raises(ValueError, match="within-person covariance .* singular.*pca_components"):
        ev.PLDA(5, pca_components=64).fit(X, y)


def test_pair_scores_refuse_nan_codes(rng):
    """Regression (hardening round 4): ``pairwise_log_odds`` of NaN codes returned NaN."""
    faces, labels = rng.random((24, 6, 5)), np.repeat(np.arange(6), 4)
    model = ev.PLDA(2, max_iter=3).fit(faces, labels)
    codes = model.encode(faces.reshape(24, -1))
    broken = codes.copy()
    broken[0, 0] = np.nan
    with pytest.raises(ValueError, match="codes hold NaN"):
        model.pairwise_log_odds(broken, codes)


def test_a_plda_file_from_before_its_pair_basis_is_refused_and_its_old_forms_dropped(rng, tmp_path):
    """Issue 77: a format 1 PLDA file holding its pair ratio's forms (``quadratic_``,
    ``cross_``, ``offset_``) loads with them dropped and made again from the covariances; one
    without ``pair_basis_`` (which the ratio read through a runtime branch) is refused."""
    from conftest import written_in_format

    X, y, _, _ = _people(rng)
    model = ev.PLDA(n_components=3).fit(X, y)
    older = copy.copy(model)
    for name in ("quadratic_", "cross_", "offset_"):
        older.__dict__[name] = np.asarray(getattr(model, name))  # saved members, as files were
    loaded = ev.load(written_in_format(ev.save(older, tmp_path / "forms.npz"), 1))
    codes = model.encode(X[:4])
    np.testing.assert_array_equal(
        loaded.pairwise_log_odds(codes, codes), model.pairwise_log_odds(codes, codes)
    )
    assert "quadratic_" not in vars(loaded)
    no_basis = copy.copy(model)
    del no_basis.pair_basis_
    path = written_in_format(ev.save(no_basis, tmp_path / "no_basis.npz"), 1)
    with pytest.raises(ev.ModelFileError, match="kept pair_basis_; train the model again"):
        ev.load(path)
