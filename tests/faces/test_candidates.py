"""The face finder's cascade (issue 41): a linear discriminant slid over the pyramid by one
correlation, the DFFS of its survivors only, and the finder that uses them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage
from sklearn.linear_model import LogisticRegression

import eigenvision as ev
from eigenvision.detection import linear_score_map
from eigenvision.faces import photos, recipes
from eigenvision.faces.candidates import (
    Prefilter,
    background_windows,
    cascade_map,
    fit_prefilter,
)
from eigenvision.faces.geometry import face_windows, jittered_face_windows
from eigenvision.normalize import unit_norm
from tests.conftest import in_format_3, require_dataset_folder


def _brute_scores(image, weights, bias):
    """``weights . x~ + bias`` of every window by a loop over windows (x~ zero-mean, unit norm)."""
    h, w = weights.shape
    rows, cols = image.shape[0] - h + 1, image.shape[1] - w + 1
    out = np.empty((rows, cols))
    for i in range(rows):
        for j in range(cols):
            window = image[i : i + h, j : j + w] - image[i : i + h, j : j + w].mean()
            norm = np.linalg.norm(window)
            out[i, j] = (
                -np.inf
                if norm <= 1e-3 * np.sqrt(h * w)
                else (np.sum(weights * window) / norm + bias)
            )
    return out


def test_linear_scores_equal_a_loop_over_standardised_windows(rng):
    image = rng.random((40, 52))
    image[:20, :25] = 0.5  # flat: no pattern, -inf
    weights = rng.normal(size=(13, 11))
    scores = linear_score_map(image, weights, 0.7)
    expected = _brute_scores(image, weights, 0.7)
    assert np.isneginf(scores).sum() > 0
    np.testing.assert_array_equal(np.isneginf(scores), np.isneginf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(scores[finite], expected[finite], rtol=1e-10, atol=1e-10)
    # windows are zero-mean: a constant added to the weights changes nothing
    np.testing.assert_allclose(linear_score_map(image, weights + 3.0, 0.7)[finite], scores[finite])
    # float32 photos give the same scores to float32 accuracy
    np.testing.assert_allclose(
        linear_score_map(image.astype(np.float32), weights, 0.7)[finite], scores[finite], atol=1e-5
    )


def test_standardized_correlations_equal_the_linear_scores_of_each_template(rng):
    """Every template's ``u . x~`` at once equals its own linear score map (the loop over
    standardised windows, ``_brute_scores``), zero on flat windows, which are flagged."""
    from eigenvision.detection import standardized_correlations

    image = rng.random((40, 52))
    image[:20, :25] = 0.5
    templates = rng.normal(size=(4, 13, 11))
    products, flat = standardized_correlations(image, templates)
    assert len(products) == len(templates)
    for template, product in zip(templates, products, strict=True):
        expected = _brute_scores(image, template, 0.0)
        np.testing.assert_array_equal(flat, np.isneginf(expected))
        np.testing.assert_allclose(product[~flat], expected[~flat], rtol=1e-10, atol=1e-10)
        assert np.all(product[flat] == 0.0)
    with pytest.raises(ValueError, match="finite"):
        standardized_correlations(image, np.full((1, 3, 3), np.nan))
    with pytest.raises(ValueError, match="at least the window"):
        standardized_correlations(image[:5], templates)


def test_log_distance_maps_equal_log_distances_of_every_window(rng):
    """The maps of two spaces (one correlation of their stacked components and means) equal
    ``log_distances`` of each standardised window cut by hand; flat windows are infinitely
    far (DFFS) with DIFS at the floor, as each space's own window_maps gave them."""
    from numpy.lib.stride_tricks import sliding_window_view

    from eigenvision.faces.decision import log_distance_maps, log_distances
    from eigenvision.normalize import unit_norm

    h, w = 9, 7
    spaces = [ev.Eigenspace(k).fit(unit_norm(rng.random((n, h, w)))) for k, n in ((3, 20), (5, 30))]
    image = rng.random((30, 34))
    image[:12, :12] = 0.25
    maps = log_distance_maps(image, spaces)
    windows = sliding_window_view(image, (h, w))
    flat = windows.std(axis=(2, 3)) <= 1e-3
    rows, cols = np.nonzero(~flat)
    expected = log_distances(unit_norm(windows[rows, cols]).reshape(len(rows), -1), spaces)
    for column, found in enumerate(maps):
        np.testing.assert_allclose(found[rows, cols], expected[:, column], rtol=0, atol=1e-9)
        assert np.all(found[flat] == (np.inf if column % 2 == 0 else np.log(1e-12)))
    assert flat.sum() > 0


@pytest.mark.parametrize(
    "image, weights, bias, message",
    [
        (np.zeros((5, 5)), np.ones((6, 6)), 0.0, "at least the window"),
        (np.zeros((9, 9)), np.ones(6), 0.0, r"\(h, w\) array"),
        (np.zeros((9, 9)), np.full((3, 3), np.nan), 0.0, "finite"),
        (np.zeros((9, 9)), np.ones((3, 3)), np.inf, "bias"),
        (np.zeros((9, 9), complex), np.ones((3, 3)), 0.0, "complex"),
    ],
)
def test_bad_linear_score_inputs_are_named(image, weights, bias, message):
    with pytest.raises((ValueError, TypeError), match=message):
        linear_score_map(image, weights, bias)


def test_the_cascade_scores_its_survivors_only_as_a_loop_would(rng):
    """Survivors: at least the cut and the best of their 3 x 3 neighbours; their score the
    weighted log DFFS (as the DFFS map of every window has it) minus the linear score; every
    other window +inf."""
    space = ev.Eigenspace(4).fit(unit_norm(rng.random((40, 12, 10))))
    image = rng.random((36, 40))
    weights = rng.normal(size=(12, 10))
    linear = _brute_scores(image, weights, 0.2)
    cut = np.quantile(linear, 0.7)
    prefilter = Prefilter(weights, 0.2, cut, 2.0)
    values = cascade_map(image, space, prefilter)
    peak = linear == ndimage.maximum_filter(linear, 3, mode="nearest")
    survivors = (linear >= cut) & peak
    assert 0 < survivors.sum() < 0.2 * survivors.size
    np.testing.assert_array_equal(np.isfinite(values), survivors)
    rows, cols = np.nonzero(survivors)
    dffs = ev.dffs_map(image, space, normalize="window")[rows, cols]
    expected = 2.0 * np.log(dffs) - linear[rows, cols]
    np.testing.assert_allclose(values[rows, cols], expected, rtol=1e-7)


@pytest.mark.parametrize("stride, window", [(2, (12, 10)), (2, (13, 11)), (3, (13, 11))])
def test_strided_linear_scores_are_the_loops_on_the_grid(rng, stride, window):
    """At stride s the map is the loop's every s-th window in both directions (its polyphase
    correlation and grid box sums exact), flat windows -inf, even and odd windows alike."""
    image = rng.random((41, 50))
    image[:20, :25] = 0.5
    weights = rng.normal(size=window)
    expected = _brute_scores(image, weights, 0.7)[::stride, ::stride]
    scores = linear_score_map(image, weights, 0.7, stride=stride)
    assert scores.shape == expected.shape
    np.testing.assert_array_equal(np.isneginf(scores), np.isneginf(expected))
    assert np.isneginf(scores).sum() > 0
    finite = np.isfinite(expected)
    np.testing.assert_allclose(scores[finite], expected[finite], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("stride", [0, -2, 1.5, True, "2"])
def test_a_bad_stride_is_named(rng, stride):
    with pytest.raises(ValueError, match="stride"):
        linear_score_map(rng.random((20, 20)), rng.normal(size=(5, 5)), stride=stride)


def test_the_coarse_to_fine_cascade_moves_grid_survivors_to_their_cells_best(rng):
    """At stride 2: the grid's windows at least the cut and the best of their 3 x 3 grid
    neighbours survive, each moved to the best of the 2 x 2 windows of its cell (a loop over
    windows gives them all), scored as at stride 1; every other window +inf."""
    space = ev.Eigenspace(4).fit(unit_norm(rng.random((40, 12, 10))))
    image = rng.random((37, 41))
    weights = rng.normal(size=(12, 10))
    linear = _brute_scores(image, weights, 0.2)
    grid = linear[::2, ::2]
    cut = np.quantile(grid, 0.7)
    values = cascade_map(image, space, Prefilter(weights, 0.2, cut, 2.0, 2))
    peak = grid == ndimage.maximum_filter(grid, 3, mode="nearest")
    expected = np.full(linear.shape, np.inf)
    for i, j in zip(*np.nonzero((grid >= cut) & peak), strict=True):
        cell = linear[2 * i : 2 * i + 2, 2 * j : 2 * j + 2]
        a, b = np.unravel_index(np.argmax(cell), cell.shape)
        row, col = 2 * i + a, 2 * j + b
        dffs = ev.dffs_map(image, space, normalize="window")[row, col]
        expected[row, col] = 2.0 * np.log(dffs) - linear[row, col]
    assert 0 < np.isfinite(expected).sum() < 0.1 * expected.size
    np.testing.assert_array_equal(np.isfinite(values), np.isfinite(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(values[finite], expected[finite], rtol=1e-7)


@pytest.mark.parametrize("stride", [1, 2, 3])
def test_the_cascade_of_images_stacked_and_masked_is_each_images_own(rng, stride):
    """Two images on one canvas, the windows that cross from one to the other masked: every
    window of each gets the score the cascade gives it on its image alone (no neighbour or
    cell move crosses over), masked windows +inf."""
    space = ev.Eigenspace(4).fit(unit_norm(rng.random((40, 12, 10))))
    weights = rng.normal(size=(12, 10))
    top, bottom = rng.random((27, 40)), rng.random((31, 33))
    prefilter = Prefilter(weights, 0.2, np.quantile(_brute_scores(top, weights, 0.2), 0.6), 2.0)
    prefilter = prefilter._replace(stride=stride)
    start = -(-top.shape[0] // stride) * stride  # the bottom image on a row of the grid
    canvas = np.zeros((start + bottom.shape[0], 40))
    canvas[: top.shape[0]], canvas[start:, :33] = top, bottom
    valid = np.zeros((canvas.shape[0] - 11, 40 - 9), dtype=bool)
    valid[: top.shape[0] - 11], valid[start : start + bottom.shape[0] - 11, : 33 - 9] = True, True
    values = cascade_map(canvas, space, prefilter, valid=valid)
    assert np.isinf(values[~valid]).all()
    for image, at in ((top, 0), (bottom, start)):
        alone = cascade_map(image, space, prefilter)
        stacked = values[at : at + alone.shape[0], : alone.shape[1]]
        np.testing.assert_array_equal(np.isfinite(stacked), np.isfinite(alone))
        assert np.isfinite(alone).sum() > 3
        np.testing.assert_allclose(stacked, alone, rtol=1e-9)


def test_a_pyramids_small_levels_searched_on_one_canvas_give_each_levels_candidates(
    rng, monkeypatch
):
    """Stage 1 scores a photo's small pyramid levels in one cascade call (a mosaic of them):
    the same candidates as one call per level, in the same order."""
    from eigenvision import search
    from eigenvision.faces import candidates as module

    space = ev.Eigenspace(4).fit(unit_norm(rng.random((40, 12, 10))))
    weights = rng.normal(size=(12, 10))
    image = ndimage.gaussian_filter(rng.random((150, 170)), 1.0)
    cut = np.quantile(_brute_scores(image, weights, 0.0), 0.8)
    shapes = []
    mapped = module.cascade_map

    def counted(scaled, *args, **kwargs):
        shapes.append(scaled.shape)
        return mapped(scaled, *args, **kwargs)

    monkeypatch.setattr(module, "cascade_map", counted)
    found = {}
    for limit in (1, search.MOSAIC_LEVEL_PIXELS):
        monkeypatch.setattr(search, "MOSAIC_LEVEL_PIXELS", limit)
        shapes.clear()
        found[limit] = module.find_candidates(
            image,
            space,
            (12, 10),
            count=300,
            rotations=(0.0, 20.0),
            prefilter=Prefilter(weights, 0.0, cut, 1.0, 2),
        )
        found[limit, "calls"] = len(shapes)
    alone, stacked = found[1], found[search.MOSAIC_LEVEL_PIXELS]
    assert found[search.MOSAIC_LEVEL_PIXELS, "calls"] < found[1, "calls"] - 10
    assert len(stacked) == len(alone) > 30
    np.testing.assert_allclose(
        [np.concatenate(c[:2]).tolist() + [c[2]] for c in stacked],
        [np.concatenate(c[:2]).tolist() + [c[2]] for c in alone],
        rtol=1e-9,
        atol=1e-9,
    )


def test_the_prefilter_is_scikit_learns_logistic_regression_cut_at_the_recall(rng):
    faces = unit_norm(rng.normal(0.3, 1.0, (300, 8, 6)) + np.linspace(0, 2, 48).reshape(8, 6))
    nonfaces = unit_norm(rng.normal(0.0, 1.0, (900, 8, 6)))
    prefilter = fit_prefilter(faces, nonfaces, recall=0.95)
    X = np.concatenate([faces, nonfaces]).reshape(1200, 48)
    model = LogisticRegression(class_weight="balanced", max_iter=5000).fit(
        X, np.r_[np.ones(300), np.zeros(900)]
    )
    ours = X @ prefilter.weights.ravel() + prefilter.bias
    np.testing.assert_allclose(ours, model.decision_function(X), atol=1e-6)
    assert np.mean(ours[:300] >= prefilter.cut) == pytest.approx(0.95, abs=1 / 300)
    assert abs(prefilter.weights.mean()) < 1e-12


def test_jittered_windows_without_jitter_are_the_training_windows(rng):
    images = rng.random((3, 80, 80))
    eyes = {"left_eye": np.array([[30.0, 35.0]] * 3), "right_eye": np.array([[50.0, 36.0]] * 3)}
    still = jittered_face_windows(images, eyes, iod=16, copies=1, scale=0.0, shift=0.0)
    np.testing.assert_allclose(still, unit_norm(face_windows(images, eyes, iod=16)), atol=1e-12)
    moved = jittered_face_windows(images, eyes, iod=16, copies=2)
    assert moved.shape == (12, *still.shape[1:])
    np.testing.assert_allclose(np.linalg.norm(moved.reshape(12, -1), axis=1), 1.0)
    assert not np.allclose(moved[:6], np.concatenate([still, still])[:6])


def test_background_windows_avoid_the_faces_and_flat_walls(rng):
    """A photo that is a blank wall but for a textured face: every window is flat or overlaps
    the face, so none is drawn; without the face's box the textured windows are drawn."""
    photo = np.full((120, 160), 0.4)
    photo[:, 100:] = rng.random((120, 60))
    box = (100.0, 0.0, 60.0, 120.0)
    assert len(background_windows([(photo, [box])], (26, 22), per_image=600, seed=1)) == 0
    windows = background_windows([(photo, [])], (26, 22), per_image=600, seed=1)
    assert len(windows) > 10
    np.testing.assert_allclose(np.linalg.norm(windows.reshape(len(windows), -1), axis=1), 1.0)


def test_a_finder_without_a_prefilter_searches_every_windows_dffs(tmp_path):
    """Model files written before the cascade (no prefilter state) load with
    ``prefilter_recall=None``: their stage 1 is the DFFS of every window, as before; a prefilter
    of another shape than the window is refused by name."""
    import json

    finder = photos.default_finder()
    path = in_format_3(ev.save(finder, tmp_path / "finder.npz"))
    with np.load(path, allow_pickle=False) as archive:
        stored = {key: archive[key] for key in archive.files}
    header = json.loads(bytes(stored["__header__"]).decode())
    header["model"]["params"].pop("prefilter_recall")
    for name in ("prefilter_weights_", "prefilter_bias_", "prefilter_cut_"):
        header["model"]["state"].pop(name, None)
        header["arrays"].pop(name, None)
        stored.pop(name, None)
    header["format_version"] = 1  # a file from before: the format its parameters had
    stored["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    old = tmp_path / "old.npz"
    np.savez(old, **stored)
    loaded = ev.load(old)
    assert loaded.search.prefilter_recall is None and loaded.search.prefilter() is None
    image = photos.sample_picture("astronaut")[::2, ::2]
    searched = loaded.set_params(search__rotations=(0.0,)).search.candidates(image, 50)
    space = loaded.search.face_space_
    dffs = ev.dffs_map(image, space, normalize="window", min_contrast=0.02)
    # DFFS values, not cascade scores: none negative, the best no worse than the finest level's
    values = np.array([value for *_, value in searched])
    assert values.min() >= 0 and values[0] <= dffs.min() + 1e-9
    finder.search.prefilter_weights_ = finder.search.prefilter_weights_[:, :-1]
    with pytest.raises(ValueError, match="prefilter_weights_"):
        ev.validation.check_state(finder)


def test_lfw_training_faces_come_from_training_people_with_their_eyes_placed():
    """lfw_split deals every 5th person (by name) out, whole; lfw_faces keeps at most `limit`
    photos of the people given, labelled by their folders, and only those whose placed eyes lie
    where LFW puts the face (eye distance within 3/4-4/3 of LFW_EYES', midpoint within a
    quarter of it)."""
    require_dataset_folder("lfw_train")
    files = ev.datasets.lfw_files()
    train, test = photos.lfw_split(person for person, _ in files)
    names = sorted({person for person, _ in files})
    assert test == set(names[::5]) and not train & test and train | test == set(names)
    people = set(sorted(train)[:40])
    faces = recipes.lfw_faces(photos.default_finder().placer_, people, limit=25)
    assert 0.8 * 25 <= len(faces) <= 25 and set(faces.labels) <= people
    pairs = zip(faces.labels, faces.names, strict=True)
    assert all(name.startswith(f"{label}/") for label, name in pairs)
    expected = np.asarray(ev.datasets.LFW_EYES)
    distance = np.linalg.norm(expected[1] - expected[0])
    left, right = faces.landmarks["left_eye"], faces.landmarks["right_eye"]
    ratio = np.linalg.norm(right - left, axis=1) / distance
    shift = np.linalg.norm((left + right) / 2 - expected.mean(axis=0), axis=1) / distance
    assert np.all((ratio >= 0.75) & (ratio <= 4 / 3) & (shift <= 0.25))


def test_the_cascades_survivors_are_the_best_of_their_neighbours(rng):
    """``_best_of_neighbours`` on the windows above the cut equals the 3 x 3 maximum filter
    (nearest-edge mode) on the whole map, with ties, flat (-inf) windows and the edges."""
    from eigenvision.faces.candidates import _best_of_neighbours

    scores = rng.integers(0, 5, (60, 45)).astype(float)
    scores[rng.random(scores.shape) < 0.1] = -np.inf
    above = scores >= 3
    expected = np.nonzero(above & (scores == ndimage.maximum_filter(scores, 3, mode="nearest")))
    rows, cols = _best_of_neighbours(scores, *np.nonzero(above))
    assert len(rows) > 20 and (rows == 0).any() and (cols == 44).any()
    np.testing.assert_array_equal(rows, expected[0])
    np.testing.assert_array_equal(cols, expected[1])
