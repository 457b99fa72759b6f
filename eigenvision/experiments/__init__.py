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
    "identity_faces",
    "small_faces",
    "turned_faces",
)


def summaries():
    """Each experiment's one-line summary (its module docstring's first line), read from the
    source without importing it (a help text must not wait for SciPy and scikit-learn).

    Returns
    -------
    dict of str to str
    """
    import ast
    from pathlib import Path

    folder = Path(__file__).parent
    found = {}
    for name in EXPERIMENTS:
        source = (folder / f"{name}.py").read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(source)) or ""
        found[name] = " ".join(docstring.split("\n\n")[0].split())
    return found
