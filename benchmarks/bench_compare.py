"""How long does comparing two photos take, against finding their faces and against dlib?

Issue 76's time target: ``compare_faces(model="deep")`` within 2x dlib's own recipe a pair.

Issue 42's time target: ``compare_faces`` on two 640-pixel photos within 2x two
``find_faces`` calls (the face search dominates). Side by side in one process,
interleaved (``_timing.interleaved_medians``), on pairs of LFW's View 1
training pairs (the photos enlarged to 640 pixels, as a user's photos come):
``ev.compare_faces`` with each shipped model (find, cut, describe, score), the finder alone on both
photos, and face_recognition's recipe with dlib (HOG faces upsampled once, the
5-point shape, the 128-D network embedding of each photo and their distance;
the ``bench`` extra).

Run:  python benchmarks/bench_compare.py --out benchmarks/out/compare
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _timing import interleaved_medians, run_meta

import eigenvision as ev
from eigenvision import datasets
from eigenvision.experiments import _dlib
from eigenvision.identity import deep_available
from eigenvision.transform import resize


def photo_pairs(limit):
    """``(name, photo a, photo b)`` in colour at 640 x 640: LFW's first ``limit`` pairs."""
    folder = datasets.find_datasets()["lfw_train"] / "images"
    pairs = datasets.lfw_pairs()[:: max(1, len(datasets.lfw_pairs()) // limit)][:limit]
    return [
        (
            f"{a} | {b}",
            *(resize(ev.load_image(folder / name, as_gray=False), (640, 640)) for name in (a, b)),
        )
        for a, b, _ in pairs
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/compare")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=8, help="LFW pairs (default 8)")
    args = parser.parse_args(argv)
    finder = ev.default_finder()
    models = {"classical": ev.default_identity_model("classical")}
    if deep_available():
        models["deep"] = ev.default_identity_model("deep")
    embedder = _dlib.Embedder() if _dlib.available() else None

    def dlib_compare(a, b):
        vectors = [embedder.faces((photo * 255).round().astype(np.uint8))[1] for photo in (a, b)]
        return (
            None if min(map(len, vectors)) == 0 else np.linalg.norm(vectors[0][0] - vectors[1][0])
        )

    rows = []
    for name, a, b in photo_pairs(args.limit):
        runs = {
            f"compare_faces ({label})": lambda a=a, b=b, m=m: ev.compare_faces(
                a, b, finder=finder, model=m
            )
            for label, m in models.items()
        }
        runs["find_faces on both photos"] = lambda a=a, b=b: (finder.find(a), finder.find(b))
        if embedder is not None:
            runs["dlib (HOG faces + embeddings)"] = lambda a=a, b=b: dlib_compare(a, b)
        finder.find(a)  # the first call of a photo size fills caches
        try:
            timed = interleaved_medians(runs, args.repeats)
        except ev.NoFaceError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        rows.append({"pair": name, **{c: seconds for c, (seconds, _) in timed.items()}})
        print(name, "  ".join(f"{c}: {1e3 * s:.0f} ms" for c, (s, _) in timed.items()))
    contenders = [key for key in rows[0] if key != "pair"]
    median = {c: float(np.median([row[c] for row in rows])) for c in contenders}
    ratio = {c: median[c] / median["find_faces on both photos"] for c in contenders}
    peer = "dlib (HOG faces + embeddings)"
    over_dlib = {c: median[c] / median[peer] for c in contenders} if peer in median else {}
    for contender in contenders:
        print(
            f"{contender:32s} {1e3 * median[contender]:7.1f} ms   {ratio[contender]:5.2f}x finds"
            + (f"   {over_dlib[contender]:5.2f}x dlib" if over_dlib else "")
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = run_meta(args, eigenvision=ev.__version__)
    summary = {
        "pairs": len(rows),
        "median_seconds": median,
        "times_two_finds": ratio,
        "times_dlib_recipe": over_dlib,
    }
    (out / "results.json").write_text(json.dumps({"meta": meta, **summary, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
