"""How fast is Eigenspace.fit against scikit-learn's PCA, at what accuracy?

Times ``Eigenspace(k).fit`` (solver "auto", plus "randomized") against
scikit-learn ``PCA(k)`` with every solver, side by side in one process,
median of repeated runs, on the AT&T faces (400 x 10304), USPS (7291 x 256),
scikit-learn's digits (1797 x 64) and a synthetic 20000 x 4096 set, all
float32. Accuracy is the largest principal angle between the fitted subspace
and a float64 reference SVD.

Run:  python benchmarks/bench_eigenspace.py --out benchmarks/out/eigenspace
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import scipy
import sklearn
from _timing import median_time, run_meta
from scipy import linalg
from sklearn.decomposition import PCA

import eigenvision as ev
from eigenvision import datasets


def reference_subspace(X, k):
    centred = X.astype(np.float64) - X.mean(axis=0, dtype=np.float64)
    if centred.shape[0] <= centred.shape[1]:
        _, _, vt = linalg.svd(centred, full_matrices=False)
        return vt[:k]
    values, vectors = linalg.eigh(centred.T @ centred, driver="evd")
    return vectors[:, ::-1][:, :k].T


def angle(components, reference):
    return float(np.max(linalg.subspace_angles(components.T.astype(np.float64), reference.T)))


def load_sets(data, rng, large):
    sets = {"digits 1797x64": datasets.load_digits().X}
    try:
        sets["AT&T 400x10304"] = datasets.load_att(data and Path(data) / "att_faces").X
        sets["USPS 7291x256"] = datasets.load_usps(data and Path(data) / "usps").X
    except ev.DatasetNotFoundError as exc:
        print(f"skipping real data: {exc}")
    if large:
        latent = rng.normal(size=(20000, 60)).astype(np.float32) * np.linspace(20, 2, 60)
        basis = np.linalg.qr(rng.normal(size=(4096, 60)))[0].T.astype(np.float32)
        noise = rng.normal(size=(20000, 4096)).astype(np.float32)
        sets["synthetic 20000x4096"] = latent @ basis + noise
    return sets


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="folder with the datasets")
    parser.add_argument("--out", default="benchmarks/out/eigenspace")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=50, help="components")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-large", action="store_true", help="skip the 20000x4096 set")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = []
    for name, X in load_sets(args.data, rng, not args.no_large).items():
        X = np.ascontiguousarray(X, dtype=np.float32)
        k = min(args.k, min(X.shape) - 1)
        big = X.size > 50e6
        repeats = 1 if big else args.repeats
        reference = reference_subspace(X, k)
        contenders = {
            "eigenvision auto": lambda X=X, k=k: ev.Eigenspace(k).fit(X),
            "eigenvision randomized": lambda X=X, k=k: ev.Eigenspace(k, solver="randomized").fit(X),
            "sklearn full": lambda X=X, k=k: PCA(k, svd_solver="full").fit(X),
            "sklearn covariance_eigh": lambda X=X, k=k: PCA(k, svd_solver="covariance_eigh").fit(X),
            "sklearn arpack": lambda X=X, k=k: PCA(k, svd_solver="arpack", random_state=0).fit(X),
            "sklearn randomized": lambda X=X, k=k: PCA(
                k, svd_solver="randomized", random_state=0
            ).fit(X),
        }
        if big:
            contenders.pop("sklearn full")  # LAPACK gesdd on 20000x4096: minutes
        if X.shape[1] > 4 * X.shape[0]:
            # eigh of a 10304 x 10304 covariance: tens of seconds, never scikit-learn's choice
            contenders.pop("sklearn covariance_eigh")
        results = {}
        for label, fit in contenders.items():
            seconds, model = median_time(fit, repeats)
            accuracy = angle(model.components_, reference)
            results[label] = {"seconds": seconds, "angle": accuracy}
            print(f"{name:<22} {label:<24} {seconds * 1000:9.1f} ms  angle {accuracy:.1e}")
        exact = [
            v for key, v in results.items() if key.startswith("sklearn") and "random" not in key
        ]
        best = min(exact, key=lambda v: v["seconds"])
        ours = results["eigenvision auto"]
        rows.append(
            {
                "data": name,
                "k": k,
                "results": results,
                "ratio_to_best_exact_sklearn": ours["seconds"] / best["seconds"],
            }
        )
        ratio = rows[-1]["ratio_to_best_exact_sklearn"]
        print(f"{name:<22} ratio eigenvision / best exact scikit-learn = {ratio:.2f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = run_meta(
        args, scipy=scipy.__version__, sklearn=sklearn.__version__, eigenvision=ev.__version__
    )
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
