"""Grouping faces by person: cluster_faces, group_codes and the set's pair mixture."""

import numpy as np
import pytest
from sklearn.cluster import AgglomerativeClustering
from sklearn.metrics import adjusted_rand_score

import eigenvision as ev
from eigenvision.cluster import (
    pair_mixture,
)
from eigenvision.identity.describe import FaceDescriber
from tests.conftest import deep_model_or_skip
from tests.synthetic import likeliest_mixture, two_kinds


class _Scored:
    """The identity model's calls that grouping codes makes, on scores given."""

    def __init__(self, scores):
        self.scores = scores

    def pairwise_log_odds(self, a, b):
        return self.scores.copy()

    def pair_scores_in_blocks(self, codes):
        yield slice(0, len(self.scores)), self.scores.copy()

    def probability(self, llr):
        return 1 / (1 + np.exp(-llr))


@pytest.mark.parametrize("n_people, per_person", [(2, 10), (3, 5), (4, 10), (5, 5), (40, 6)])
def test_grouping_learns_the_set_whatever_its_share_of_pairs_of_one_person(
    n_people, per_person, rng
):
    """Regression: the scores were normalised against each face's scores with the set, whose
    spread the pairs of one person swell: with a share f of them a pair could stand at most
    sqrt((1 - f) / f) deviations out, under the cut of 2 from f = 1/5 on. On IMM's studio
    photos four people in 10 photos each came out as about 35 groups, three in 5 as 15 of one
    face; two in 10 stopped with scikit-learn's InvalidParameterError (a negative distance
    threshold). The set's own two kinds of pairs find the people whatever their share."""
    from eigenvision.faces.groups import group_codes

    scores, truth = two_kinds(rng, n_people, per_person)

    labels = group_codes(np.zeros((len(truth), 1)), _Scored(scores))
    assert adjusted_rand_score(truth, labels) == 1.0


def test_group_codes_refuses_no_faces_and_a_threshold_that_is_no_probability(rng):
    from eigenvision.faces.groups import group_codes

    scores, truth = two_kinds(rng, 2, 3)
    with pytest.raises(ValueError, match="no faces to group"):
        group_codes(np.zeros((0, 1)), _Scored(scores))
    with pytest.raises(ValueError, match="threshold is the probability of one person"):
        group_codes(np.zeros((len(truth), 1)), _Scored(scores), threshold=2.0)
    assert group_codes(np.zeros((1, 1)), _Scored(scores)).tolist() == [0]


def test_grouping_cuts_the_mixtures_probability_at_the_default_or_the_threshold(rng):
    """Where the kinds of pairs overlap the cut matters: the groups are SciPy's average
    linkage on 1 - scikit-learn's posterior of the higher kind, cut at LEARNT_CUT by default
    and at ``threshold`` when given (two cuts that group this set differently)."""
    from eigenvision.faces.groups import LEARNT_CUT, group_codes

    scores, truth = two_kinds(rng, 10, 6, spread=5.0)

    n = len(truth)
    pairs = scores[np.triu_indices(n, 1)].reshape(-1, 1)
    mixture = likeliest_mixture(pairs)
    high = int(np.argmax(mixture.means_[:, 0]))
    same = mixture.predict_proba(scores.reshape(-1, 1))[:, high].reshape(n, n)
    found = {}
    for threshold in (None, 0.7):
        cut = LEARNT_CUT if threshold is None else threshold
        found[threshold] = group_codes(np.zeros((n, 1)), _Scored(scores), threshold=threshold)
        reference = _reference_groups(1 - same, 1 - cut)
        assert adjusted_rand_score(reference, found[threshold]) == 1.0
    assert adjusted_rand_score(found[None], found[0.7]) < 1.0


def _imm_photos(imm_colour, count_per_person=3):
    """IMM photos (people never in the identity model's training) with their known faces."""
    from tests.conftest import KnownFaces, known_face

    chosen = [i for i, name in enumerate(imm_colour.names) if int(name[3:5]) <= count_per_person]
    photos, faces = [], {}
    for number, index in enumerate(chosen):
        photo = imm_colour.images[index].copy()
        photo[0, 0] = number / 100  # names the photo for KnownFaces
        photos.append(photo)
        eyes = [imm_colour.landmarks[eye][index] for eye in ("left_eye", "right_eye")]
        faces[number] = [known_face(*eyes)]
    return photos, imm_colour.labels[chosen], KnownFaces(faces)


@pytest.fixture(scope="module")
def imm_colour():
    from tests.conftest import require_dataset

    require_dataset("imm")
    return ev.datasets.load_imm(as_gray=False)


def _reference_groups(distances, cut):
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    distances = distances.copy()
    np.fill_diagonal(distances, 0)
    tree = linkage(squareform(distances, checks=False), method="average")
    return fcluster(tree, t=cut, criterion="distance")


def _labels(groups, n):
    labels = np.full(n, -1)
    for number, group in enumerate(groups):
        labels[[index for index, _ in group]] = number
    assert (labels >= 0).all()
    return labels


def test_cluster_faces_is_average_linkage_on_the_sets_probability_of_one_person(imm_colour):
    """cluster_faces' groups equal SciPy's average linkage on 1 - the probability of one
    person that scikit-learn's two-component mixture of the set's pair scores gives (its
    predict_proba), cut at LEARNT_CUT; without adapting, on 1 - the model's calibrated
    P(same) cut at even odds. Every face is in exactly one group, largest group first."""
    from eigenvision.faces.compare import model_crop
    from eigenvision.faces.groups import LEARNT_CUT

    photos, truth, finder = _imm_photos(imm_colour)
    model = ev.default_identity_model()
    groups = ev.cluster_faces(photos, finder=finder, model=model)
    assert [len(g) for g in groups] == sorted((len(g) for g in groups), reverse=True)
    crops = np.stack([model_crop(photo, finder.find(photo)[0], model) for photo in photos])
    # the model's scores (checked against a loop in test_identity); the rest written out here
    scores = model.pairwise_scores(crops)
    n = len(scores)
    pairs = np.array([scores[a, b] for a in range(n) for b in range(a + 1, n)]).reshape(-1, 1)
    mixture = likeliest_mixture(pairs)
    high = int(np.argmax(mixture.means_[:, 0]))
    same = mixture.predict_proba(scores.reshape(-1, 1))[:, high].reshape(n, n)
    reference = _reference_groups(1 - same, 1 - LEARNT_CUT)
    assert adjusted_rand_score(reference, _labels(groups, n)) == 1.0
    assert adjusted_rand_score(truth, _labels(groups, n)) == 1.0
    plain = ev.cluster_faces(photos, finder=finder, model=model, adapt=False)
    reference = _reference_groups(1 - model.probability(scores), 0.5)
    assert adjusted_rand_score(reference, _labels(plain, n)) == 1.0
    assert len(ev.cluster_faces(photos, finder=finder, model=model, n_people=12)) == 12


def test_cluster_faces_groups_people_the_model_never_saw(imm_colour):
    """IMM's 12 people (studio photos, never in the LFW-trained model): the calibrated
    probability alone merges most of them (one studio makes every pair look alike); the
    set's own two kinds of pairs find the 12 people without being told how many, and as
    well two or four of them in 10 photos each (regression: 2 x 10 stopped with an error,
    4 x 10 came out as about 35 groups)."""
    photos, truth, finder = _imm_photos(imm_colour, count_per_person=10)
    model = ev.default_identity_model("classical")  # the deep one tells IMM's men apart better
    adapted = _labels(ev.cluster_faces(photos, finder=finder, model=model), len(photos))
    plain = _labels(ev.cluster_faces(photos, finder=finder, model=model, adapt=False), len(photos))
    assert abs(adapted.max() + 1 - 12) <= 2  # the number of people within 20%
    assert adjusted_rand_score(truth, adapted) > 0.9
    assert adjusted_rand_score(truth, plain) < 0.5
    for people in (2, 4):
        chosen = np.flatnonzero(np.isin(truth, np.unique(truth)[:people]))
        few = ev.cluster_faces([photos[i] for i in chosen], finder=finder, model=model)
        assert adjusted_rand_score(truth[chosen], _labels(few, len(chosen))) == 1.0


def test_cluster_faces_answers_trivial_and_bad_input_clearly(imm_colour):
    from tests.conftest import KnownFaces

    photos, _, finder = _imm_photos(imm_colour, count_per_person=1)
    model = ev.default_identity_model()
    one = ev.cluster_faces(photos[:1], finder=finder, model=model)
    assert len(one) == 1 and one[0][0][0] == 0 and one[0][0][1] is finder.find(photos[0])[0]
    blank = np.zeros((200, 200))
    assert ev.cluster_faces([blank], finder=KnownFaces({0: []}), model=model) == []
    with pytest.raises(ValueError, match="no photos given"):
        ev.cluster_faces([], finder=finder, model=model)
    with pytest.raises(ValueError, match="n_people=13 exceeds the 12 faces found"):
        ev.cluster_faces(photos, finder=finder, model=model, n_people=13)
    for threshold in (1.5, 0.0, float("nan")):
        with pytest.raises(ValueError, match="threshold is the probability of one person"):
            ev.cluster_faces(photos, finder=finder, model=model, threshold=threshold)
    with pytest.raises(ValueError, match="method must be one of"):
        ev.cluster_faces(photos, finder=finder, model=model, method="dbscan")


def test_cluster_faces_groups_the_faces_codes_not_their_crops(rng, monkeypatch):
    """cluster_faces describes the crops a batch at a time as the photos come and keeps the
    codes: while the set is grouped, the memory held (tracemalloc) is under half of what the
    crops take, and the groups are those of the crops stacked (``group_crops``)."""
    import tracemalloc

    from eigenvision.faces import groups as module

    shape, n_people, per_person = (64, 64), 40, 6
    people = rng.random((n_people, *shape))
    crops = np.repeat(people, per_person, axis=0) + 0.3 * rng.random(
        (n_people * per_person, *shape)
    )
    labels = np.repeat(np.arange(n_people), per_person)
    model = ev.IdentityModel(
        FaceDescriber(shape=shape, descriptor="pixels", illumination=False, mirror=False),
        pca_components=30,
        lda_components=None,
        n_components=10,
        cohort_size=10,
        cohort_top=3,
    ).fit(crops[::2], labels[::2])
    monkeypatch.setattr(module, "finder_and_model", lambda finder, model: (finder, model))
    monkeypatch.setattr(module, "CROPS_AT_ONCE", 32)
    # each "photo" holds two faces: their crops as faces_of_photo cuts them
    monkeypatch.setattr(
        module,
        "faces_of_photo",
        lambda photo, *_, **__: ([photo, photo + 1], crops[photo : photo + 2], None),
    )
    held = []
    linkage = module.average_linkage

    def measured(distances, cut):
        held.append(tracemalloc.get_traced_memory()[0])
        return linkage(distances, cut)

    monkeypatch.setattr(module, "average_linkage", measured)
    tracemalloc.start()
    try:
        found = ev.cluster_faces(list(range(0, len(crops), 2)), finder=None, model=model)
    finally:
        tracemalloc.stop()
    assert held and held[0] < crops.nbytes / 2
    got = np.empty(len(crops), dtype=np.int64)
    for group, members in enumerate(found):
        got[[face for _, face in members]] = group
    expected = module.group_crops(crops, model)
    assert adjusted_rand_score(expected, got) == 1.0 and len(found) > 1


def test_cluster_faces_takes_one_photo_as_a_set_of_one(tmp_path):
    """Regression (issue 80): one colour photo became H "photos" (its rows) and gave [], a path
    was iterated by character ("/: is a folder"), a Path was not iterable. One photo, given as
    an array or a path, is a sequence of one: its faces, grouped."""
    from PIL import Image
    from skimage import data

    photo = data.astronaut()
    path = tmp_path / "astronaut.png"
    Image.fromarray(photo).save(path)
    expected = ev.cluster_faces([photo], model="classical")
    assert expected  # the astronaut's face (and the patch the finder takes for one)
    for given in (photo, str(path), path):
        groups = ev.cluster_faces(given, model="classical")
        assert [[i for i, _ in group] for group in groups] == [
            [i for i, _ in group] for group in expected
        ]
        assert all(i == 0 for group in groups for i, _ in group)


def _faces_of_people(model, rng, n_people, seen=6):
    """Codes of ``n_people`` people seen ``seen`` times each (unit descriptions, spread 0.35)."""
    people = rng.normal(size=(n_people, 128))
    rows = np.repeat(people, seen, axis=0) + 0.35 * rng.normal(size=(seen * n_people, 128))
    return model.encode_descriptors(rows / np.linalg.norm(rows, axis=1, keepdims=True) * 0.6)


def test_grouping_codes_holds_the_condensed_pairs_not_the_matrix(rng):
    """Regression (issue 79): grouping LFW's 9,520 faces held the n x n scores and
    scikit-learn's copies of them (2.3 GiB over the codes, 7.5 GB through cluster_faces); the
    pairs are now scored in blocks into their condensed triangle and linked by SciPy's
    average linkage on it: memory grows by about 16 bytes a pair (the triangle and SciPy's
    copy of it), where it grew by 44. The groups equal scikit-learn's on the full matrix."""
    import tracemalloc

    from eigenvision.faces.groups import LEARNT_CUT, group_codes

    model = deep_model_or_skip()
    codes = _faces_of_people(model, rng, 200)
    scores = model.pairwise_log_odds(codes, codes)
    mixture = pair_mixture(scores)
    assert mixture is not None  # 200 people seen 6 times: two kinds of pairs to learn
    reference = AgglomerativeClustering(
        n_clusters=None, metric="precomputed", linkage="average", distance_threshold=1 - LEARNT_CUT
    ).fit_predict(1 - mixture.probability(scores))
    assert adjusted_rand_score(reference, group_codes(codes, model)) == 1.0
    del scores
    peaks, pairs = [], []
    for n_people in (200, 500):
        codes = _faces_of_people(model, rng, n_people)
        tracemalloc.start()
        group_codes(codes, model)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        pairs.append(len(codes) * (len(codes) - 1) / 2)
    assert (peaks[1] - peaks[0]) / (pairs[1] - pairs[0]) < 28  # bytes a pair
