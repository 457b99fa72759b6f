"""How fast are a photo's candidate face windows cut, all at once against one by one?

The face finder cuts ~3,000 candidate windows (26 x 22, eyes levelled) from
each photo. ``face_windows_at`` resamples them all in one
``scipy.ndimage.map_coordinates`` call; the peers cut each window by its
own similarity warp: scikit-image ``warp`` (``face_window``, what the finder
did before) and OpenCV ``warpAffine`` (bilinear, edges replicated), side by
side on the same eye pairs of a 640 x 480 photo. Also reported: the largest
difference from the scikit-image windows (OpenCV quantises its bilinear
weights to 1/32 pixel).

Run:  python benchmarks/bench_face_windows.py --out benchmarks/out/face_windows
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _timing import interleaved_medians

import eigenvision as ev
from eigenvision.faces.geometry import FACE_WINDOW, face_window, face_windows_at, window_shape


def opencv_windows(cv2, image, eyes, iod):
    """Each window by ``cv2.warpAffine`` with the transform that levels its eyes."""
    height, width = window_shape(iod)
    target = np.array([FACE_WINDOW["eye_inset"] * iod, FACE_WINDOW["eye_row"] * iod])
    out = np.empty((len(eyes), height, width), np.float32)
    for index, (left, right) in enumerate(eyes):
        a = iod / complex(*(right - left))
        b = complex(*target) - a * complex(*left)
        matrix = np.array([[a.real, -a.imag, b.real], [a.imag, a.real, b.imag]])
        out[index] = cv2.warpAffine(
            image, matrix, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/face_windows")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--count", type=int, default=3000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    image = ev.normalize.resize(ev.faces.photos.sample_picture("astronaut"), (480, 640))
    left = rng.uniform(0, 600, (args.count, 2)) * [1, 0.75]
    angle, distance = rng.uniform(-0.4, 0.4, args.count), rng.uniform(16, 120, args.count)
    eyes = np.stack([left, left + np.c_[np.cos(angle), np.sin(angle)] * distance[:, None]], 1)
    iod = 16
    runs = {
        "eigenvision face_windows_at": lambda: face_windows_at(image, eyes, iod=iod),
        # cut from antialiased reductions (what the finder does): not the same windows
        "eigenvision face_windows_at, antialias": lambda: face_windows_at(
            image, eyes, iod=iod, antialias=True
        ),
        "scikit-image warp, one by one": lambda: np.stack(
            [face_window(image, a, b, iod=iod) for a, b in eyes]
        ),
    }
    try:
        import cv2

        image32 = image.astype(np.float32)
        runs["OpenCV warpAffine, one by one"] = lambda: opencv_windows(cv2, image32, eyes, iod)
    except ImportError:
        pass
    timed = interleaved_medians(runs, args.repeats)
    reference = timed["scikit-image warp, one by one"][1]
    ours = timed["eigenvision face_windows_at"][0]
    rows = [
        {
            "contender": name,
            "seconds": seconds,
            "ours_faster": seconds / ours,
            "max_difference": float(np.abs(result - reference).max()),
        }
        for name, (seconds, result) in timed.items()
    ]
    for row in rows:
        print(
            f"{row['contender']:40s} {1e3 * row['seconds']:8.1f} ms   "
            f"ours {row['ours_faster']:5.1f}x faster   max diff {row['max_difference']:.1e}"
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"windows": args.count, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
