"""IdentityModel: descriptions under PLDA, cohort normalisation, centring and tempering."""

import copy

import numpy as np
import pytest
from scipy.linalg import block_diag

import eigenvision as ev
from eigenvision.identity import centred_on, quantized
from tests.conftest import deep_model_or_skip, in_format_3, saved_unchecked
from tests.identity.synthetic import (
    as_stored,
    fitted_with_cohort,
    one_description,
    people,
    stacked_pair_ratio,
    two_descriptions,
)


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


def test_descriptions_are_plda_models_whose_ratios_add(rng, tmp_path):
    """Several descriptions give a PLDAFusion of blocks as wide as describe's; its ratio is the
    stacked pair's Gaussian likelihood ratio (scipy) of the joint model whose blocks are
    independent: block-diagonal S_b and S_w from the blocks' PLDAs."""
    model = two_descriptions(pca_components=4, n_components=2, cohort_size=0)
    widths = model.description_widths()
    assert widths == [24 * 24, 2 * 2 * 10]  # pixels; uniform LBP histograms of 8 neighbours
    X, y, _, _ = people(rng, d=sum(widths))
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
    brute = stacked_pair_ratio(block_diag(*between), block_diag(*within), a, b)
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
    loaded.set_params(describer__descriptor="pixels", describer__illumination=True)
    ev.validation.check_state(loaded)  # one description, one PLDA


def test_identity_model_lda_step_in_every_description(rng, tmp_path):
    """``IdentityModel(lda_components=)`` gives each description's PLDA the LDA step: codes
    (and the cohort's) as wide as the steps together, each block as its own PLDA with the
    same step; the saved model scores as fitted."""
    model = two_descriptions(
        pca_components=6, lda_components=4, n_components=2, cohort_size=20, cohort_top=5
    )
    X, y, _, _ = people(rng, n_people=40, d=sum(model.description_widths()))
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
    X, labels, _, _ = people(rng, n_people=40, per_person=4)
    model = ev.IdentityModel(
        one_description(), pca_components=6, n_components=3, cohort_size=15, cohort_top=5
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
    raw = ev.IdentityModel(one_description(), pca_components=6, n_components=3, cohort_size=0)
    raw.fit_descriptors(X, labels)
    assert raw.cohort_coordinates_ is None
    np.testing.assert_array_equal(raw.pairwise_log_odds(a, b), raw.plda_.pairwise_log_odds(a, b))


def test_an_identity_model_file_from_before_the_cohort_scores_raw_ratios(rng, tmp_path):
    """Files without ``cohort_size`` (or ``length_norm``, ``lda_components``) load as written
    (raw ratios, no LDA step); a cohort of codes of another width is refused."""
    import json

    X, labels, _, _ = people(rng, n_people=20, per_person=3)
    model = ev.IdentityModel(one_description(), pca_components=6, n_components=3, cohort_size=0)
    path = in_format_3(ev.save(model.fit_descriptors(X, labels), tmp_path / "old.npz"))
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
        one_description(), pca_components=6, n_components=3, cohort_size=8
    )
    normalised.fit_descriptors(X, labels).cohort_coordinates_ = np.zeros((8, 4))
    with pytest.raises(ValueError, match="cohort_coordinates_ must hold pair coordinates"):
        ev.validation.check_state(normalised)


def test_an_identity_model_file_whose_cohort_is_codes_is_refused_with_the_fix(rng, tmp_path):
    """Issue 77: files written before ``cohort_coordinates_`` hold the cohort's codes
    (``cohort_``), which runtime code read through a branch of its own; such a (format 1)
    file is refused, naming what to do, and no model has a ``cohort_`` any more."""
    from tests.conftest import written_in_format

    X, labels, _, _ = people(rng, n_people=30, per_person=3)
    model = ev.IdentityModel(
        one_description(), pca_components=6, n_components=3, cohort_size=10, cohort_top=4
    ).fit_descriptors(X, labels)
    assert not hasattr(model, "cohort_")
    old = copy.copy(model)
    old.cohort_, old.cohort_coordinates_ = model.plda_.encode(X[::9]), None  # as files held it
    path = written_in_format(saved_unchecked(old, tmp_path / "old.npz"), 1)
    with pytest.raises(ev.ModelFileError, match="cohort in pair coordinates; train the model"):
        ev.load(path)


def test_a_large_sets_pair_scores_need_no_temporary_as_large_as_themselves(rng, monkeypatch):
    """Scoring every pair of a large set (``cluster_faces`` of thousands of faces) made
    several matrices as large as the scores at once (each description's scores, their sum
    and the normalisation's temporaries; HISTORY.md has the measured peaks). The scores now
    equal the formula's (PLDA's ratio summed over the descriptions, normalised
    against the cohort), the cross term a block of rows at a time and the rest in place; the
    memory Python allocates meanwhile (tracemalloc) stays under 2.5 times the result's."""
    import tracemalloc

    from eigenvision import identity

    model = two_descriptions(pca_components=4, n_components=2, cohort_size=20, cohort_top=5)
    X, y, _, _ = people(rng, n_people=40, d=sum(model.description_widths()))
    model.fit_descriptors(X, y)
    for module in (identity.plda, identity.model):  # many blocks in a small set
        monkeypatch.setattr(module, "BLOCK_ROWS", 64)
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


def test_centred_on_a_quantized_model_is_the_centred_stored_model(rng):
    """Centring an 8-bit model moves its cohort as the stored values multiplied out, kept in
    float32 without a scale."""
    model, X, _ = fitted_with_cohort(rng)
    small = quantized(model)
    codes = small.plda_.encode(X[:30])
    adapted, expected = (
        centred_on(small, codes=codes),
        centred_on(as_stored(model, small), codes=codes),
    )
    assert adapted.cohort_scale_ is None and adapted.cohort_coordinates_.dtype == np.float32
    np.testing.assert_allclose(adapted.cohort_coordinates_, expected.cohort_coordinates_, atol=1e-5)
    moved = adapted.plda_.encode(X[30:])
    np.testing.assert_allclose(
        adapted.pairwise_log_odds(moved, moved),
        expected.pairwise_log_odds(expected.plda_.encode(X[30:]), expected.plda_.encode(X[30:])),
        atol=1e-4,
    )


def test_centred_on_moves_every_code_and_the_cohort_by_the_new_faces_mean(rng, monkeypatch):
    """``centred_on``: each block's codes lose the mean of the new faces' codes, the cohort's
    coordinates move with them (the adapted model encodes the cohort as one model), and the
    normalised scores are the cohort normalisation of the moved codes, computed by hand."""
    model, X, _ = fitted_with_cohort(rng)
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
    model, X, y = fitted_with_cohort(rng)
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
    plain = two_descriptions(pca_components=6, n_components=2, length_norm=False, cohort_size=0)
    plain.fit_descriptors(X, y)
    with pytest.raises(ValueError, match="length_norm=True"):
        centred_on(plain, np.zeros((3, 24, 24)))


def test_tempering_divides_the_calibration_by_the_likeliest_temperature(rng):
    """tempered: the temperature minimises the pairs' balanced log loss (a brute-force grid
    agrees), the decision stays where it was, and an underconfident model is left alone
    (T >= 1)."""
    from scipy.special import expit

    from eigenvision.identity import tempered

    X, labels, _, _ = people(rng, n_people=30, per_person=3)
    model = ev.IdentityModel(
        one_description(), pca_components=6, n_components=3, cohort_size=0
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


def test_pair_scores_in_blocks_are_the_pairwise_scores(rng):
    """The shipped learned model (cohort-normalised ratio and distance): a set's scores against
    itself a block of rows at a time equal ``pairwise_log_odds`` of the set."""
    model = deep_model_or_skip()
    rows = rng.normal(size=(300, 128))
    codes = model.encode_descriptors(rows / np.linalg.norm(rows, axis=1, keepdims=True) * 0.6)
    blocks = list(model.pair_scores_in_blocks(codes, rows_at_once=64))
    assert [block.start for block, _ in blocks] == list(range(0, 300, 64))
    whole = np.vstack([scores for _, scores in blocks])
    np.testing.assert_allclose(whole, model.pairwise_log_odds(codes, codes), rtol=1e-9, atol=1e-9)
