"""Recognizer(method="plda"): a trained identity model as the background, enrolment only."""

import numpy as np
import pytest
from conftest import UNLEARNT_DESCRIPTIONS
from sklearn.base import clone

import eigenvision as ev


@pytest.fixture(scope="module")
def background(att):
    """An identity model of AT&T people 1-30 (at AT&T's 112 x 92), and people 31-40."""
    people = np.array([int(label[1:]) for label in att.labels])
    train = people <= 30
    model = ev.IdentityModel(
        shape=(112, 92), pca_components=60, n_components=20, **UNLEARNT_DESCRIPTIONS
    )
    model.fit(att.images[train], att.labels[train])
    return model, att.images[~train], att.labels[~train]


def _split(images, labels, enrolled_per_person):
    shot = np.arange(len(labels)) % 10
    return (
        (images[shot < enrolled_per_person], labels[shot < enrolled_per_person]),
        (images[shot >= enrolled_per_person], labels[shot >= enrolled_per_person]),
    )


def test_plda_recognizer_names_by_the_likeliest_enrolled_image(background):
    """Enrolled with two images of each of ten people the model never saw, it names each probe
    by the enrolled image of the highest log-likelihood ratio (a loop over IdentityModel's
    paired ratios, tied to score_pairs), its distances are minus those ratios, and the
    background is not refitted."""
    model, images, labels = background
    (gallery, gallery_labels), (probes, probe_labels) = _split(images, labels, 2)
    before = model.encode(probes[:3])
    rec = ev.Recognizer(method="plda", feature=model).fit(gallery, gallery_labels)
    assert rec.feature is model and rec.feature_ is None
    np.testing.assert_array_equal(model.encode(probes[:3]), before)
    # described once: score_pairs describes both sides of every pair it is given
    gallery_codes, probe_codes = model.encode(gallery), model.encode(probes)
    ratios = np.stack(
        [
            model.paired_log_odds(np.repeat(code[None], len(gallery), 0), gallery_codes)
            for code in probe_codes
        ]
    )
    np.testing.assert_allclose(
        model.score_pairs(probes[:2], gallery[:2]), np.diag(ratios[:2, :2]), rtol=1e-5
    )
    expected = gallery_labels[np.argmax(ratios, axis=1)]
    np.testing.assert_array_equal(rec.predict(probes), expected)
    distances, named = rec.kneighbors(probes[:5], k=3)
    # the descriptors are float32: the codes' route and score_pairs' agree to its round-off
    expected_distances = -np.sort(ratios[:5], axis=1)[:, ::-1][:, :3]
    np.testing.assert_allclose(distances, expected_distances, rtol=1e-5)
    np.testing.assert_array_equal(named[:, 0], expected[:5])
    assert rec.score(probes, probe_labels) > 0.8


def test_plda_recognizer_verifies_enrols_and_calibrates_without_refitting(background, tmp_path):
    """verify's distance is minus the best ratio against the person's images and its
    probability the model's calibration of it; match_probability likewise for every person;
    add() enrols a new person (one image) with the model untouched; calibrate_threshold on
    strangers sets a threshold on minus the ratio (negative allowed); clone and save/load keep
    the trained model."""
    model, images, labels = background
    (gallery, gallery_labels), (probes, probe_labels) = _split(images, labels, 3)
    people = np.unique(labels)
    enrolled = np.isin(gallery_labels, people[:6])
    rec = ev.Recognizer(method="plda", feature=model).fit(
        gallery[enrolled], gallery_labels[enrolled]
    )
    probe, person = probes[0], gallery_labels[enrolled][0]
    own = gallery[enrolled][gallery_labels[enrolled] == person]
    best = model.score_pairs(np.repeat(probe[None], len(own), 0), own).max()
    verdict = rec.verify(probe, person)
    assert verdict.distance == pytest.approx(-best, rel=1e-6)
    assert verdict.probability == pytest.approx(float(model.probability(best)), rel=1e-6)
    probability = rec.match_probability(probes[:4])
    assert probability.shape == (4, 6)
    assert probability[0, list(rec.classes_).index(person)] == pytest.approx(
        verdict.probability, rel=1e-6
    )
    newcomer = people[6]
    rec.add(gallery[gallery_labels == newcomer][:1], [newcomer])
    assert newcomer in rec.classes_ and rec.feature is model
    strangers = np.isin(probe_labels, people[7:])
    threshold = rec.calibrate_threshold(probes[strangers], probe_labels[strangers], far=0.1)
    assert np.mean(rec.predict(probes[strangers]) != ev.UNKNOWN) <= 0.1
    assert threshold == rec.threshold
    # without strangers: each enrolled person a stranger to the others, by the same ratio
    codes = model.encode(
        np.concatenate([gallery[enrolled], gallery[gallery_labels == newcomer][:1]])
    )
    ratios = model.pairwise_log_odds(codes, codes)
    ratios[rec.gallery_labels_[:, None] == rec.gallery_labels_[None]] = -np.inf
    as_strangers = -ratios.max(axis=1)
    np.testing.assert_allclose(rec.gallery_as_strangers(), as_strangers, rtol=1e-5)
    lowest = as_strangers.min()  # the threshold sits float32 round-off (1e-6 |s|) below it
    assert lowest - 2e-6 * abs(lowest) < rec.calibrate_threshold(far=0.0) < lowest
    # both: the strangers' decisions and the enrolled people's, pooled
    pooled = rec.calibrate_threshold(
        probes[strangers], probe_labels[strangers], far=0.1, enrolled=True
    )
    decisions = np.concatenate([as_strangers, rec.decide(probes[strangers])[1]])
    assert np.sum(decisions <= pooled) == int(np.floor(0.1 * len(decisions)))
    assert pooled < np.sort(decisions)[int(np.floor(0.1 * len(decisions)))]
    with pytest.raises(ValueError, match="images of strangers, or enrolled=True"):
        rec.calibrate_threshold(enrolled=False)
    rec.threshold = threshold
    copy = clone(rec)
    assert copy.feature is model
    path = ev.save(rec, tmp_path / "plda.npz")
    with np.load(path) as archive:  # the identity model is stored once, as the feature
        assert not [name for name in archive.files if name.startswith("feature_/")]
    loaded = ev.load(path)
    np.testing.assert_array_equal(loaded.predict(probes), rec.predict(probes))


def test_plda_recognizer_asks_for_a_trained_identity_model(att):
    # without one it takes the shipped model (test_plda_recognizer_takes_the_shipped_model...)
    with pytest.raises(ValueError, match=r"needs a trained IdentityModel as feature"):
        ev.Recognizer(method="plda", feature=ev.IdentityModel()).fit(att.images[:4], att.labels[:4])
    with pytest.raises(ValueError, match=r"needs a trained IdentityModel as feature"):
        ev.Recognizer(method="plda", feature=ev.PLDA()).fit(att.images[:4], att.labels[:4])


def test_plda_recognizer_on_photos_with_the_shipped_models(imm, tmp_path, capsys):
    """With the shipped finder and identity model, one IMM photo per person enrols them and
    their other photos are named: faces are cut as the identity model was trained (its crop
    and eye positions), and the CLI's train --photos --method plda does the same."""
    from PIL import Image

    from eigenvision.cli import main

    def photo(person, shot):
        return imm.images[list(imm.names).index(f"{person:02d}_{shot:02d}.jpg")]

    people = [1, 2, 3, 4, 5]
    model = ev.default_identity_model()
    rec = ev.Recognizer(method="plda", feature=model, finder=ev.default_finder())
    rec.fit([photo(p, 1) for p in people], people)
    assert rec.image_shape_ == tuple(model.shape)
    probes = [photo(p, 2) for p in people]
    assert np.mean(rec.predict(probes) == np.array(people)) >= 0.8
    named = rec.identify(photo(3, 2))
    assert len(named) == 1 and named[0][1] == rec.predict([photo(3, 2)])[0]
    for p in people[:3]:
        folder = tmp_path / "train" / f"p{p}"
        folder.mkdir(parents=True)
        Image.fromarray((photo(p, 1) * 255).astype(np.uint8)).save(folder / "a.png")
    saved = tmp_path / "plda.npz"
    train = ["-q", "train", str(tmp_path / "train"), "--photos", "--method", "plda"]
    assert main([*train, "-o", str(saved)]) == 0
    out = capsys.readouterr().out
    shipped = ev.faces.compare.default_identity_name()
    assert f"plda (the {shipped} identity model) on 3 photos" in out and "centred" not in out
    assert ev.load(saved).feature.shape == model.shape
    # five people: the model centred on them and the threshold calibrated on them, as the
    # Recognizer's own methods do on the faces enrolled above
    for p in people[3:]:
        folder = tmp_path / "train" / f"p{p}"
        folder.mkdir(parents=True)
        Image.fromarray((photo(p, 1) * 255).astype(np.uint8)).save(folder / "a.png")
    assert main([*train, "-o", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "the identity model centred on them" in out and "as strangers to each other" in out
    loaded = ev.load(saved)
    np.testing.assert_allclose(loaded.gallery_.mean(axis=0), 0, atol=1e-6)
    by_hand = ev.Recognizer(method="plda", feature=model, finder=ev.default_finder())
    by_hand.fit(*ev.load_photos(tmp_path / "train")[:2]).centre_on_gallery()  # the same files
    assert loaded.threshold == pytest.approx(by_hand.calibrate_threshold(), rel=1e-4)
    np.testing.assert_allclose(
        loaded.kneighbors(probes[:2], k=2)[0], by_hand.kneighbors(probes[:2], k=2)[0], rtol=1e-4
    )
    for p in (7, 8):  # strangers: pooled with the enrolled people as each other's
        folder = tmp_path / "strangers" / f"s{p}"
        folder.mkdir(parents=True)
        Image.fromarray((photo(p, 1) * 255).astype(np.uint8)).save(folder / "a.png")
    assert main([*train, "-o", str(saved), "--unknown", str(tmp_path / "strangers")]) == 0
    assert "--unknown's people and of the enrolled as strangers" in capsys.readouterr().out
    strangers = ev.load_photos(tmp_path / "strangers")[:2]
    pooled = by_hand.calibrate_threshold(*strangers, enrolled=True)
    assert ev.load(saved).threshold == pytest.approx(pooled, rel=1e-4)
    assert main([*train, "-o", str(saved), "--closed-set"]) == 0
    assert "(--closed-set)" in capsys.readouterr().out and ev.load(saved).threshold is None


def test_plda_recognizer_keeps_its_gallerys_cohort_statistics_between_queries(background):
    """The enrolled codes' cohort statistics are computed once, not on every query (they had
    been: a gallery's cost paid again by each probe); enrolling someone, refitting the model or
    changing its cohort_top computes them again, and the answers equal a fresh recognizer's."""
    model, images, labels = background
    (gallery, gallery_labels), (probes, _) = _split(images, labels, 2)
    rec = ev.Recognizer(method="plda", feature=model).fit(gallery, gallery_labels)
    sizes = []
    original = model.cohort_statistics

    def counted(codes):
        sizes.append(len(codes))
        return original(codes)

    model.cohort_statistics = counted  # an instance attribute: the fixture's model is shared
    try:
        for probe in probes[:3]:
            rec.predict(probe[None])
        assert sizes.count(len(rec.gallery_)) == 1, sizes
        newcomer = gallery[:1] + 1.0
        rec.add(newcomer, ["newcomer"])
        fresh = ev.Recognizer(method="plda", feature=model).fit(
            np.concatenate([gallery, newcomer]), np.concatenate([gallery_labels, ["newcomer"]])
        )
        np.testing.assert_allclose(
            rec.kneighbors(probes[:4], k=3)[0], fresh.kneighbors(probes[:4], k=3)[0], rtol=1e-6
        )
        assert sizes.count(len(rec.gallery_)) == 2  # rec's new gallery, fresh's: once each
        rec.kneighbors(probes[:1])
        assert sizes.count(len(rec.gallery_)) == 2
        cohort = model.cohort_coordinates_
        model.cohort_coordinates_ = cohort.copy()  # what a refit does: a new cohort array
        try:
            rec.kneighbors(probes[:1])
            assert sizes.count(len(rec.gallery_)) == 3
        finally:
            model.cohort_coordinates_ = cohort
        top = model.cohort_top
        model.cohort_top = 5
        try:
            changed = rec.kneighbors(probes[:4], k=3)[0]
            model.cohort_statistics = original
            rebuilt = ev.Recognizer(method="plda", feature=model).fit(
                np.concatenate([gallery, newcomer]),
                np.concatenate([gallery_labels, ["newcomer"]]),
            )
            np.testing.assert_allclose(changed, rebuilt.kneighbors(probes[:4], k=3)[0], rtol=1e-6)
        finally:
            model.cohort_top = top
        own = ev.Recognizer(method="plda", feature=model).fit(gallery, gallery_labels)
        model.cohort_statistics = counted
        sizes.clear()
        own._pairwise_codes(own.gallery_, own.gallery_)  # score_norm's path: a gallery against
        assert sizes == [len(own.gallery_)]  # itself, its statistics once (not twice)
    finally:
        model.cohort_statistics = original
    with pytest.raises(ValueError, match="statistics_b must be"):
        codes = rec.gallery_
        model.pairwise_log_odds(codes[:2], codes, statistics_b=(np.zeros(3), np.ones(3)))


def test_centring_on_the_gallery_answers_as_enrolling_with_the_centred_model(background):
    """centre_on_gallery: the recognizer centres its identity model on its enrolled codes and
    moves them along, and then answers (distances, leave-one-person-out calibration) as a
    recognizer enrolled with centred_on(model, gallery crops) from the start; the model it
    was given is left as it was, and other methods are refused by name."""
    from eigenvision.identity import centred_on

    model, images, labels = background
    (gallery, gallery_labels), (probes, _) = _split(images, labels, 3)
    means = [block.code_mean_.copy() for block in model.plda_.models_.values()]
    rec = ev.Recognizer(method="plda", feature=model).fit(gallery, gallery_labels)
    before = rec.kneighbors(probes[:5], k=3)[0]
    assert rec.centre_on_gallery() is rec and rec.feature is not model
    reference = ev.Recognizer(method="plda", feature=centred_on(model, gallery))
    reference.fit(gallery, gallery_labels)
    np.testing.assert_allclose(rec.gallery_, reference.gallery_, atol=1e-5)
    after = rec.kneighbors(probes[:5], k=3)[0]
    np.testing.assert_allclose(after, reference.kneighbors(probes[:5], k=3)[0], rtol=1e-4)
    assert np.abs(after - before).max() > 1e-3  # the codes did move
    np.testing.assert_allclose(
        rec.gallery_as_strangers(), reference.gallery_as_strangers(), rtol=1e-4
    )
    np.testing.assert_array_equal([b.code_mean_ for b in model.plda_.models_.values()], means)
    with pytest.raises(ValueError, match="method='plda', not method='eigenfaces'"):
        ev.Recognizer(2).fit(gallery, gallery_labels).centre_on_gallery()


def test_plda_recognizer_takes_the_shipped_model_and_recuts_other_crops(att):
    """Regression (hardening round 4): ``Recognizer(method="plda")`` without ``feature=`` was
    refused, though the API contract gives it the shipped identity model; AT&T's 112 x 92 crops
    were refused ("crops must be (n, 120, 104) aligned faces"). The shipped model is now the
    default, and crops of another geometry are cut again on the finder's likeliest face; the
    names equal those of the same recognizer given the crops cut by hand."""
    from eigenvision.faces.compare import identity_crops

    people = np.isin(att.labels, ["s1", "s2", "s3"])
    faces = att[people]
    train = np.arange(len(faces)) % 10 < 2
    rec = ev.Recognizer(method="plda").fit(faces.images[train], faces.labels[train])
    assert rec.feature is not None and tuple(rec.image_shape_) == tuple(rec.feature.shape)
    named = rec.predict(faces.images[~train][::4])
    by_hand = identity_crops(faces, rec.feature)
    reference = ev.Recognizer(method="plda", feature=rec.feature).fit(
        by_hand.images[train], by_hand.labels[train]
    )
    assert named.tolist() == reference.predict(by_hand.images[~train][::4]).tolist()
    assert np.mean(named == faces.labels[~train][::4]) >= 0.8
