"""``eigenvision features``: its options and its work."""

from __future__ import annotations

from .. import datasets
from .._argtypes import count
from ..faces.features import FeatureDetector
from ..persist import save


def options(parser):
    """The options of ``eigenvision features``."""
    parser.add_argument("-o", "--output", required=True, help="model file to write (.npz)")
    parser.add_argument(
        "--n-components",
        type=count(0),
        default=10,
        help="components of each feature's eigenspace (default: %(default)s)",
    )


def run(args) -> int:
    faces = datasets.load_imm()
    detector = FeatureDetector(n_components=args.n_components).fit(faces)
    save(detector, args.output)
    print(f"trained eye/nose/mouth eigenspaces on {len(faces)} IMM faces; saved {args.output}")
    return 0
