"""How fast are the appearance check's histograms of oriented gradients of a photo's crops?

The finder's appearance check describes each candidate it examines by HOG
(``skimage.feature.hog``'s: 9 orientations, 6-pixel cells, L2-Hys blocks,
square-rooted grey levels), at 27 offsets where the fusion comes near the
threshold; a model's fit describes thousands of crops. Side by side on the
same crops (the astronaut's examined candidates at 640 pixels, each at the
27 offsets, cut as the check cuts them), interleaved: ``hog_descriptors``
(two compiled passes over the stack), the same steps in numpy on the whole
stack (what eigenvision ran before: arctangent, ``searchsorted`` and
``bincount`` of every pixel) and scikit-image's ``hog`` one crop at a time.
Also reported: the largest difference from scikit-image's rows (it keeps
its cells' sums in single precision).

Run:  python benchmarks/bench_hog.py --out benchmarks/out/hog
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved_medians, rows_against, write_results
from skimage.feature import hog

import eigenvision as ev
from eigenvision.descriptors import hog_descriptors
from eigenvision.faces.appearance import (
    APPEARANCE_CELL,
    APPEARANCE_OFFSETS,
    appearance_crops,
    offset_eyes,
)


def numpy_hog(images, cell, bins=9):
    """HOG of a stack in numpy's whole-array steps (eigenvision's before the compiled passes)."""
    images = np.sqrt(np.asarray(images, dtype=np.float64))
    n, height, width = images.shape
    rows, cols = height // cell, width // cell
    g_row, g_col = np.zeros_like(images), np.zeros_like(images)
    g_row[:, 1:-1, :] = images[:, 2:, :] - images[:, :-2, :]
    g_col[:, :, 1:-1] = images[:, :, 2:] - images[:, :, :-2]
    magnitude = np.hypot(g_col, g_row)[:, : rows * cell, : cols * cell]
    orientation = (np.rad2deg(np.arctan2(g_row, g_col)) % 180)[:, : rows * cell, : cols * cell]
    which = np.searchsorted((180.0 / bins) * np.arange(bins), orientation, side="right") - 1
    row_cell = np.arange(rows * cell)[:, None] // cell
    col_cell = np.arange(cols * cell)[None, :] // cell
    where = ((np.arange(n)[:, None, None] * rows + row_cell) * cols + col_cell) * bins
    cells = np.bincount(
        (where + which).ravel(), magnitude.ravel(), minlength=n * rows * cols * bins
    ).reshape(n, rows, cols, bins) / (cell * cell)
    blocks = np.stack(
        [cells[:, :-1, :-1], cells[:, :-1, 1:], cells[:, 1:, :-1], cells[:, 1:, 1:]], axis=3
    ).reshape(n, rows - 1, cols - 1, 2, 2, bins)
    blocks = blocks / np.sqrt(np.sum(blocks**2, axis=(3, 4, 5), keepdims=True) + 1e-10)
    blocks = np.minimum(blocks, 0.2)
    blocks = blocks / np.sqrt(np.sum(blocks**2, axis=(3, 4, 5), keepdims=True) + 1e-10)
    return blocks.reshape(n, -1)


def skimage_hog(crops):
    return np.array(
        [
            hog(
                crop,
                orientations=9,
                pixels_per_cell=(APPEARANCE_CELL, APPEARANCE_CELL),
                cells_per_block=(2, 2),
                block_norm="L2-Hys",
                transform_sqrt=True,
            )
            for crop in crops
        ]
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/hog")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    finder = ev.faces.photos.default_finder()
    image = ev.normalize.resize(ev.faces.photos.sample_picture("astronaut"), (480, 640))
    candidates = finder.search.candidates(image)[:50]
    # float64, as the check describes them (scikit-image keeps float32 crops' gradients in
    # float32)
    crops = appearance_crops(image, offset_eyes(candidates, APPEARANCE_OFFSETS)).astype(float)
    runs = {
        "eigenvision hog_descriptors": lambda: hog_descriptors(
            crops, cell=APPEARANCE_CELL, transform_sqrt=True
        ),
        "numpy on the whole stack (before)": lambda: numpy_hog(crops, APPEARANCE_CELL),
        "scikit-image hog, crop by crop": lambda: skimage_hog(crops),
    }
    timed = interleaved_medians(runs, args.repeats)
    reference = timed["scikit-image hog, crop by crop"][1]
    results = rows_against(
        timed,
        "eigenvision hog_descriptors",
        largest_difference_from_scikit_image=lambda result: float(np.abs(result - reference).max()),
    )
    print(f"{len(crops)} crops of {crops.shape[1:]}")
    for row in results:
        print(
            f"{row['contender']:36s} {1e3 * row['seconds']:8.1f} ms   ours "
            f"{row['ours_faster']:5.1f}x faster   from scikit-image "
            f"{row['largest_difference_from_scikit_image']:.1e}"
        )
    write_results(args.out, crops=len(crops), shape=list(crops.shape[1:]), rows=results)


if __name__ == "__main__":
    main()
