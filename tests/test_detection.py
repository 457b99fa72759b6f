"""FFT DFFS/DIFS/likelihood maps against a brute-force sliding window; eigenvision.detection."""

import sys

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import eigenvision as ev
from eigenvision.detection import detect, dffs_map, difs_map, likelihood_map


def _windows(image, shape, normalize):
    windows = sliding_window_view(image.astype(np.float64), shape)
    flat = windows.reshape(-1, shape[0] * shape[1])
    if normalize == "window":
        flat = flat - flat.mean(axis=1, keepdims=True)
        flat = flat / np.linalg.norm(flat, axis=1, keepdims=True)
    return flat, windows.shape[:2]


@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("normalize", ["none", "window"])
@pytest.mark.parametrize("dtype, tolerance", [(np.float64, 1e-9), (np.float32, 1e-4)])
@pytest.mark.parametrize("window, k", [((12, 10), 1), ((9, 9), 5), ((16, 7), 12)])
def test_maps_equal_brute_force(threaded, normalize, dtype, tolerance, window, k, rng, monkeypatch):
    # Small images run in one thread; lower the bar so the threaded path is checked too.
    module = sys.modules["eigenvision.detection"]  # the name `detect` is also the function
    monkeypatch.setattr(module, "_PARALLEL_PIXELS", 1 if threaded else 10**9)
    patches = rng.random((40, *window))
    if normalize == "window":
        patches = ev.normalize_images(patches, standardize="norm")
    space = ev.Eigenspace(k).fit(patches.astype(dtype))
    image = rng.random((50, 61)).astype(dtype)
    windows, shape = _windows(image, window, normalize)
    reference = ev.Eigenspace(k).fit(patches)  # float64 reference model
    reference.components_ = space.components_.astype(np.float64)
    reference.mean_ = space.mean_.astype(np.float64)
    reference.eigenvalues_ = space.eigenvalues_
    reference.noise_variance_ = space.noise_variance_
    for ours, brute in [
        (dffs_map(image, space, normalize=normalize), reference.dffs(windows)),
        (difs_map(image, space, normalize=normalize), reference.difs(windows)),
        (likelihood_map(image, space, normalize=normalize), reference.score_samples(windows)),
    ]:
        assert ours.dtype == dtype and ours.shape == shape
        brute = brute.reshape(shape)
        assert np.max(np.abs(ours - brute)) <= tolerance * np.max(np.abs(brute))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_small_maps_batched_equal_the_per_template_transforms_bit_for_bit(dtype, rng, monkeypatch):
    """A small image is correlated with every template in one batched transform per axis:
    the same numbers as one template at a time, to the bit, and so the maps made of them."""
    module = sys.modules["eigenvision.detection"]
    templates = rng.standard_normal((9, 13, 11)).astype(dtype)
    offsets = rng.standard_normal(9)
    image = rng.random((57, 64)).astype(dtype)
    patches = ev.normalize_images(rng.random((40, 13, 11)), standardize="norm")
    space = ev.Eigenspace(8).fit(patches.astype(dtype))
    found = {}
    for batched in (True, False):
        monkeypatch.setattr(module, "_BATCHED_PIXELS", 10**9 if batched else 0)
        correlation = module._correlator(image, templates, offsets)
        maps = ev.detection.window_maps(image, space, normalize="window")
        found[batched] = [correlation(t).copy() for t in range(len(templates))] + [
            maps.codes,
            maps.residual_energy,
            dffs_map(image, space, normalize="window"),
            likelihood_map(image, space),
        ]
    brute = sliding_window_view(image.astype(np.float64), (13, 11))
    for t, (one, other) in enumerate(zip(found[True], found[False], strict=True)):
        assert one.dtype == dtype
        np.testing.assert_array_equal(one, other)
        if t < len(templates):  # and the correlation is the sum it stands for
            expected = offsets[t] + np.einsum("ijab,ab->ij", brute, templates[t])
            np.testing.assert_allclose(one, expected, atol=1e-9 if dtype == np.float64 else 1e-3)


def test_real_image_and_zero_on_the_subspace(rng):
    from skimage import data

    camera = data.camera()[100:300, 150:350].astype(np.float64) / 255
    patches = np.stack([camera[r : r + 15, c : c + 15] for r, c in rng.integers(0, 180, (60, 2))])
    space = ev.Eigenspace(8).fit(patches)
    windows, shape = _windows(camera, (15, 15), "none")
    np.testing.assert_allclose(
        dffs_map(camera, space), space.dffs(windows).reshape(shape), rtol=1e-9, atol=1e-12
    )
    # a window lying in the eigenspace has DFFS 0
    image = rng.random((40, 40))
    image[10:25, 5:20] = space.inverse_transform(rng.normal(size=(1, 8))).reshape(15, 15)
    values = dffs_map(image, space)
    assert values.min() >= 0 and values[10, 5] < 1e-10 and np.argmin(values) == 10 * 26 + 5


def test_same_mode_and_flat_windows(rng):
    space = ev.Eigenspace(3).fit(rng.random((20, 5, 4)))
    image = rng.random((30, 20))
    same = dffs_map(image, space, mode="same")
    valid = dffs_map(image, space)
    assert same.shape == image.shape
    np.testing.assert_array_equal(same[2 : 2 + 26, 1 : 1 + 17], valid)
    assert np.isnan(same[0, 0])
    image[:10, :10] = 0.5  # flat windows: no pattern, infinitely far
    assert np.isinf(dffs_map(image, space, normalize="window")[0, 0])


def test_bad_input(rng):
    space = ev.Eigenspace(2).fit(rng.random((10, 6, 6)))
    with pytest.raises(ValueError, match="smaller than"):
        dffs_map(rng.random((5, 40)), space)
    with pytest.raises(ValueError, match="NaN"):
        dffs_map(np.full((10, 10), np.nan), space)
    with pytest.raises(ValueError, match="to_gray"):
        dffs_map(rng.random((10, 10, 3)), space)
    with pytest.raises(ValueError, match="flattened"):
        dffs_map(rng.random((10, 10)), ev.Eigenspace(2).fit(rng.random((10, 36))))
    with pytest.raises(ValueError, match="normalize"):
        dffs_map(rng.random((10, 10)), space, normalize="l2")
    with pytest.raises(ev.NotFittedError):
        dffs_map(rng.random((10, 10)), ev.Eigenspace(2))


def test_detect_finds_a_planted_pattern_at_its_scale(rng):
    # A class of smooth blob patterns; plant one, twice enlarged, in noise.
    rows, cols = np.mgrid[:16, :16]

    def blob(cx, cy, sigma):
        return np.exp(-((cols - cx) ** 2 + (rows - cy) ** 2) / (2 * sigma**2))

    examples = np.stack([blob(*rng.uniform(6.5, 8.5, 2), rng.uniform(2.5, 3.5)) for _ in range(60)])
    examples = ev.normalize_images(examples, standardize="norm")
    space = ev.Eigenspace(4).fit(examples)
    image = 0.3 * rng.random((120, 140))
    big = ev.transform.resize(blob(7.5, 7.5, 3.0), (32, 32))
    image[50:82, 70:102] += big
    found = detect(image, space, scales=[1, 2**0.5, 2, 2**1.5], max_detections=3)
    best = found[0]
    assert best.scale == 2 and abs(best.x - 70) <= 2 and abs(best.y - 50) <= 2
    assert best.width == pytest.approx(32) and best.score < found[1].score
    assert all(d.score >= best.score for d in found)


def _face_space(imm_faces, k):
    windows = ev.face_windows(imm_faces, iod=20)
    return ev.Eigenspace(k).fit(ev.normalize_images(windows, standardize="norm"))


@pytest.mark.parametrize("k", [10, 20])
def test_detect_finds_the_astronaut_face(imm, k):
    # Reference: scikit-image's LBP face cascade, an independent detector.
    from skimage import data
    from skimage.feature import Cascade

    colour = data.astronaut()
    image = ev.normalize.to_gray(colour).astype(np.float64)
    cascade = Cascade(data.lbp_frontal_face_cascade_filename())
    boxes = cascade.detect_multi_scale(
        (image * 255).astype(np.uint8),
        scale_factor=1.2,
        step_ratio=1,
        min_size=(60, 60),
        max_size=(150, 150),
    )
    assert len(boxes) == 1
    reference = boxes[0]
    best = detect(image, _face_space(imm, k), max_detections=2)[0]
    cx, cy = best.center
    assert reference["c"] < cx < reference["c"] + reference["width"]
    assert reference["r"] < cy < reference["r"] + reference["height"]
    # the window is the face's interior: smaller than the cascade's box, not tiny
    assert 0.2 < best.width * best.height / (reference["width"] * reference["height"]) < 1.0


def test_detect_finds_held_out_imm_faces(imm):
    # Train on half the people, detect in the other half's full images (half resolution):
    # the best window must sit on the face (eye midpoint within 0.3 IOD, IOD within 35%).
    people = np.unique(imm.labels)
    correct, total = 0, 0
    for half in (0, 1):
        held_out = np.isin(imm.labels, people[half::2])
        train = imm[~held_out]
        space = _face_space(train, 10)
        for i in np.flatnonzero(held_out)[::3]:
            image = imm.images[i]
            image = ev.transform.resize(image, (image.shape[0] // 2, image.shape[1] // 2))
            left, right = imm.landmarks["left_eye"][i] / 2, imm.landmarks["right_eye"][i] / 2
            iod = np.linalg.norm(right - left)
            found_left, found_right = ev.window_eyes(detect(image, space, max_detections=1)[0])
            found_iod = np.linalg.norm(found_right - found_left)
            offset = np.linalg.norm((found_left + found_right) / 2 - (left + right) / 2)
            correct += offset < 0.3 * iod and abs(np.log(found_iod / iod)) < np.log(1.35)
            total += 1
    assert total == 40
    assert correct / total >= 0.95  # measured: 40 of 40


@pytest.mark.parametrize("fft_shape", [(640, 512), (250, 243), (97, 1024), (40, 48)])
def test_template_spectra_are_scipys_rfft2(fft_shape, rng):
    """The templates' spectra, transformed row-first over their few non-zero rows only, are
    scipy's rfft2 of the zero-padded templates (conjugated) bit for bit, and are kept from
    their second request on."""
    from scipy import fft

    from eigenvision.detection import _template_spectra

    templates = rng.normal(size=(4, 25, 22))
    first = _template_spectra(templates, fft_shape)
    expected = np.conj(fft.rfft2(templates, s=fft_shape, axes=(-2, -1)))
    np.testing.assert_array_equal(first, expected)  # the code says "bit for bit"
    kept = _template_spectra(templates, fft_shape)
    assert kept is not first  # asked for once: computed and dropped
    np.testing.assert_array_equal(kept, expected)
    assert _template_spectra(templates, fft_shape) is kept
    assert _template_spectra(templates + 1e-12, fft_shape) is not kept  # keyed by the bytes


def test_spectra_kept_are_bounded_for_the_whole_process(rng, monkeypatch):
    """One bound for every model's spectra together (a face finder's 17 eigenspaces each kept
    up to 256 MB of their own: 5.6 GB after 20 photos), and spectra asked for once never push
    out the ones asked for again."""
    from eigenvision import detection
    from eigenvision._base import BoundedCache

    cache = BoundedCache(4 << 20, min_requests=2)
    monkeypatch.setattr(detection, "_SPECTRA", cache)
    spaces = [ev.Eigenspace(5).fit(rng.random((12, 20, 16))) for _ in range(6)]
    image = rng.random((130, 120))
    reused = ev.dffs_map(image, spaces[0]), ev.dffs_map(image, spaces[0])
    held = cache.nbytes
    assert 0 < held <= cache.max_bytes
    for space in spaces[1:]:  # one-off sizes of other spaces (crops around faces)
        for size in range(100, 140, 8):
            ev.dffs_map(image[:size, :size], space)
    assert cache.nbytes == held  # nothing pushed out, nothing added
    again = ev.dffs_map(image, spaces[0])
    np.testing.assert_array_equal(again, reused[0])
    np.testing.assert_array_equal(reused[1], reused[0])
    for space in spaces:  # asked for twice each: kept within the one bound
        for size in range(100, 140, 8):
            for _ in range(2):
                ev.dffs_map(image[:size, :size], space)
            assert cache.nbytes <= cache.max_bytes
    assert len(cache) > 1


def test_bounded_cache_counts_requests_and_evicts_least_recently_used():
    """The cache behind the spectra: kept from the ``min_requests``-th request, evicted least
    recently used first, values over the bound never kept; safe after a fork."""
    from eigenvision._base import BoundedCache

    calls = []

    def value(n):
        calls.append(n)
        return np.zeros(n)  # 8 n bytes

    cache = BoundedCache(64, min_requests=2)
    assert cache.get("a", lambda: value(2)) is not cache.get("a", lambda: value(2))
    a = cache.get("a", lambda: value(2))
    assert calls == [2, 2] and len(cache) == 1 and cache.nbytes == 16
    for _ in range(2):
        cache.get("b", lambda: value(4))
    cache.get("a", lambda: value(2))  # "a" is now the most recent
    for _ in range(2):
        cache.get("c", lambda: value(3))  # 16 + 32 + 24 > 64: "b" goes
    assert cache.get("a", lambda: value(2)) is a and len(cache) == 2 and cache.nbytes == 40
    for _ in range(2):
        cache.get("huge", lambda: value(9))  # 72 bytes: never kept
    assert len(cache) == 2
    cache.after_fork()
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0
    assert cache.get("a", lambda: value(2)) is not a  # the requests counted are gone too
    assert len(cache) == 0


def test_eigenvision_imports_where_there_is_no_fork():
    """Regression: the spectra cache's fork hook called ``os.register_at_fork`` unguarded, which
    exists only on POSIX: importing eigenvision raised AttributeError elsewhere (Windows)."""
    import subprocess
    import sys

    code = "import os; del os.fork, os.register_at_fork; import eigenvision.detection; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_detect_refuses_options_outside_their_range(rng):
    """Regression (hardening round 4): ``detect(min_distance=-3)`` and ``detect(overlap=nan)``
    answered as if valid; ``dffs_map`` of an image of 1e200 ended in Python's OverflowError."""
    space = ev.Eigenspace(3).fit(rng.random((10, 6, 5)))
    image = rng.random((40, 40))
    for option in (
        {"min_distance": -3},
        {"min_distance": 2.5},
        {"overlap": np.nan},
        {"overlap": 2},
    ):
        (name,) = option
        with pytest.raises(ValueError, match=f"detect: {name} must be"):
            ev.detect(image, space, **option)
    for score_map in (ev.dffs_map, ev.difs_map, ev.likelihood_map):
        with pytest.raises(ValueError, match="the image reaches 1e.200.*rescale"):
            score_map(np.full((20, 20), 1e200), space)


def test_detect_refuses_nan_threshold_zero_detections_and_zero_scales(rng):
    """Regression: detect(threshold=nan) returned [], max_detections=0 returned 72 windows,
    scales=[0] divided by zero."""
    space = ev.Eigenspace(2).fit(rng.random((10, 6, 6)))
    image = rng.random((40, 40))
    with pytest.raises(ValueError, match="threshold"):
        ev.detect(image, space, threshold=float("nan"))
    with pytest.raises(ValueError, match="max_detections"):
        ev.detect(image, space, max_detections=0)
    with pytest.raises(ValueError, match="scales"):
        ev.detect(image, space, scales=[0])
    assert len(ev.detect(image, space, max_detections=3)) == 3
