"""eigenvision: recognise and find things in images with eigenspaces.

Eigenfaces (Turk & Pentland 1991), modular eigenfeatures (Pentland,
Moghaddam & Starner 1994) and the distance-from-feature-space detector
(Moghaddam & Pentland 1997), with scikit-learn conventions.
"""

from . import dask_engine, datasets, evaluate, faces, neighbors, normalize, search, views
from ._errors import (
    DatasetNotFoundError,
    EigenvisionError,
    ImageLoadError,
    ImageSetError,
    ModelFileError,
    NotFittedError,
)
from ._version import __version__
from .bayesian import BayesianSpace
from .detection import detect, dffs_map, difs_map, likelihood_map
from .eigenspace import Eigenspace
from .faces import align_face, face_box, face_windows, window_eyes
from .finder import Face, FaceFinder, photo_faces, single_face
from .fisher import FisherSpace
from .imageset import ImageSet
from .io import iter_image_batches, load_image, load_image_set, load_photos
from .kernel import KernelPCA
from .modular import FeatureDetector, FeatureLocations
from .neighbors import NearestNeighbor, nearest_subspace
from .normalize import PixelStandardizer, normalize_image, normalize_images
from .persist import load, save
from .photos import find_faces
from .ppca import ProbabilisticPCA
from .rank import RankSelection, select_rank
from .recognize import UNKNOWN, Recognizer, Verification
from .search import Detection

__all__ = [
    "__version__",
    "dask_engine",
    "datasets",
    "evaluate",
    "faces",
    "neighbors",
    "search",
    "views",
    "load",
    "save",
    "UNKNOWN",
    "NearestNeighbor",
    "Recognizer",
    "Verification",
    "nearest_subspace",
    "normalize",
    "DatasetNotFoundError",
    "EigenvisionError",
    "ImageLoadError",
    "ImageSetError",
    "ModelFileError",
    "NotFittedError",
    "Detection",
    "detect",
    "dffs_map",
    "difs_map",
    "likelihood_map",
    "Eigenspace",
    "FisherSpace",
    "BayesianSpace",
    "Face",
    "FaceFinder",
    "photo_faces",
    "single_face",
    "find_faces",
    "align_face",
    "KernelPCA",
    "FeatureDetector",
    "FeatureLocations",
    "face_box",
    "face_windows",
    "window_eyes",
    "ProbabilisticPCA",
    "RankSelection",
    "select_rank",
    "ImageSet",
    "load_image",
    "load_image_set",
    "load_photos",
    "iter_image_batches",
    "PixelStandardizer",
    "normalize_image",
    "normalize_images",
]
