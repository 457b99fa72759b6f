"""Normalisation: geometry against independent computations, photometry, errors."""

import numpy as np
import pytest
from scipy import ndimage

import eigenvision as ev
from eigenvision import normalize as nz
from eigenvision import transform as tf


def _blob_image(shape, centres, sigma=2.0):
    rows, cols = np.mgrid[: shape[0], : shape[1]]
    image = np.zeros(shape)
    for x, y in centres:
        image += np.exp(-((cols - x) ** 2 + (rows - y) ** 2) / (2 * sigma**2))
    return image


def _centroid(image, x, y, radius=6):
    window = np.zeros_like(image, dtype=bool)
    rows, cols = np.mgrid[: image.shape[0], : image.shape[1]]
    window[(cols - x) ** 2 + (rows - y) ** 2 <= radius**2] = True
    cy, cx = ndimage.center_of_mass(np.where(window, image, 0))
    return cx, cy


@pytest.mark.parametrize(
    "eyes",
    [((40.3, 50.2), (80.7, 47.9)), ((35.0, 70.0), (90.0, 40.0)), ((60.5, 60.0), (75.0, 61.0))],
)
def test_align_puts_eyes_where_asked(eyes):
    image = _blob_image((120, 140), eyes, sigma=3.0)
    shape = (64, 56)
    out = tf.align(image, *eyes, shape=shape, eye_positions=((0.3, 0.4), (0.7, 0.4)))
    targets = [(0.3 * 55, 0.4 * 63), (0.7 * 55, 0.4 * 63)]
    for tx, ty in targets:
        cx, cy = _centroid(out, tx, ty)
        assert abs(cx - tx) < 0.5 and abs(cy - ty) < 0.5


def test_align_imm_faces_landmarks_follow(imm):
    faces = ev.normalize_images(imm[:6], shape=(80, 70), align_on=("left_eye", "right_eye"))
    assert faces.images.shape == (6, 80, 70)
    np.testing.assert_allclose(faces.landmarks["left_eye"], [[0.3 * 69, 0.4 * 79]] * 6, atol=1e-6)
    np.testing.assert_allclose(faces.landmarks["right_eye"], [[0.7 * 69, 0.4 * 79]] * 6, atol=1e-6)
    # the pupils are dark: the darkest spot near each canonical eye lies within 2 px of it
    for image in faces.images:
        for tx, ty in [(0.3 * 69, 0.4 * 79), (0.7 * 69, 0.4 * 79)]:
            r0, c0 = int(round(ty)) - 3, int(round(tx)) - 3
            patch = ndimage.uniform_filter(image, 3)[r0 : r0 + 7, c0 : c0 + 7]
            dy, dx = np.unravel_index(np.argmin(patch), patch.shape)
            assert np.hypot(c0 + dx - tx, r0 + dy - ty) <= 3.0
    # all 73 points moved by the same similarity transform: distances scale uniformly
    before = np.linalg.norm(imm.points[:6, 0] - imm.points[:6, 72], axis=1)
    after = np.linalg.norm(faces.points[:, 0] - faces.points[:, 72], axis=1)
    eye_scale = (0.4 * 69) / np.linalg.norm(
        imm.landmarks["right_eye"][:6] - imm.landmarks["left_eye"][:6], axis=1
    )
    np.testing.assert_allclose(after, before * eye_scale, rtol=1e-9)


def test_align_antialias_matches_scikit_image_resize(rng):
    """With no rotation, shrinking by 4 is scikit-image's resize(anti_aliasing=True)."""
    from skimage.transform import resize

    image, factor, out = rng.random((200, 160)), 4, (50, 40)
    placed = np.array([[0.3, 0.4], [0.7, 0.4]])
    eyes = (placed * [out[1] - 1, out[0] - 1] + 0.5) * factor - 0.5  # resize's pixel centres
    reference = resize(image, out, order=1, mode="edge", anti_aliasing=True)
    np.testing.assert_allclose(
        tf.align(image, *eyes, shape=out, eye_positions=placed), reference, atol=1e-12
    )
    plain = tf.align(image, *eyes, shape=out, eye_positions=placed, antialias=False)
    assert np.abs(plain - reference).mean() > 0.05  # 0.096: a pixel in 4, white noise


@pytest.mark.parametrize(
    "eyes",
    [
        ((150.3, 120.7), (260.1, 140.2)),  # turned, shrunk 3x
        ((-50.0, 10.0), (30.0, -20.0)),  # partly outside
        ((1000.0, 1000.0), (1100.0, 1010.0)),
    ],
)  # all outside
def test_align_smooths_only_the_part_it_reads(eyes, rng):
    """Smoothing just the part the crop reads equals smoothing the whole photo."""
    from skimage.transform import warp

    image, shape = rng.random((300, 400)), (112, 92)
    transform = tf.eye_transform(*eyes, shape=shape)
    sigma = (1 / transform.scale - 1) / 2
    whole = warp(
        ndimage.gaussian_filter(image, sigma, mode="nearest"),
        transform.inverse,
        output_shape=shape,
        order=1,
        mode="edge",
    )
    np.testing.assert_allclose(tf.align(image, *eyes, shape=shape), whole, atol=1e-12)
    # a face smaller than the crop is enlarged: nothing to smooth
    small = ((100.0, 100.0), (110.0, 102.0))
    np.testing.assert_array_equal(
        tf.align(image, *small, shape=shape), tf.align(image, *small, shape=shape, antialias=False)
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sample_grids_equals_map_coordinates(rng, dtype):
    """The compiled grids against scipy's bilinear map_coordinates (edges repeated) at the same
    points: turned, scaled, beyond every edge, on the last row and column exactly; two threads
    (many grids) and one."""
    image = rng.random((40, 55)).astype(dtype)
    for n in (3, 2100):  # 2,100 grids of 24 x 20 points: shared between two threads
        affine = rng.normal(0, 1, (n, 2, 3))
        affine[:, :, 2] = rng.uniform(-10, 60, (n, 2))
        affine[0] = [[0, 0, 39.0], [0, 1, 35.0]]  # the last row exactly, past the last column
        i, j = np.mgrid[0:24, 0:20]
        rows = affine[:, 0, 0, None, None] * i + affine[:, 0, 1, None, None] * j
        cols = affine[:, 1, 0, None, None] * i + affine[:, 1, 1, None, None] * j
        rows += affine[:, 0, 2, None, None]
        cols += affine[:, 1, 2, None, None]
        expected = ndimage.map_coordinates(image, [rows, cols], order=1, mode="nearest")
        found = tf.sample_grids(image, affine, (24, 20))
        assert found.dtype == dtype
        np.testing.assert_allclose(found, expected, atol=1e-12 if dtype == np.float64 else 1e-6)
    assert tf.sample_grids(image, np.zeros((0, 2, 3)), (4, 5)).shape == (0, 4, 5)
    nan = tf.sample_grids(image, [[[np.nan, 0, 1], [0, 1, 1]]], (2, 2))
    assert np.isnan(nan).all()
    with pytest.raises(ValueError, match=r"\(n, 2, 3\)"):
        tf.sample_grids(image, np.zeros((2, 3, 3)), (4, 5))
    with pytest.raises(ValueError, match=r"\(H, W\) image"):
        tf.sample_grids(image[None], np.zeros((1, 2, 3)), (4, 5))


@pytest.mark.parametrize("angle", [-20.0, 7.5, 90.0])
def test_rotated_is_scikit_images_warp(rng, angle):
    """The finder's turned photos: scikit-image's bilinear warp with the edge repeated."""
    from skimage.transform import warp as skimage_warp

    image = rng.random((31, 47))
    turned, transform = tf.rotated(image, angle)
    expected = skimage_warp(
        image, transform.inverse, output_shape=turned.shape, order=1, mode="edge"
    )
    np.testing.assert_allclose(turned, expected, atol=1e-12)


def test_smoothed_sampling_is_scipys_gaussian_then_bilinear(rng):
    """warp's antialiased sampling smooths only the pixels the crop reads: the values are
    scipy's gaussian_filter (mode "nearest") read by sample_grids, to round-off (the same sums
    in the same order: bit for bit where neither compiler fuses a multiply-add); grids turned,
    shrunk many times and reaching past every edge, a NaN point NaN."""
    from eigenvision.transform import _smoothed_samples

    for _ in range(40):
        part = rng.random(tuple(rng.integers(5, 120, 2)))
        sigma = rng.uniform(0.05, 4.0)
        n = rng.integers(1, 4)
        scale, angle = rng.uniform(0.5, 6.0, n), rng.uniform(-0.5, 0.5, n)
        affine = np.zeros((n, 2, 3))
        affine[:, 0, 0] = affine[:, 1, 1] = scale * np.cos(angle)
        affine[:, 0, 1], affine[:, 1, 0] = scale * np.sin(angle), -scale * np.sin(angle)
        affine[:, :, 2] = rng.uniform(-10, 130, (n, 2))
        smoothed = ndimage.gaussian_filter(part, sigma, mode="nearest", output=np.float64)
        np.testing.assert_allclose(
            _smoothed_samples(part, sigma, affine, (13, 11)),
            tf.sample_grids(smoothed, affine, (13, 11)),
            rtol=0,
            atol=1e-13,
        )
    nan = _smoothed_samples(part, 1.0, [[[np.nan, 0, 1], [0, 1, 1]]], (2, 2))
    assert np.isnan(nan).all()


def test_warp_many_equals_a_warp_each(rng):
    """Crops of one photo at shared scales (smoothed once), one enlarged, one shrunk beyond the
    blocks' threshold, one at the photo's edge, one alone at its scale: each is warp()'s."""
    image, shape = rng.random((300, 400)), (56, 48)
    eyes = []
    for scale in (1.0, 1.1):  # two groups of four crops, each group one shrinking
        for dx, dy in ((0, 0), (3, -2), (-4, 5), (180, 120)):
            middle = np.array([150.0 + dx, 120.0 + dy])
            half = scale * np.array([30.0, 4.0])
            eyes.append((middle - half, middle + half))
    eyes.append(((5.0, 3.0), (40.0, 8.0)))  # at the corner
    eyes.append(((100.0, 100.0), (106.0, 101.0)))  # smaller than the crop: enlarged
    eyes.append(((20.0, 150.0), (380.0, 170.0)))  # 20x the crop: blocks averaged
    transforms = [
        tf.eye_transform(*pair, shape=shape, eye_positions=((0.3, 0.35), (0.7, 0.35)))
        for pair in eyes
    ]
    expected = np.stack([tf.warp(image, transform, shape) for transform in transforms])
    np.testing.assert_allclose(tf.warp_many(image, transforms, shape), expected, atol=1e-12)
    assert tf.warp_many(image, [], shape).shape == (0, *shape)
    # the transforms' matrices, as eye_matrices gives them, cut the same crops bit for bit
    matrices = tf.eye_matrices(eyes, shape=shape, eye_positions=((0.3, 0.35), (0.7, 0.35)))
    np.testing.assert_array_equal(
        tf.warp_many(image, matrices, shape), tf.warp_many(image, transforms, shape)
    )
    assert tf.warp_many(image, matrices[:0], shape).shape == (0, *shape)


def test_eye_matrices_are_the_similarities_to_the_eye_positions_and_refuse_what_eye_transform_does(
    rng,
):
    """Many eye pairs at once: each matrix a similarity (rotation and scale ``[[a, -b], [b,
    a]]``, then a shift) that takes the pair to its place in the crop, the one similarity that
    does; the one eye_transform wraps (its one pair through the same path); every pair checked
    as eye_transform checks one."""
    eyes = rng.uniform(0, 640, (200, 2, 2))
    shape, positions = (56, 48), ((0.3, 0.35), (0.7, 0.35))
    matrices = tf.eye_matrices(eyes, shape=shape, eye_positions=positions)
    destination = np.array(positions) * [shape[1] - 1, shape[0] - 1]
    moved = np.einsum("nij,nkj->nki", matrices, np.concatenate([eyes, np.ones((200, 2, 1))], 2))
    np.testing.assert_allclose(moved[..., :2], np.broadcast_to(destination, (200, 2, 2)), atol=1e-9)
    np.testing.assert_array_equal(moved[..., 2], 1.0)
    np.testing.assert_allclose(matrices[:, 0, 0], matrices[:, 1, 1], rtol=1e-15)
    np.testing.assert_allclose(matrices[:, 0, 1], -matrices[:, 1, 0], rtol=1e-15)
    np.testing.assert_array_equal(
        matrices[17], tf.eye_transform(*eyes[17], shape=shape, eye_positions=positions).params
    )
    assert tf.eye_matrices(eyes[:0], shape=shape).shape == (0, 3, 3)
    for bad, message in (
        (np.nan, "finite"),
        (eyes[3, 0], "coincide"),
        (1e6, "pixels apart"),
    ):
        broken = eyes.copy()
        broken[3, 1] = bad
        with pytest.raises(ValueError, match=message):
            tf.eye_matrices(broken, shape=shape)
    with pytest.raises(ValueError, match=r"\(n, 2, 2\)"):
        tf.eye_matrices(np.zeros((4, 3)), shape=shape)
    with pytest.raises(ValueError, match="eye_positions"):
        tf.eye_matrices(eyes, shape=shape, eye_positions=(0.3, 0.7))


def test_align_averages_blocks_of_a_much_larger_face(rng):
    """Shrinking more than 8x, blocks of floor(s / 4) pixels are averaged before the Gaussian
    (its kernel grew with s: 5 s for a face of 2,000 pixels): by 12, close to scikit-image's
    Gaussian of sigma 5.5 on a smooth photo, and a one-pixel grating averages to 0.5; tiny
    photos take blocks no larger than themselves."""
    from skimage.transform import resize

    image = ndimage.gaussian_filter(rng.random((480, 384)), 6, mode="nearest")
    image = (image - image.min()) / np.ptp(image)
    placed, out = np.array([[0.3, 0.4], [0.7, 0.4]]), (40, 32)
    eyes = (placed * [out[1] - 1, out[0] - 1] + 0.5) * 12 - 0.5
    reference = resize(image, out, order=1, mode="edge", anti_aliasing=True)
    blocked = tf.align(image, *eyes, shape=out, eye_positions=placed)
    assert np.abs(blocked - reference).max() < 0.03, np.abs(blocked - reference).max()
    # away from the grating's edges; bilinear alone reads every sample on a black stripe
    grating = np.tile([0.0, 1.0], (800, 400))
    smooth = tf.align(grating, *(eyes + [150.5, 150]), shape=out, eye_positions=placed)
    np.testing.assert_allclose(smooth, 0.5, atol=0.01)
    tiny = tf.align(rng.random((5, 7)), (-400.0, 2.0), (400.0, 3.0), shape=out)
    assert tiny.shape == out and np.all(np.isfinite(tiny))
    # the blocks: scikit-image's block_reduce of the photo with its edge repeated (a photo's
    # last, part block was dropped before: a big face reaching past the photo then differed
    # from the Gaussian by up to 0.15 in its last rows, now 0.06 as inside)
    from skimage.measure import block_reduce

    photo = rng.random((23, 17))
    padded = np.pad(photo, ((0, 1), (0, 3)), mode="edge")
    np.testing.assert_allclose(
        tf._block_means(tf._block_means(photo, 4, 0), 4, 1),
        block_reduce(padded, (4, 4), np.mean),
        atol=1e-14,
    )


def test_align_face_averages_a_fine_grating_away():
    """Regression: align_face sampled a face larger than the crop a pixel here and there.
    A one-pixel grating (0, 1) under eyes 96 pixels apart, cut to 56 x 46 (eyes 18 apart),
    read bare stripes or a false grey; antialiased it reads 0.5."""
    grating = np.tile([0.0, 1.0], (400, 200))
    for eyes in [((150.0, 180.0), (246.0, 180.0)), ((100.0, 150.0), (190.0, 170.0))]:
        aliased = ev.align_face(grating, eyes, shape=(56, 46), antialias=False)
        assert abs(aliased.mean() - 0.5) + aliased.std() > 0.25
        smooth = ev.align_face(grating, eyes, shape=(56, 46))
        assert smooth.std() < 0.03 and abs(smooth.mean() - 0.5) < 0.01


def test_align_face_crop_hardly_depends_on_the_photo_size(imm):
    """Regression: the crop of a face cut from its photo and from the photo shrunk to 30%
    differed by 12% (median over 20 IMM faces, relative to the norm); antialiased, by 2.9%."""
    differences = []
    for photo, left, right in zip(
        imm.images[:20],
        imm.landmarks["left_eye"][:20],
        imm.landmarks["right_eye"][:20],
        strict=True,
    ):
        small = tuple(round(0.3 * side) for side in photo.shape[:2])
        eyes = tf.resize_points([left, right], photo.shape[:2], small)
        crops = [
            nz.standardize(ev.align_face(image, pair, shape=(56, 46)))
            for image, pair in ((photo, (left, right)), (tf.resize(photo, small), eyes))
        ]
        differences.append(np.linalg.norm(crops[0] - crops[1]) / np.linalg.norm(crops[1]))
    assert np.median(differences) < 0.05, np.median(differences)


def test_resize_keeps_landmarks_on_pixel_centres():
    image = _blob_image((40, 60), [(20.0, 10.0)], sigma=2.0)
    s = ev.ImageSet(image[None].astype(np.float32), np.array([0]), landmarks={"p": [[20.0, 10.0]]})
    out = ev.normalize_images(s, shape=(80, 120))
    x, y = out.landmarks["p"][0]
    cx, cy = _centroid(out.images[0], x, y, radius=10)
    assert abs(cx - x) < 0.25 and abs(cy - y) < 0.25


def test_resize_antialiases_and_keeps_dtype():
    checker = (np.indices((64, 64)).sum(axis=0) % 2).astype(np.float32)
    small = tf.resize(checker, (8, 8))
    assert small.dtype == np.float32 and small.shape == (8, 8)
    np.testing.assert_allclose(small, 0.5, atol=0.02)  # no aliasing into stripes
    assert tf.resize(checker.astype(np.float64), (32, 16)).dtype == np.float64


def test_crop_and_errors():
    image = np.arange(20.0).reshape(4, 5)
    np.testing.assert_array_equal(tf.crop(image, (1, 2, 3, 2)), image[2:4, 1:4])
    with pytest.raises(ValueError, match="outside"):
        tf.crop(image, (3, 0, 3, 2))
    with pytest.raises(ValueError, match="empty"):
        tf.crop(image, (0, 0, 0, 2))


def test_equalize_flattens_histogram(rng):
    image = rng.beta(2, 8, size=(64, 64)).astype(np.float32)
    out = nz.equalize(image)
    assert out.dtype == np.float32
    hist, _ = np.histogram(out, bins=10, range=(0, 1))
    assert hist.min() > 0.6 * hist.mean()


def test_equalize_windows_against_rankdata_and_skimage(rng):
    """Per window: scipy's mean ranks (a loop), and scikit-image's equalize_hist with a bin per
    grey level, both standardised; the same under any increasing change of contrast."""
    from scipy.stats import rankdata
    from skimage.exposure import equalize_hist

    windows = rng.random((6, 9, 7))
    windows[1, :3] = 0.5  # ties share their mean rank
    windows[2] = np.round(windows[2] * 4) / 4
    windows[3] = 0.25  # flat: all zero
    out = nz.equalize_windows(windows)
    assert out.shape == windows.shape
    for window, got in zip(windows, out, strict=True):
        expected = nz.unit_norm(rankdata(window.ravel()).reshape(1, *window.shape))[0]
        np.testing.assert_allclose(got, expected, atol=1e-12)
    np.testing.assert_array_equal(out[3], 0.0)
    # distinct integer levels: equalize_hist gives each its CDF, rank / n, exactly
    levels = 3 * rng.permutation(63).reshape(9, 7)
    expected = nz.unit_norm(equalize_hist(levels)[None])
    np.testing.assert_allclose(nz.equalize_windows(levels[None]), expected, atol=1e-12)
    np.testing.assert_allclose(nz.equalize_windows(windows**2.2 * 3 + 1), out, atol=1e-12)
    with pytest.raises(ValueError, match="windows"):
        nz.equalize_windows(np.zeros(5))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_mean_ranks_equal_scipys_bit_for_bit(dtype, rng):
    """The equalisation's ranks: scipy's rankdata(method="average") on rows with no ties, a few,
    runs at either end, all tied, and one or two columns."""
    from scipy.stats import rankdata

    for shape in ((1, 1), (4, 1), (6, 2), (300, 64), (2100, 9)):  # the last: in threads
        rows = (rng.random(shape) * 1000).astype(dtype)
        rows[::3] = rows[::3] // 200  # many ties
        rows[1::5, 0] = rows[1::5, -1]  # a run spanning the ends once sorted
        rows[-1] = rows[-1, 0]  # one grey level
        np.testing.assert_array_equal(
            nz._mean_ranks(rows), rankdata(rows, axis=1, method="average")
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_standardize(dtype, rng):
    image = rng.random((10, 12)).astype(dtype)
    unit = nz.standardize(image, method="norm")
    assert unit.dtype == dtype
    assert abs(unit.mean()) < 1e-6 and abs(np.linalg.norm(unit) - 1) < 1e-5
    var = nz.standardize(image, method="variance")
    assert abs(var.std() - 1) < 1e-5
    np.testing.assert_array_equal(nz.standardize(np.ones((3, 3))), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="method"):
        nz.standardize(image, method="l1")


def test_mask_ellipse():
    out = nz.mask_ellipse(np.ones((10, 10)), fill=0.0)
    assert out[0, 0] == 0 and out[5, 5] == 1 and out[5, 0] == 1


def test_to_gray_rejects_nan_and_bad_shapes():
    with pytest.raises(ValueError, match="NaN"):
        nz.to_gray(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="shape"):
        tf.resize(np.zeros((2, 3, 4, 5)), (2, 2))


def test_pixel_standardizer_matches_sklearn(rng):
    from sklearn.preprocessing import StandardScaler

    X = rng.normal(size=(30, 8)) * rng.random(8) * 5 + rng.random(8)
    X[:, 3] = 2.0  # constant pixel
    ours = ev.PixelStandardizer().fit(X)
    np.testing.assert_allclose(ours.transform(X), StandardScaler().fit_transform(X), atol=1e-12)
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(X)), X, atol=1e-12)
    stack = X.reshape(30, 2, 4)
    assert ev.PixelStandardizer().fit(stack).transform(stack).shape == (30, 2, 4)
    with pytest.raises(ev.NotFittedError):
        ev.PixelStandardizer().transform(X)
    with pytest.raises(ValueError, match="features"):
        ours.transform(X[:, :5])


def test_normalize_images_pipeline_on_arrays(rng):
    stack = rng.random((3, 20, 16)).astype(np.float32)
    out = ev.normalize_images(stack, shape=(10, 8), equalize=True, standardize="norm", mask=True)
    assert out.shape == (3, 10, 8) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out.reshape(3, -1), axis=1), 1, atol=1e-5)
    with pytest.raises(ValueError, match="align_on"):
        ev.normalize_images(stack, shape=(10, 8), align_on=("left_eye", "right_eye"))


def test_pixel_standardizer_in_a_pipeline_before_pca(rng):
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = rng.normal(size=(40, 6)) * [1, 10, 100, 1, 1, 5]
    ours = make_pipeline(ev.PixelStandardizer(), ev.Eigenspace(3)).fit(X)
    theirs = make_pipeline(StandardScaler(), PCA(3)).fit(X)
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), atol=1e-10)
