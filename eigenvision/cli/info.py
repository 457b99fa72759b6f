"""``eigenvision info``: its options and its work."""

from __future__ import annotations

import platform

import numpy as np
import scipy
import skimage
import sklearn

from .. import datasets
from .._version import __version__


def options(parser):
    """The options of ``eigenvision info``."""
    pass


def run(args) -> int:
    print(f"eigenvision {__version__}")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, "
        f"scikit-image {skimage.__version__}"
    )
    home = datasets.data_home()
    print(f"data: ${datasets.DATA_ENV} = {home if home else '(not set)'}")
    print("built-in datasets: digits (scikit-learn), lfw_subset (scikit-image)")
    print(f"downloads (when ${datasets.DATA_ENV} is not set): {datasets.cache_home()}")
    for name, folder in datasets.find_datasets().items():
        status = f"found at {folder}" if folder else f"missing ('eigenvision fetch {name}')"
        print(f"  {name:<11} {status}")
    return 0
