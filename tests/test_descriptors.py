"""Illumination normalisation, LBP and HOG descriptors, the identity model and compare_faces."""

import json

import numpy as np
import pytest
from conftest import UNLEARNT_DESCRIPTIONS
from PIL import Image
from skimage.feature import daisy, hog, local_binary_pattern

import eigenvision as ev
from eigenvision.cli import main
from eigenvision.descriptors import face_descriptors, lbp_histograms


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


def test_hog_of_a_large_stack_holds_a_block_of_images_at_a_time(rng, monkeypatch):
    """Regression: hog_descriptors made its temporaries (about eight arrays the size of the whole
    stack in float64) for every image at once, and an identity model's fit describes thousands
    of crops in one call (CHANGELOG has the peak it cost). It now describes blocks of
    _HOG_BLOCK_PIXELS pixels, with the same rows whatever the block."""
    import tracemalloc

    from eigenvision import descriptors

    images = rng.random((400, 64, 48)).astype(np.float32)
    whole = descriptors.hog_descriptors(images, transform_sqrt=True)
    monkeypatch.setattr(descriptors, "_HOG_BLOCK_PIXELS", 7 * 64 * 48)  # 7 images a block
    tracemalloc.start()
    try:
        blocks = descriptors.hog_descriptors(images, transform_sqrt=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(blocks, whole)
    # the rows returned and one block's temporaries (each 7 x 64 x 48 float64, 172 KB), not
    # the 400 images' (each 9.8 MB)
    assert peak - blocks.nbytes < 4 * 2**20, peak / 2**20


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
        shape=(40, 36),
        descriptor=("lbp+hog", "daisy"),
        illumination=(True, False),
        descriptor_scales=((1.0,), (1.0,)),
        lbp_cells=(2, 2),
        hog_cell=8,
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
    model = ev.IdentityModel(
        shape=(112, 92), pca_components=100, n_components=25, **UNLEARNT_DESCRIPTIONS
    )
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


def test_compare_faces_with_the_shipped_models(imm, tmp_path, capsys):
    """IMM studio portraits (people the identity model never saw): two photos of one person
    are judged likelier one person than photos of two (the threshold, calibrated on LFW's news
    photos, is not: see the CHANGELOG); the same photo twice is accepted; a 16-bit copy answers
    the same; a photo without a face is named in the error."""

    def photo(person, shot):
        return imm.images[list(imm.names).index(f"{person:02d}_{shot:02d}.jpg")]

    same = ev.compare_faces(photo(1, 1), photo(1, 2))
    apart = ev.compare_faces(photo(1, 1), photo(2, 1))
    assert same.accepted and -same.distance > -apart.distance
    twice = ev.compare_faces(photo(3, 1), photo(3, 1))
    assert twice.accepted and twice.probability > 0.9
    grey16 = (photo(1, 2) * 65535).astype(np.uint16)
    again = ev.compare_faces(photo(1, 1), grey16)
    assert again.distance == pytest.approx(same.distance, abs=0.05 * abs(same.distance) + 0.5)
    with pytest.raises(ev.NoFaceError, match="photo_b shows no face"):
        ev.compare_faces(photo(1, 1), np.full((200, 200), 0.5))
    files = []
    for name, image in (("a.png", photo(1, 1)), ("b.png", photo(1, 2))):
        Image.fromarray((image * 255).astype(np.uint8)).save(tmp_path / name)
        files.append(str(tmp_path / name))
    assert main(["compare", *files, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert set(answer) == {
        "same_person",
        "probability",
        "score",
        "threshold",
        "model",
        "face_threshold",
        "photos",
    }
    assert answer["face_threshold"] == ev.default_finder().identity_threshold  # issue 80
    assert main(["compare", *files, "--face-threshold", "0.999999"]) == 2
    assert "identity threshold 0.999999:" in capsys.readouterr().err
    Image.fromarray(np.full((200, 200), 128, np.uint8)).save(tmp_path / "blank.png")
    assert main(["compare", files[0], str(tmp_path / "blank.png")]) == 2
    assert "blank.png shows no face" in capsys.readouterr().err


def test_compare_and_cluster_refuse_a_finder_or_model_of_another_kind():
    """Regression: compare_faces(a, b, model=a_finder) ended in AttributeError ('FaceFinder' object
    has no attribute 'eye_positions'); a model or a path given as the finder, likewise."""
    photo = np.zeros((100, 100))
    finder, model = ev.default_finder(), ev.default_identity_model()
    for call in (ev.compare_faces, lambda a, b, **kw: ev.cluster_faces([a, b], **kw)):
        with pytest.raises(TypeError, match="or an IdentityModel, got FaceFinder"):
            call(photo, photo, model=finder)
        with pytest.raises(TypeError, match="finder must be a face finder.*got IdentityModel"):
            call(photo, photo, finder=model)
        with pytest.raises(ev.EigenvisionError, match="no identity model file at"):
            call(photo, photo, model="no_such_model.npz")
