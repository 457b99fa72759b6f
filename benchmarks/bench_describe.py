"""How fast are faces described for the identity model, on the cores against on one?

``IdentityModel.describe`` (what ``encode``, ``fit``, ``compare_faces`` and
``cluster_faces`` call) runs scikit-image's descriptors (DAISY, LBP, HOG, each
of the crop and its mirror image, and the Fisher vectors of local DAISY
descriptors) over the crops in parts, one per core, from 16 crops on. Side
by side, interleaved in one process on the same crops: the threaded call,
and the same descriptors on the calling thread alone (the crops described
in turn, as before). The crops: the shipped model's cuts of
LFW photos on LFW's typical eyes (``$EIGENVISION_DATA``), or of scikit-image's
astronaut shifted pixel by pixel when the dataset is missing. The two must
agree exactly.

Run:  python benchmarks/bench_describe.py --out benchmarks/out/describe
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _timing import interleaved_medians, run_meta

import eigenvision as ev
from eigenvision import DatasetNotFoundError, datasets
from eigenvision._parallel import as_one_part, n_threads
from eigenvision.faces.compare import model_crop
from eigenvision.faces.photos import sample_picture


def crops_of(model, count):
    """``count`` crops cut for ``model``, and where they come from."""
    try:
        files = datasets.lfw_files()[:count]
    except DatasetNotFoundError:
        photo = sample_picture("astronaut")
        eyes = np.array([[180.0, 110.0], [240.0, 110.0]])
        crops = [model_crop(photo, eyes + shift, model) for shift in range(count)]
        return np.stack(crops), "scikit-image's astronaut"
    crops = []
    for _, path in files:
        photo = ev.load_image(path)
        scale = np.array(photo.shape[::-1], dtype=float) / 150.0
        crops.append(model_crop(photo, np.multiply(datasets.LFW_EYES, scale), model))
    return np.stack(crops), f"the first {count} LFW photos"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/describe")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--crops", type=int, default=128)
    args = parser.parse_args(argv)
    model = ev.default_identity_model()
    crops, source = crops_of(model, args.crops)
    model.describe(crops[:2])  # imports and first-call costs out of the timings
    runs = {
        "describe, in parts on the cores": lambda: model.describe(crops),
        "the same descriptors on one thread": lambda: as_one_part(
            lambda: np.concatenate(model._described(crops.astype(np.float64)), axis=1)
        ),
    }
    medians = interleaved_medians(runs, args.repeats)
    threaded, alone = (medians[name] for name in runs)
    np.testing.assert_array_equal(threaded[1], alone[1])
    results = {
        "meta": run_meta(args),
        "crops": int(len(crops)),
        "source": source,
        "threads": n_threads(),
        "ms_per_crop": {name: 1000 * medians[name][0] / len(crops) for name in runs},
        "ratio": threaded[0] / alone[0],
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    for name in runs:
        print(f"{name:40s} {results['ms_per_crop'][name]:6.1f} ms a crop")
    print(f"ratio {results['ratio']:.2f} on {results['threads']} threads ({source})")


if __name__ == "__main__":
    main()
