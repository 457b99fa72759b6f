"""How fast is a full DFFS map against one template match and a brute-force window loop?

Times ``dffs_map`` (k eigenvectors) side by side with one scikit-image
``match_template`` call (normalised cross-correlation with one template),
OpenCV ``matchTemplate`` (TM_CCOEFF_NORMED) when installed, and the
brute-force loop (every window projected with BLAS), on 512x512 and
1024x1024 images, windows 24x24 and 32x32, k = 1, 5, 10, 20, float32 and
float64; k = 20 also cold (the first call at an image size, whose templates'
spectra are not cached yet: every level of a pyramid). Median of repeated
runs, the contenders timed in turn within each repeat (``interleaved_medians``).

Run:  python benchmarks/bench_dffs_map.py --out benchmarks/out/dffs_map
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _timing import interleaved_medians, median_time
from numpy.lib.stride_tricks import sliding_window_view
from skimage.feature import match_template

import eigenvision as ev


def brute_force(image, space):
    h, w = space.image_shape_
    windows = sliding_window_view(image, (h, w)).reshape(-1, h * w)
    return space.dffs(windows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/dffs_map")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    try:
        import cv2
    except ImportError:
        cv2 = None
    rows = []
    for size in args.sizes:
        for window in (24, 32):
            for dtype in (np.float32, np.float64):
                image = rng.random((size, size)).astype(dtype)
                patches = rng.random((60, window, window)).astype(dtype)
                template = patches[0]
                runs = {"match_template": lambda i=image, t=template: match_template(i, t)}
                if cv2 is not None:
                    image32, template32 = image.astype(np.float32), template.astype(np.float32)
                    runs["opencv"] = lambda i=image32, t=template32: cv2.matchTemplate(
                        i, t, cv2.TM_CCOEFF_NORMED
                    )
                spaces = {k: ev.Eigenspace(k).fit(patches) for k in (1, 5, 10, 20)}
                for k, space in spaces.items():
                    for _ in range(2):  # the process keeps spectra asked for a second time
                        ev.dffs_map(image, space)
                    runs[k] = lambda i=image, s=space: ev.dffs_map(i, s)
                # the first call at a new size (a pyramid's every level): templates transformed
                # (a space of its own per call: spectra never asked for before)
                cold = iter(
                    [
                        ev.Eigenspace(20).fit(np.concatenate([patches, patches[:1] + r]))
                        for r in range(args.repeats)
                    ]
                )
                runs["k=20 cold"] = lambda i=image, c=cold: ev.dffs_map(i, next(c))
                timed = interleaved_medians(runs, args.repeats)
                skimage_s = timed["match_template"][0]
                opencv_s = timed["opencv"][0] if cv2 is not None else None
                for k, space in spaces.items():
                    ours = timed[k][0]
                    row = {
                        "size": size,
                        "window": window,
                        "dtype": np.dtype(dtype).name,
                        "k": k,
                        "dffs_map_s": ours,
                        "match_template_s": skimage_s,
                        "opencv_s": opencv_s,
                        "ratio_to_match_template": ours / skimage_s,
                    }
                    if k == 20:
                        row["cold_s"] = timed["k=20 cold"][0]
                        row["cold_ratio_to_match_template"] = row["cold_s"] / skimage_s
                    if size == 512 and k == 10:
                        brute, _ = median_time(lambda i=image, s=space: brute_force(i, s), 1)
                        row["brute_force_s"] = brute
                        row["speedup_vs_brute"] = brute / ours
                    rows.append(row)
                    print(json.dumps(row))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"rows": rows, "args": vars(args)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
