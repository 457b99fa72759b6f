"""How much do small maps gain from correlating every template in one batched transform?

A map too small for threads (fewer than ``MAP_PARALLEL_PIXELS``: the feature
searches of a locate, a pyramid's coarse levels) correlates the photo with
all its templates at once, one batched inverse FFT per axis, instead of one
template at a time (``detection._BATCHED_PIXELS``). The numbers are the same
to the bit (``tests/test_detection.py``); this times the shipped finder's
``find`` and ``place`` (two locates) both ways, interleaved in one process
(``_timing.interleaved_medians``), on the held-out HELEN photos of
``bench_find_faces.py`` (or the astronaut without the dataset).

Run:  python benchmarks/bench_batched_maps.py --out benchmarks/out/batched_maps
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _timing import interleaved_medians, run_meta
from bench_find_faces import held_out_photos

import eigenvision as ev
from eigenvision import detection
from eigenvision.faces import photos


def batched_below(pixels, call):
    """``call()`` with maps of fewer than ``pixels`` batched (0: one template at a time)."""
    kept = detection._BATCHED_PIXELS
    detection._BATCHED_PIXELS = pixels
    try:
        return call()
    finally:
        detection._BATCHED_PIXELS = kept


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/batched_maps")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=12, help="HELEN test photos (default 12)")
    args = parser.parse_args(argv)
    finder = photos.default_finder()
    shipped = detection._BATCHED_PIXELS
    rows = []
    for name, image in held_out_photos(args.limit):
        faces = finder.find(image)  # the first call of a photo size fills caches
        box = faces[0].box if faces else (0, 0, image.shape[1], image.shape[0])

        def find(image=image):
            return finder.find(image)

        def place(image=image, box=box):
            return finder.place(image, box)

        runs = {}
        for label, pixels in (("batched", shipped), ("one template at a time", 0)):
            runs[f"find, {label}"] = lambda p=pixels: batched_below(p, find)
            runs[f"place, {label}"] = lambda p=pixels: batched_below(p, place)
        timed = interleaved_medians(runs, args.repeats)
        rows.append({"photo": name, **{c: seconds for c, (seconds, _) in timed.items()}})
        print(name, "  ".join(f"{c}: {1e3 * s:.1f} ms" for c, (s, _) in timed.items()))
    contenders = [key for key in rows[0] if key != "photo"]
    median = {c: float(np.median([row[c] for row in rows])) for c in contenders}
    ratio = {
        task: float(
            np.median(
                [row[f"{task}, batched"] / row[f"{task}, one template at a time"] for row in rows]
            )
        )
        for task in ("find", "place")
    }
    for contender in contenders:
        print(f"{contender:34s} {1e3 * median[contender]:7.1f} ms")
    for task, value in ratio.items():
        print(f"{task}: batched takes {value:.3f}x the time (median over the photos)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = run_meta(args, eigenvision=ev.__version__)
    (out / "results.json").write_text(
        json.dumps(
            {"meta": meta, "median_seconds": median, "batched_over_unbatched": ratio, "rows": rows},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
