"""The one resampler: resize, crop, warp and rotation against numpy and SciPy references."""

import numpy as np
import pytest
from scipy import ndimage
from skimage.transform import SimilarityTransform

from eigenvision import transform


def _bilinear_at(image, x, y):
    """Bilinear values of ``image`` at points ``(x, y)``, the edge repeated (a plain loop)."""
    H, W = image.shape
    out = np.empty(len(x))
    for i, (u, v) in enumerate(zip(x, y, strict=True)):
        u, v = min(max(u, 0), W - 1), min(max(v, 0), H - 1)
        x0, y0 = min(int(np.floor(u)), W - 2), min(int(np.floor(v)), H - 2)
        a, b = u - x0, v - y0
        out[i] = (
            (1 - a) * (1 - b) * image[y0, x0]
            + a * (1 - b) * image[y0, x0 + 1]
            + (1 - a) * b * image[y0 + 1, x0]
            + a * b * image[y0 + 1, x0 + 1]
        )
    return out


def test_enlarging_is_bilinear_between_pixel_centres(rng):
    """Twice as large: each output pixel centre maps to ``(x + 0.5) / 2 - 0.5`` of the input and
    takes the bilinear value there (edges repeated)."""
    image = rng.random((7, 9))
    out = transform.resize(image, (14, 18))
    ys, xs = np.mgrid[0:14, 0:18]
    expected = _bilinear_at(image, (xs.ravel() + 0.5) / 2 - 0.5, (ys.ravel() + 0.5) / 2 - 0.5)
    np.testing.assert_allclose(out.ravel(), expected, atol=1e-5)  # Pillow's float32 plane


def test_halving_averages_with_the_stretched_triangle_not_by_dropping_pixels(rng):
    """Half the size: the triangle kernel stretched to the output's pixel, weights
    ``[1, 3, 3, 1] / 8`` along each axis (renormalised at the edges), so nothing aliases."""
    image = rng.random((16, 20))
    weights = np.array([1.0, 3.0, 3.0, 1.0])

    def halve(rows):
        out = np.empty((rows.shape[0], rows.shape[1] // 2))
        for j in range(out.shape[1]):
            taps = np.arange(2 * j - 1, 2 * j + 3)
            inside = (taps >= 0) & (taps < rows.shape[1])
            w = weights[inside] / weights[inside].sum()
            out[:, j] = rows[:, taps[inside]] @ w
        return out

    expected = halve(halve(image).T).T
    np.testing.assert_allclose(transform.resize(image, (8, 10)), expected, atol=1e-5)


def test_resize_keeps_constants_dtype_and_colour_planes(rng):
    np.testing.assert_allclose(transform.resize(np.full((9, 11), 0.25), (5, 23)), 0.25, atol=1e-6)
    image = rng.random((10, 12)).astype(np.float32)
    assert transform.resize(image, (6, 6)).dtype == np.float32
    colour = rng.random((10, 12, 3))
    out = transform.resize(colour, (5, 7))
    assert out.shape == (5, 7, 3)
    for channel in range(3):
        np.testing.assert_array_equal(
            out[..., channel], transform.resize(colour[..., channel], (5, 7))
        )


def test_resize_points_follow_a_resized_spot(rng):
    """A spot's centre of mass moves as :func:`transform.resize_points` moves its pixel."""
    image = np.zeros((20, 30))
    image[8, 11] = 1.0
    for shape in [(40, 60), (60, 90), (10, 15)]:
        out = transform.resize(image, shape)
        centre = ndimage.center_of_mass(out)[::-1]  # (x, y)
        np.testing.assert_allclose(
            centre, transform.resize_points([11, 8], image.shape, shape), atol=1e-4
        )


def test_crop_is_the_slice_and_refuses_boxes_outside(rng):
    image = rng.random((10, 12))
    np.testing.assert_array_equal(transform.crop(image, (3, 2, 5, 4)), image[2:6, 3:8])
    with pytest.raises(ValueError, match="outside the 12x10 image"):
        transform.crop(image, (8, 2, 5, 4))
    with pytest.raises(ValueError, match="empty"):
        transform.crop(image, (3, 2, 0, 4))


def test_warp_reads_each_output_pixel_bilinearly_through_the_inverse_map(rng):
    """An enlarging, turning similarity (no smoothing applies) against SciPy's order-1
    interpolation at the inverse-mapped output pixels, the edge repeated."""
    image = rng.random((24, 30))
    similarity = SimilarityTransform(scale=1.7, rotation=0.3, translation=(4.0, -6.0))
    out = transform.warp(image, similarity, (40, 50))
    ys, xs = np.mgrid[0:40, 0:50]
    source = similarity.inverse(np.column_stack([xs.ravel(), ys.ravel()]).astype(float))
    expected = ndimage.map_coordinates(image, [source[:, 1], source[:, 0]], order=1, mode="nearest")
    np.testing.assert_allclose(out.ravel(), expected, atol=1e-10)


def test_a_shrinking_warp_averages_like_a_resize(rng):
    """A warp that halves the image (pixel centres to pixel centres) is smoothed first: it
    reads about what the antialiased resize reads, not every other pixel."""
    image = rng.random((32, 32))
    halving = SimilarityTransform(translation=(0.5, 0.5)) + SimilarityTransform(scale=0.5)
    halving += SimilarityTransform(translation=(-0.5, -0.5))
    warped = transform.warp(image, halving, (16, 16))
    resized = transform.resize(image, (16, 16))
    sampled = image[::2, ::2]
    inner = (slice(2, -2), slice(2, -2))
    assert np.abs(warped - resized)[inner].mean() < 0.5 * np.abs(sampled - resized)[inner].mean()
    assert warped[inner].std() < 0.7 * sampled[inner].std()  # averaged: less spread than samples


def test_rotating_a_quarter_turn_is_rot90(rng):
    image = rng.random((7, 11))
    turned, similarity = transform.rotated(image, 90)
    assert turned.shape == (11, 7)
    np.testing.assert_allclose(turned, np.rot90(image, k=-1), atol=1e-9)
    np.testing.assert_allclose(similarity([[0.0, 0.0]]), [[6.0, 0.0]], atol=1e-9)
