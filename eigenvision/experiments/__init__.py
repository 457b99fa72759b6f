"""The lecture's experiments, one module each with ``main(argv=None)``.

Run one as ``eigenvision experiment NAME [options]`` or
``python experiments/NAME.py [options]``. Each writes ``figure.png`` (and
more figures where useful) and ``results.json`` (every number and the
arguments) into ``--out`` and prints a one-line summary.
"""

EXPERIMENTS = (
    "eigendigits",
    "spectrum",
    "recognition_rate",
    "novelty_roc",
    "eigenfaces",
    "face_recognition_rate",
    "feature_detection_roc",
    "lsa",
    "wild_detection",
    "open_set",
    "photo_identity",
    "clustering",
    "lfw_verification",
    "face_clustering",
    "lfw_people",
    "calibration",
)
