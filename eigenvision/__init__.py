"""eigenvision: recognise and find things in images with eigenspaces.

Eigenfaces (Turk & Pentland 1991), modular eigenfeatures (Pentland,
Moghaddam & Starner 1994) and the distance-from-feature-space detector
(Moghaddam & Pentland 1997), with scikit-learn conventions.

Submodules and names are imported on first use (``lazy_loader``, as
scikit-image does): ``import eigenvision`` stays cheap, and scikit-learn,
scikit-image and matplotlib load only when a part that needs them is used.
"""

import lazy_loader as lazy

from ._version import __version__

__getattr__, _, _lazy_names = lazy.attach(
    __name__,
    submodules=[
        "dask_engine",
        "datasets",
        "evaluate",
        "faces",
        "neighbors",
        "normalize",
        "openset",
        "plot",
        "search",
        "transform",
        "views",
    ],
    submod_attrs={
        "_base": ["NotFittedError"],
        "_errors": [
            "DatasetNotFoundError",
            "EigenvisionError",
            "ImageLoadError",
            "ImageSetError",
            "ModelFileError",
            "NoFaceError",
            "FaceCountError",
            "UnreadableFilesWarning",
            "AlreadyEnrolledWarning",
        ],
        "bayesian": ["BayesianSpace"],
        "cluster": ["cluster"],
        "descriptors": ["FisherVectors"],
        "detection": ["detect", "dffs_map", "difs_map", "likelihood_map"],
        "eigenspace": ["Eigenspace"],
        "faces.compare": ["compare_faces", "default_identity_model"],
        "faces.crops": ["align_face", "photo_faces", "single_face"],
        "faces.groups": ["cluster_faces"],
        "faces.features": ["FeatureDetector", "FeatureLocations"],
        "faces.eyes": ["EyeRegressor"],
        "faces.finder": ["Face", "FaceFinder"],
        "faces.geometry": ["face_box", "face_windows", "window_eyes"],
        "faces.photos": ["default_finder", "find_faces"],
        "fisher": ["FisherSpace"],
        "identity": ["PLDA", "JointBayesian", "PLDAFusion", "IdentityModel", "FaceDescriber"],
        "imageset": ["ImageSet"],
        "io": ["iter_image_batches", "load_image", "load_image_set", "load_photos"],
        "kernel": ["KernelPCA"],
        "neighbors": ["NearestNeighbor", "nearest_subspace"],
        "normalize": ["PixelStandardizer", "normalize_image", "normalize_images"],
        "persist": ["load", "save"],
        "ppca": ["ProbabilisticPCA"],
        "rank": ["RankSelection", "select_rank"],
        "openset": ["UNKNOWN", "Verification"],
        "recognize": ["Recognizer"],
        "search": ["Detection"],
    },
)

__all__ = ["__version__", *_lazy_names]


def __dir__():
    return list(__all__)
