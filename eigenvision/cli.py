"""The ``eigenvision`` command line: it parses arguments and prints; the maths lives elsewhere."""

from __future__ import annotations

import argparse
import platform
import sys

from . import __version__, datasets


def _cmd_info(args) -> int:
    import numpy
    import scipy
    import skimage
    import sklearn

    print(f"eigenvision {__version__}")
    print(
        f"python {platform.python_version()}, numpy {numpy.__version__}, "
        f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, "
        f"scikit-image {skimage.__version__}"
    )
    home = datasets.data_home()
    print(f"data: ${datasets.DATA_ENV} = {home if home else '(not set)'}")
    print("built-in datasets: digits (scikit-learn), lfw_subset (scikit-image)")
    for name, folder in datasets.find_datasets().items():
        status = f"found at {folder}" if folder else "missing"
        print(f"  {name:<11} {status}")
    if home is None:
        print(
            f"set ${datasets.DATA_ENV} to the folder holding att_faces/, imm_frontal/, usps/, ..."
        )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="eigenvision",
        description="Eigenspace image recognition: eigenfaces, eigenfeatures, DFFS detection.",
    )
    parser.add_argument("--version", action="version", version=f"eigenvision {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    info = commands.add_parser("info", help="version, data location and the datasets found")
    info.set_defaults(run=_cmd_info)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 0
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
