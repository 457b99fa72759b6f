"""How fast are a photo's candidate face windows cut, all at once against one by one?

The face finder cuts ~3,000 candidate windows (26 x 22, eyes levelled) from
each photo. ``face_windows_at`` resamples them all in one compiled loop
(``transform.sample_grids``, numba); the peers: the same points in one
``scipy.ndimage.map_coordinates`` call (``transform.sample``, what
``face_windows_at`` did before), and each window cut by its own similarity
warp, scikit-image ``warp`` (``face_window``, what the finder did before
that) and OpenCV ``warpAffine`` (bilinear, edges replicated), side by
side on the same eye pairs of a 640 x 480 photo. Also reported: the largest
difference from the scikit-image windows (OpenCV quantises its bilinear
weights to 1/32 pixel). Last, where two threads start to pay in ``sample_grids``
(``transform._PARALLEL_POINTS``): one thread against two on 20 to 3,000 windows.

Run:  python benchmarks/bench_face_windows.py --out benchmarks/out/face_windows
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _timing import interleaved_medians

import eigenvision as ev
from eigenvision import transform
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


def map_coordinates_windows(image, eyes, iod):
    """The windows' points in one ``scipy.ndimage.map_coordinates`` call (``transform.sample``)."""
    height, width = window_shape(iod)
    step = ((eyes[:, 1, 0] - eyes[:, 0, 0]) + 1j * (eyes[:, 1, 1] - eyes[:, 0, 1])) / iod
    step = step[:, None, None]
    x = np.arange(width)[None, None, :] - FACE_WINDOW["eye_inset"] * iod
    y = np.arange(height)[None, :, None] - FACE_WINDOW["eye_row"] * iod
    cols = eyes[:, 0, 0, None, None] + step.real * x - step.imag * y
    rows = eyes[:, 0, 1, None, None] + step.imag * x + step.real * y
    return transform.sample(image, rows, cols)


def thread_crossover(image, eyes, iod, repeats):
    """``face_windows_at``'s time with ``sample_grids`` on one thread and on two, for growing
    numbers of windows."""
    rows, saved = [], transform._PARALLEL_POINTS
    try:
        for count in (20, 50, 100, 200, 400, 800, 1600, 3000):
            timed = {}
            for label, points in (("one_thread", np.inf), ("two_threads", 0)):
                transform._PARALLEL_POINTS = points
                timed[label] = interleaved_medians(
                    {label: lambda count=count: face_windows_at(image, eyes[:count], iod=iod)},
                    repeats,
                    pause=0.01,
                )[label][0]
            rows.append({"windows": count, "points": count * np.prod(window_shape(iod)), **timed})
    finally:
        transform._PARALLEL_POINTS = saved
    return rows


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
    face_windows_at(image, eyes[:2], iod=iod)  # numba compiles (or loads) its loop
    runs = {
        "eigenvision face_windows_at": lambda: face_windows_at(image, eyes, iod=iod),
        "scipy map_coordinates, at once": lambda: map_coordinates_windows(image, eyes, iod),
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
    crossover = thread_crossover(image, eyes, iod, 31)
    for row in crossover:
        print(
            f"{row['windows']:4d} windows ({row['points']:6d} points): one thread "
            f"{1e3 * row['one_thread']:5.2f} ms, two {1e3 * row['two_threads']:5.2f} ms"
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"windows": args.count, "rows": rows, "threads": crossover}
    (out / "results.json").write_text(json.dumps(results, indent=2, default=int))


if __name__ == "__main__":
    main()
