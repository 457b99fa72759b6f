"""Searches over score maps (eigenvision.search): multi-scale minima, suppression."""

import warnings
from dataclasses import astuple

import numpy as np
import pytest
from scipy import ndimage

import eigenvision as ev
from eigenvision.detection import dffs_map


def test_multiscale_minima_equal_a_brute_force_search_in_parallel_or_not(rng, monkeypatch):
    """Every level's local minima (a loop over windows), in input pixels, best first; the same
    with the levels searched in threads as on one."""
    from eigenvision import search
    from eigenvision.transform import resize

    space = ev.Eigenspace(3).fit(rng.random((30, 9, 8)))
    image = ndimage.gaussian_filter(rng.random((260, 240)), 2)
    scales = [1.0, 1.3, 2.1]

    def score_map(scaled):
        return dffs_map(scaled, space, normalize="window")

    found = search.multiscale_minima(image, score_map, (9, 8), scales, radius=2)
    expected = []
    for scale in scales:
        size = (round(260 / scale), round(240 / scale))
        scaled = image if scale == 1.0 else resize(image, size)
        values = score_map(scaled)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                around = values[max(0, i - 2) : i + 3, max(0, j - 2) : j + 3]
                if values[i, j] == around.min():  # the filter's edge repeats the border
                    fy, fx = 260 / size[0], 240 / size[1]
                    expected.append((j * fx, i * fy, 8 * fx, 9 * fy, scale, values[i, j]))
    expected.sort(key=lambda row: row[-1])
    assert len(found) == len(expected) > 100
    np.testing.assert_allclose([astuple(d) for d in found], expected, rtol=1e-12)
    monkeypatch.setattr(search, "n_threads", lambda: 1)  # levels in turn, each map in one part
    serial = search.multiscale_minima(image, score_map, (9, 8), scales, radius=2)
    np.testing.assert_allclose(
        [astuple(d) for d in serial], [astuple(d) for d in found], rtol=1e-12
    )


@pytest.mark.parametrize("share", [0.001, 0.012, 0.05, 0.5])
def test_sparse_local_minima_equal_the_minimum_filters(rng, share, monkeypatch):
    """A map's local minima among few kept windows (a cascade's survivors), found by comparing
    them with each other, equal the minimum filter's over the whole map (``inf`` elsewhere,
    nearest-edge mode), ties and the map's edges included; a dense map takes the filter."""
    from eigenvision import search

    compared = []
    sparse = search._sparse_minima
    monkeypatch.setattr(search, "_sparse_minima", lambda *a: compared.append(1) or sparse(*a))
    values = rng.integers(0, 6, (90, 70)).astype(float)  # many ties
    keep = rng.random(values.shape) < share
    keep[0, :3] = keep[-1, -2:] = keep[:4, -1] = True  # the edges and corners
    for radius in (1, 2, 5):
        filled = np.where(keep, values, np.inf)
        dense = keep & (filled == ndimage.minimum_filter(filled, 2 * radius + 1, mode="nearest"))
        rows, cols = search._local_minima(values, keep, radius)
        expected_rows, expected_cols = np.nonzero(dense)
        np.testing.assert_array_equal(rows, expected_rows)
        np.testing.assert_array_equal(cols, expected_cols)
    assert bool(compared) == (keep.mean() < 1 / search._SPARSE_SHARE)


def test_a_region_search_scores_its_levels_in_one_call_with_the_same_minima(rng):
    """``local_windows``: the levels of a region stacked on one canvas and scored in one call
    give every level's minima as searching each level alone does, in the same order; maps of
    other kinds are still called once a level."""
    from eigenvision import search

    space = ev.Eigenspace(4).fit(rng.random((30, 12, 10)))
    image = ndimage.gaussian_filter(rng.random((200, 180)), 1.5)
    image[60:90, 40:80] = 0.5  # flat windows: infinite DFFS, never minima
    scales = [0.8, 0.9, 1.0, 1.15, 1.3]
    region = ((90.0, 70.0), (20.0, 16.0))
    calls = []

    def score_map(scaled):
        calls.append(scaled.shape)
        return dffs_map(scaled, space, normalize="window")

    options = dict(radius=2, region=region)
    alone = search.multiscale_minima(image, score_map, (12, 10), scales, **options)
    assert len(calls) == len(scales)
    calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stacked = search.multiscale_minima(
            image, score_map, (12, 10), scales, local_windows=True, **options
        )
    assert len(calls) == 1 and calls[0][0] > 5 * 40  # the five levels under one another
    assert len(stacked) == len(alone) > 20
    assert {d.scale for d in stacked} == set(scales)
    np.testing.assert_allclose(
        [astuple(d) for d in stacked], [astuple(d) for d in alone], rtol=1e-9, atol=1e-9
    )
    calls.clear()  # a large region: level by level (its maps would all be held at once)
    large = ((100.0, 90.0), (90.0, 80.0))
    search.multiscale_minima(image, score_map, (12, 10), scales, local_windows=True, region=large)
    assert len(calls) == len(scales)


def test_an_images_small_levels_are_scored_in_one_call_with_the_same_minima(rng):
    """``local_windows`` on a whole image: its levels under ``MOSAIC_LEVEL_PIXELS`` stacked on
    one canvas give the minima of each level searched alone, in the same order."""
    from eigenvision import search

    space = ev.Eigenspace(4).fit(rng.random((30, 12, 10)))
    image = ndimage.gaussian_filter(rng.random((150, 130)), 1.5)
    scales = search.pyramid_scales(image.shape, (12, 10), step=2**0.25)
    calls = []

    def score_map(scaled):
        calls.append(scaled.size)
        return dffs_map(scaled, space, normalize="window")

    alone = search.multiscale_minima(image, score_map, (12, 10), scales, radius=2)
    one_a_level = len(calls)
    calls.clear()
    stacked = search.multiscale_minima(
        image, score_map, (12, 10), scales, radius=2, local_windows=True
    )
    small = sum(round(150 / s) * round(130 / s) < search.MOSAIC_LEVEL_PIXELS for s in scales)
    assert small > 3 and len(calls) == one_a_level - small + 1
    assert len(stacked) == len(alone) > 50
    np.testing.assert_allclose(
        [astuple(d) for d in stacked], [astuple(d) for d in alone], rtol=1e-9, atol=1e-9
    )


@pytest.mark.parametrize("overlap, separation", [(0.3, None), (None, 0.5), (0.1, 0.2)])
@pytest.mark.parametrize("max_count", [1, 7, 1000])
@pytest.mark.parametrize("parts_only", [False, True])
def test_suppression_equals_a_greedy_loop(overlap, separation, max_count, parts_only, rng):
    from eigenvision.search import Detection, _Minima, box_iou, kept_indices

    sizes = rng.uniform(5, 40, 300)
    found = [
        Detection(*rng.uniform(0, 100, 2), s, 1.2 * s, 1.0, float(score))
        for s, score in zip(sizes, np.sort(rng.random(300)), strict=True)
    ]
    expected = []
    for index, candidate in enumerate(found):  # the textbook loop, one box at a time
        if len(expected) == max_count:
            break
        box = (candidate.x, candidate.y, candidate.width, candidate.height)
        clash = False
        for j in expected:
            other = found[j]
            if (
                overlap is not None
                and box_iou(box, [(other.x, other.y, other.width, other.height)])[0] > overlap
            ):
                clash = True
            if (
                separation is not None
                and np.hypot(*np.subtract(candidate.center, other.center))
                <= separation * other.width
                and (not parts_only or candidate.width <= other.width)
            ):
                clash = True
        if not clash:
            expected.append(index)
    options = {"overlap": overlap, "separation": separation, "parts_only": parts_only}
    assert kept_indices(found, max_count=max_count, **options) == expected
    assert 1 <= len(expected) < 300  # some boxes suppressed, so the rule was exercised
    # the search's columns (the face finder's stage 1), 300 boxes: two blocks
    columns = _Minima(*np.array([(d.x, d.y, d.width, d.height, d.scale, d.score) for d in found]).T)
    assert kept_indices(columns, max_count=max_count, **options) == expected
    assert kept_indices(columns.take(slice(0, 0)), max_count=5, overlap=0.3) == []
    assert kept_indices([], max_count=5, overlap=0.3) == []
