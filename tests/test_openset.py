"""Score normalisation (Z-norm, T-norm) against brute-force loops, and in the Recognizer."""

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.openset import class_distances, normalized, znorm_statistics


def _people(n_people=7, per_person=4, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_people, 6, 5))
    spread = rng.uniform(0.1, 0.6, n_people)  # people differ in how much they vary
    images = np.concatenate(
        [centres[p] + spread[p] * rng.normal(size=(per_person, 6, 5)) for p in range(n_people)]
    )
    return images, np.repeat(np.arange(n_people), per_person)


def test_normalisations_equal_their_definitions():
    rng = np.random.default_rng(1)
    labels = np.array([2, 0, 1, 2, 0, 1, 1, 3])
    classes = np.arange(4)
    distances = rng.random((5, 8))
    nearest = class_distances(distances, labels, classes)
    for p in range(5):
        for c in classes:
            assert nearest[p, c] == distances[p, labels == c].min()
    gallery = rng.random((8, 8))
    own = class_distances(gallery, labels, classes)
    stats = znorm_statistics(own, labels, classes)
    for c in classes:
        impostors = [own[i, c] for i in range(8) if labels[i] != c]
        assert stats[c] == pytest.approx([np.mean(impostors), np.std(impostors)])
    z = normalized(nearest, "znorm", stats)
    t = normalized(nearest, "tnorm")
    for p in range(5):
        for c in classes:
            assert z[p, c] == pytest.approx((nearest[p, c] - stats[c, 0]) / stats[c, 1])
            cohort = np.delete(nearest[p], c)
            assert t[p, c] == pytest.approx((nearest[p, c] - cohort.mean()) / cohort.std())
    with pytest.raises(ValueError, match="score_norm"):
        normalized(nearest, "snorm")
    with pytest.raises(ValueError, match="3 enrolled"):
        normalized(nearest[:, :2], "tnorm")


@pytest.mark.parametrize("score_norm", ["znorm", "tnorm"])
def test_recognizer_decides_on_normalised_distances(score_norm, tmp_path):
    images, labels = _people()
    enrolled = labels < 5
    plain = ev.Recognizer(4).fit(images[enrolled], labels[enrolled])
    rec = ev.Recognizer(4, score_norm=score_norm).fit(images[enrolled], labels[enrolled])
    probes = images + 0.05 * np.random.default_rng(2).normal(size=images.shape)
    # the names are the nearest neighbours' either way
    np.testing.assert_array_equal(rec.predict(probes), plain.predict(probes))
    # verify reports the normalised distance, computed here from scratch
    codes = rec.feature_.transform(probes)
    gallery = rec.feature_.transform(images[enrolled])
    raw = np.sqrt(((codes[:, None] - gallery[None]) ** 2).sum(-1))
    nearest = np.stack([raw[:, labels[enrolled] == c].min(1) for c in range(5)], axis=1)
    if score_norm == "znorm":
        own = np.sqrt(((gallery[:, None] - gallery[None]) ** 2).sum(-1))
        own = np.stack([own[:, labels[enrolled] == c].min(1) for c in range(5)], axis=1)
        stats = [
            (own[labels[enrolled] != c, c].mean(), own[labels[enrolled] != c, c].std())
            for c in range(5)
        ]
        expected = (nearest - np.array(stats)[:, 0]) / np.array(stats)[:, 1]
    else:
        cohorts = [np.delete(nearest, c, 1) for c in range(5)]
        expected = np.stack(
            [(nearest[:, c] - cohorts[c].mean(1)) / cohorts[c].std(1) for c in range(5)], axis=1
        )
    for p in (0, 9, 27):
        for c in range(5):
            assert rec.verify(probes[p], c).distance == pytest.approx(expected[p, c], rel=1e-4)
    # calibration on the two people not enrolled accepts at most 1 in 8 of them
    threshold = rec.calibrate_threshold(probes[~enrolled], labels[~enrolled], far=0.125)
    assert np.sum(rec.predict(probes[~enrolled]) != ev.UNKNOWN) <= 1
    assert np.isfinite(threshold)
    with pytest.raises(ValueError, match="call predict"):
        rec.predict_from_neighbors(*rec.kneighbors(probes[:2], k=1))
    loaded = ev.load(ev.save(rec, tmp_path / "normed.npz"))
    np.testing.assert_array_equal(loaded.predict(probes), rec.predict(probes))


def test_enrolment_updates_the_znorm_statistics():
    images, labels = _people()
    rec = ev.Recognizer(4, score_norm="znorm").fit(images[labels < 4], labels[labels < 4])
    rec.add(images[labels >= 4], labels[labels >= 4])
    gallery = rec.gallery_.astype(np.float64)
    own = np.sqrt(((gallery[:, None] - gallery[None]) ** 2).sum(-1))
    own = np.stack([own[:, rec.gallery_labels_ == c].min(1) for c in range(7)], axis=1)
    expected = [
        (own[rec.gallery_labels_ != c, c].mean(), own[rec.gallery_labels_ != c, c].std())
        for c in range(7)
    ]
    np.testing.assert_allclose(rec.score_statistics_, expected, rtol=1e-5)


def test_unknown_score_norm_is_refused():
    images, labels = _people()
    with pytest.raises(ValueError, match="score_norm"):
        ev.Recognizer(4, score_norm="snorm").fit(images, labels)


@pytest.mark.parametrize(
    ("k", "score_norm"), [(1, None), (3, None), (1, "znorm"), (1, "tnorm"), (3, "tnorm")]
)
def test_the_gallery_calibrates_as_its_own_strangers(k, score_norm):
    """gallery_as_strangers: each enrolled image decided as a probe is (the k nearest vote,
    the voted person's normalised distance) with its own person's images left out, against a
    loop over the codes. calibrate_threshold() without images refuses a feature fitted to
    the enrolled people (the open_set experiment: they look farther apart than strangers)."""
    images, labels = _people()
    rec = ev.Recognizer(4, k=k, score_norm=score_norm).fit(images, labels)
    codes = rec.feature_.transform(images)
    raw = np.sqrt(((codes[:, None] - codes[None]) ** 2).sum(-1))
    people = np.arange(7)
    nearest = np.stack([raw[:, labels == c].min(1) for c in people], axis=1)
    z_stats = [(nearest[labels != c, c].mean(), nearest[labels != c, c].std()) for c in people]
    expected = []
    for i in range(len(labels)):
        others = np.flatnonzero(labels != labels[i])
        order = others[np.argsort(raw[i, others], kind="stable")][:k]
        votes = np.bincount(labels[order], minlength=7)
        named = next(label for label in labels[order] if votes[label] == votes.max())
        if score_norm is None:
            expected.append(raw[i, order[0]])
        elif score_norm == "znorm":
            expected.append((nearest[i, named] - z_stats[named][0]) / z_stats[named][1])
        else:
            cohort = np.delete(nearest[i], [labels[i], named])
            expected.append((nearest[i, named] - cohort.mean()) / cohort.std())
    decisions = rec.gallery_as_strangers()
    np.testing.assert_allclose(decisions, expected, rtol=1e-5)  # the gallery keeps float32 codes
    with pytest.raises(ValueError, match="fits its feature to the enrolled people"):
        rec.calibrate_threshold(far=0.1)
    with pytest.raises(ValueError, match="fits its feature to the enrolled people"):
        rec.calibrate_threshold(images[:2], labels[:2] + 10, enrolled=True)
    assert rec.threshold is None


def test_calibrating_on_the_gallery_needs_people_to_leave_out():
    images, labels = _people(n_people=3)
    alone = ev.Recognizer(2).fit(images[labels == 0], labels[labels == 0])
    with pytest.raises(ValueError, match="at least 2 enrolled people"):
        alone.gallery_as_strangers()
    with pytest.raises(ValueError, match="at least 4 enrolled people"):
        ev.Recognizer(2, score_norm="tnorm").fit(images, labels).gallery_as_strangers()
    two = ev.Recognizer(2).fit(images[labels < 2], labels[labels < 2])
    with pytest.raises(ValueError, match="labels were given without images"):
        two.calibrate_threshold(labels=labels[:3])
    with pytest.raises(ValueError, match=r"5 \(k\) images of the others"):
        ev.Recognizer(2, k=5).fit(images[labels < 2], labels[labels < 2]).gallery_as_strangers()
