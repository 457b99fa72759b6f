"""Sphinx configuration of eigenvision's documentation (user guide, gallery, API reference)."""

import os
import sys
from pathlib import Path

import eigenvision

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "eigenvision"
author = "the eigenvision developers"
release = eigenvision.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "knobs",
]

autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
}
os.environ.setdefault("MPLBACKEND", "Agg")

exclude_patterns = ["_build", "_ext", "architecture.md", "examples/README.rst", "*.png"]
templates_path = ["_templates"]
html_theme = "alabaster"
html_theme_options = {"description": "eigenspace image recognition", "fixed_sidebar": True}
html_static_path = []

# scikit-learn's machinery on every estimator, documented by scikit-learn
_SKLEARN_MACHINERY = {"get_metadata_routing", "set_output", "get_params", "set_params"}


def _skip_sklearn_machinery(app, what, name, obj, skip, options):
    """Leave out scikit-learn's metadata-routing and parameter methods (None: autodoc decides)."""
    if name in _SKLEARN_MACHINERY or (name.startswith("set_") and name.endswith("_request")):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_machinery)
