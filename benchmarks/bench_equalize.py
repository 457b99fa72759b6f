"""How fast is the finder's histogram equalisation of a photo's candidate windows?

The finder's decision histogram-equalises every stage-1 candidate window
(Sung & Poggio 1998): each grey level becomes its mean rank in the window.
Side by side on the same windows (the astronaut's stage-1 candidates at 640
pixels, as cut): ``_mean_ranks`` (numpy's sort of each row, then one
compiled pass that gives each run of tied values its mean rank) and scipy's
``rankdata(axis=1, method="average")`` (what the finder ran before). Also
reported: whether ours gives scipy's ranks exactly.

Run:  python benchmarks/bench_equalize.py --out benchmarks/out/equalize
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved_medians, rows_against, write_results
from scipy.stats import rankdata

import eigenvision as ev
from eigenvision.normalize import _mean_ranks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/equalize")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    finder = ev.faces.photos.default_finder()
    image = ev.normalize.resize(ev.faces.photos.sample_picture("astronaut"), (640, 640))
    windows = finder.decision.windows(image, finder.search.candidates(image))
    rows = windows.reshape(len(windows), -1)
    runs = {
        "eigenvision _mean_ranks": lambda: _mean_ranks(rows),
        "scipy rankdata(axis=1)": lambda: rankdata(rows, axis=1, method="average"),
    }
    timed = interleaved_medians(runs, args.repeats)
    reference = timed["scipy rankdata(axis=1)"][1]
    results = rows_against(
        timed,
        "eigenvision _mean_ranks",
        same_as_scipy=lambda result: bool(np.array_equal(result, reference)),
    )
    tied = float(np.mean([len(np.unique(row)) < len(row) for row in rows]))
    print(f"{len(rows)} windows of {windows.shape[1:]}, {100 * tied:.0f}% with tied grey levels")
    for row in results:
        print(
            f"{row['contender']:26s} {1e3 * row['seconds']:8.1f} ms   ours "
            f"{row['ours_faster']:5.1f}x faster   same as scipy {row['same_as_scipy']}"
        )
    write_results(args.out, windows=len(rows), tied=tied, rows=results)


if __name__ == "__main__":
    main()
