"""How long does finding the faces of a photo take, against OpenCV's Haar, scikit-image's LBP, dlib?

Issue 18's time target: a 640 x 480 photo within 3x OpenCV Haar's
``detectMultiScale`` at the same smallest face. Side by side in one process
on the same photos, interleaved (``_timing.interleaved_medians``): the
shipped finder's ``find`` (at its default threshold, features placed), the
same finder searching upright faces only (``search__rotations=(0.0,)``), with
stage 1's first test read at every window (``search__prefilter_stride=1``) and
below its window (issue 78: ``photos.small_face_finder``, what ``--small-faces``
searches, and ``search__min_iod`` half its eye distance), OpenCV's
frontal-face Haar cascade (also from the smaller face the search below the window
reaches), scikit-image's LBP cascade and dlib's HOG detector, each as
``wild_detection`` runs them (Haar and LBP from the same smallest face as the
finder, ``wild_detection.peer_min_sizes``; dlib upsampled once, as
face_recognition calls it). Issue 41's measure is the
median over photos of each photo's time over Haar's; the CPU time of every
thread (the finder and OpenCV share a photo between the cores) and the memory a
search allocates at its peak (``tracemalloc``, also with ``small_face_finder``) are stated
too. The photos: held-out HELEN test photos reduced to 640 pixels
(``$EIGENVISION_DATA``), or without the dataset scikit-image's astronaut at 640 x 480.

Run:  python benchmarks/bench_find_faces.py --out benchmarks/out/find_faces
"""

from __future__ import annotations

import argparse
import copy
import json
import tracemalloc
from pathlib import Path

import numpy as np
import skimage
from _timing import interleaved_medians, run_meta

import eigenvision as ev
from eigenvision import DatasetNotFoundError, datasets
from eigenvision.experiments import _dlib
from eigenvision.experiments.wild_detection import (
    cascades,
    haar_faces,
    lbp_faces,
    peer_min_sizes,
)
from eigenvision.faces import photos
from eigenvision.normalize import resize


def held_out_photos(limit):
    """``(name, grey image in [0, 1])`` of the first ``limit`` held-out HELEN photos at 640
    pixels, or the astronaut at 640 x 480 when the dataset is missing."""
    try:
        files = datasets.helen_files()
    except DatasetNotFoundError:
        astronaut = resize(photos.sample_picture("astronaut"), (480, 640))
        return [("astronaut (640 x 480)", astronaut)]
    _, test_ids = photos.helen_split(photo for photo, _, _ in files)
    chosen = [f for f in files if f[0] in test_ids][:limit]
    return [
        (Path(image_path).name, datasets.load_helen_photo(image_path, pts_path, max_side=640)[0])
        for _, image_path, pts_path in chosen
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/find_faces")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=10, help="HELEN test photos (default 10)")
    args = parser.parse_args(argv)
    finder = photos.default_finder()
    upright = copy.copy(finder).set_params(search__rotations=(0.0,))
    # stage 1's first test at every window, not coarse to fine on its 2-pixel grid
    every_window = copy.copy(finder).set_params(search__prefilter_stride=1)
    # the search below the window (issue 78): what --small-faces searches, and from half the
    # window's eye distance
    below = photos.small_face_finder(finder)
    lowest = copy.copy(finder).set_params(search__min_iod=finder.iod / 2)
    cv2, haar, lbp = cascades()
    hog = _dlib.hog_detector()
    # the finder's smallest face, as wild_detection
    haar_size, lbp_size = (
        peer_min_sizes(finder)[name] for name in ("OpenCV Haar", "scikit-image LBP")
    )
    haar_below = peer_min_sizes(below)["OpenCV Haar"]
    rows = []
    for name, image in held_out_photos(args.limit):
        runs = {
            "eigenvision find": lambda image=image: finder.find(image),
            "eigenvision find, upright only": lambda image=image: upright.find(image),
            "eigenvision find, first test at every window": (
                lambda image=image: every_window.find(image)
            ),
            "eigenvision find, below the window (small_face_finder: min_iod 10)": (
                lambda image=image: below.find(image)
            ),
            "eigenvision find, below the window (min_iod 8)": lambda image=image: lowest.find(
                image
            ),
            "scikit-image LBP": lambda image=image: lbp_faces(lbp, image, lbp_size),
        }
        if haar is not None:
            runs["OpenCV Haar"] = lambda image=image: haar_faces(haar, image, haar_size)
            runs["OpenCV Haar, from the smaller face"] = lambda image=image: haar_faces(
                haar, image, haar_below
            )
        if hog is not None:
            runs["dlib HOG (upsample 1)"] = lambda image=image: _dlib.hog_faces(hog, image)
        finder.find(image)  # the first call of a photo size fills caches
        below.find(image)
        lowest.find(image)
        peaks = {}
        for label, model in (("find", finder), ("find_below", below)):
            tracemalloc.start()
            model.find(image)
            peaks[label] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        cpu = {}
        timed = interleaved_medians(runs, args.repeats, cpu=cpu)
        rows.append(
            {
                "photo": name,
                "shape": list(image.shape),
                "find_peak_megabytes": peaks["find"],
                "find_below_peak_megabytes": peaks["find_below"],
                **{contender: seconds for contender, (seconds, _) in timed.items()},
                "cpu_seconds": cpu,
            }
        )
        print(name, "  ".join(f"{c}: {1e3 * s:.0f} ms" for c, (s, _) in timed.items()))
    contenders = list(rows[0]["cpu_seconds"])
    median = {c: float(np.median([row[c] for row in rows])) for c in contenders}
    summary = {
        "photos": len(rows),
        "median_seconds": median,
        # every thread's time: the finder and OpenCV share a photo between the cores
        "median_cpu_seconds": {
            c: float(np.median([row["cpu_seconds"][c] for row in rows])) for c in contenders
        },
        "find_peak_megabytes": float(max(row["find_peak_megabytes"] for row in rows)),
        "find_below_peak_megabytes": float(max(row["find_below_peak_megabytes"] for row in rows)),
    }
    if "OpenCV Haar" in median:
        summary["times_haar"] = {
            c: float(np.median([row[c] / row["OpenCV Haar"] for row in rows])) for c in contenders
        }
    for contender in contenders:
        ratio = summary.get("times_haar", {}).get(contender, np.nan)
        cpu = 1e3 * summary["median_cpu_seconds"][contender]
        print(
            f"{contender:32s} {1e3 * median[contender]:7.1f} ms   {ratio:5.1f}x Haar   "
            f"(CPU {cpu:.0f} ms)"
        )
    print(
        f"find's peak allocation: {summary['find_peak_megabytes']:.0f} MB, below the window "
        f"{summary['find_below_peak_megabytes']:.0f} MB"
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = run_meta(
        args,
        **{
            "scikit-image": skimage.__version__,
            "opencv": None if cv2 is None else cv2.__version__,
            "eigenvision": ev.__version__,
        },
    )
    (out / "results.json").write_text(json.dumps({"meta": meta, **summary, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
