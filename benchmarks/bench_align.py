"""How fast is one face cut from a 12-megapixel photo, antialiased, by its eyes?

``align_face`` (``normalize.align(antialias=True)``) smooths only the rows
and pixels of the photo the crop reads (a Gaussian of ``(s - 1) / 2`` pixels
for a face shrunk by ``s``; beyond ``s = 8`` after averaging blocks of
``floor(s / 4)`` pixels), sampling them bilinearly in the same compiled pass.
The peers shrink the whole photo with their antialiased resize and then turn
and shift it: scikit-image
``rescale(anti_aliasing=True)`` + ``warp``, OpenCV ``resize(INTER_AREA)`` +
``warpAffine``. Side by side on the same 3000 x 4000 photo and eye pairs
(56 x 46 crops, eyes 18.4 pixels apart in the crop), for faces whose eyes
lie 100 to 2,000 pixels apart. Also reported: each crop's mean absolute
difference from scikit-image's (grey levels in [0, 1]).

Run:  python benchmarks/bench_align.py --out benchmarks/out/align
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _timing import interleaved_medians

import eigenvision as ev
from eigenvision.normalize import eye_transform

SHAPE = (56, 46)


def _after_resize(transform, image_shape, small_shape):
    """The matrix that finishes ``transform`` on the photo resized to ``small_shape``: resizes
    keep pixel centres, ``x_small = (x + 0.5) f - 0.5`` along each axis."""
    f = np.array(small_shape[::-1]) / np.array(image_shape[::-1])
    to_small = np.array([[f[0], 0, 0.5 * f[0] - 0.5], [0, f[1], 0.5 * f[1] - 0.5], [0, 0, 1]])
    return transform.params @ np.linalg.inv(to_small)


def scikit_image_crop(image, eyes):
    """Rescale the whole photo (antialiased) so the eyes lie as far apart as in the crop, then
    turn and shift it with ``warp``."""
    from skimage.transform import SimilarityTransform, rescale, warp

    transform = eye_transform(*eyes, shape=SHAPE)
    small = rescale(image, transform.scale, order=1, mode="edge", anti_aliasing=True)
    rest = SimilarityTransform(matrix=_after_resize(transform, image.shape, small.shape))
    return warp(small, rest.inverse, output_shape=SHAPE, order=1, mode="edge")


def opencv_crop(cv2, image, eyes):
    """The same with ``cv2.resize(INTER_AREA)`` and ``cv2.warpAffine``."""
    transform = eye_transform(*eyes, shape=SHAPE)
    small = cv2.resize(
        image, None, fx=transform.scale, fy=transform.scale, interpolation=cv2.INTER_AREA
    )
    return cv2.warpAffine(
        small,
        _after_resize(transform, image.shape, small.shape)[:2],
        SHAPE[::-1],
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/align")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        import cv2
    except ImportError:
        cv2 = None
    photo = ev.normalize.resize(ev.faces.photos.sample_picture("astronaut"), (3000, 4000))
    photo32 = photo.astype(np.float32)
    results = {}
    for distance in (100, 400, 1000, 2000):
        angle = np.deg2rad(12)
        centre = np.array([2000.0, 1300.0])
        half = distance / 2 * np.array([np.cos(angle), np.sin(angle)])
        eyes = (centre - half, centre + half)
        runs = {
            "eigenvision align_face": lambda eyes=eyes: ev.align_face(photo, eyes, shape=SHAPE),
            "scikit-image rescale + warp": lambda eyes=eyes: scikit_image_crop(photo, eyes),
        }
        if cv2 is not None:
            runs["OpenCV resize + warpAffine"] = lambda eyes=eyes: opencv_crop(cv2, photo32, eyes)
        timed = interleaved_medians(runs, args.repeats)
        reference = timed["scikit-image rescale + warp"][1]
        ours = timed["eigenvision align_face"][0]
        results[f"eyes {distance} px apart"] = {
            name: {
                "seconds": seconds,
                "ratio_to_eigenvision": seconds / ours,
                "mean_abs_difference_from_scikit_image": float(np.abs(crop - reference).mean()),
            }
            for name, (seconds, crop) in timed.items()
        }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    for case, rows in results.items():
        print(case)
        for name, row in rows.items():
            print(
                f"  {name:30s} {1000 * row['seconds']:9.1f} ms"
                f"  x{row['ratio_to_eigenvision']:6.1f}"
                f"  |diff| {row['mean_abs_difference_from_scikit_image']:.4f}"
            )
    return results


if __name__ == "__main__":
    main()
