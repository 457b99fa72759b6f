"""How fast is the finder's non-maximum suppression of a photo's stage-1 minima?

Stage 1 of the face finder finds thousands of local DFFS minima per photo
and rotation (the pyramid's windows on a 640-pixel photo) and keeps the
best ``n_candidates`` (2,000) that overlap no better one by more than
``search__overlap`` (0.5) intersection over union. Side by side on the
same detections (real ones: the astronaut's minima at 640 pixels):
``kept_indices`` (a block of candidates at a time),
the textbook greedy loop (one ``box_iou`` call per candidate: what the
finder did) and OpenCV's ``cv2.dnn.NMSBoxes``. Also reported: whether each
keeps the same detections as the loop.

Run:  python benchmarks/bench_suppression.py --out benchmarks/out/suppression
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved_medians, rows_against, write_results

import eigenvision as ev
from eigenvision.detection import dffs_map
from eigenvision.search import box_iou, kept_indices, multiscale_minima, pyramid_scales


def greedy_loop(detections, max_count, overlap):
    """The textbook greedy suppression, one candidate at a time (the finder's code before)."""
    kept, boxes = [], np.empty((max_count, 4))
    for index, d in enumerate(detections):
        n = len(kept)
        if n == max_count:
            break
        box = (d.x, d.y, d.width, d.height)
        if n and np.any(box_iou(box, boxes[:n]) > overlap):
            continue
        boxes[n] = box
        kept.append(index)
    return kept


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/suppression")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    finder = ev.faces.photos.default_finder()
    image = ev.normalize.resize(ev.faces.photos.sample_picture("astronaut"), (640, 640))
    window = tuple(int(v) for v in finder.window_)
    found = multiscale_minima(
        image,
        lambda im: dffs_map(im, finder.search.face_space_, normalize="window", min_contrast=0.02),
        window,
        pyramid_scales(image.shape, window, step=finder.search.step),
    )
    count, overlap = finder.search.n_candidates, finder.search.overlap
    runs = {
        "eigenvision kept_indices": lambda: kept_indices(found, max_count=count, overlap=overlap),
        "greedy loop (box_iou each)": lambda: greedy_loop(found, count, overlap),
    }
    try:
        import cv2

        boxes = [[d.x, d.y, d.width, d.height] for d in found]
        worst = max(d.score for d in found)
        scores = [1.0 + worst - d.score for d in found]  # OpenCV: higher is better, >= 0

        def opencv():
            kept = cv2.dnn.NMSBoxes(boxes, scores, 0.0, overlap, top_k=0)
            return [int(i) for i in np.ravel(kept)][:count]

        runs["OpenCV dnn.NMSBoxes"] = opencv
    except (ImportError, AttributeError):
        pass
    timed = interleaved_medians(runs, args.repeats)
    reference = timed["greedy loop (box_iou each)"][1]
    rows = rows_against(
        timed,
        "eigenvision kept_indices",
        same_as_loop=lambda result: list(result) == reference,
        kept=len,
    )
    for row in rows:
        print(
            f"{row['contender']:28s} {1e3 * row['seconds']:8.1f} ms   ours "
            f"{row['ours_faster']:5.1f}x faster   kept {row['kept']}  same {row['same_as_loop']}"
        )
    write_results(args.out, detections=len(found), rows=rows)


if __name__ == "__main__":
    main()
