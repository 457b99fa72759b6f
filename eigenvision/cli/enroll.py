"""``eigenvision enroll``: its options and its work."""

from __future__ import annotations

import warnings
from pathlib import Path

from .._base import counted
from .._errors import AlreadyEnrolledWarning
from .._files import updating
from ..faces.crops import identity_threshold
from ..persist import save
from ..recognize import Recognizer
from ..views import view_count
from ._common import (
    add_no_face_option,
    face_threshold_note,
    labelled_photos,
    left_out,
    load_images,
    load_model,
    refuse_whole_photos,
)


def options(parser):
    """The options of ``eigenvision enroll``."""
    parser.add_argument("model", help="model file from 'eigenvision train' (updated in place)")
    parser.add_argument("folder", help="one sub-folder per label (photos for --photos models)")
    parser.add_argument("-o", "--output", help="write here instead of updating the model")
    add_no_face_option(parser)


def run(args) -> int:
    target = args.output or args.model
    with updating(target):  # a second enroll into the same model waits, then adds to this one
        model = load_model(args.model, Recognizer)
        if model.finder is not None:
            model.verbose = not args.quiet
            images, labels, names = labelled_photos(args.folder)
        else:
            faces = load_images(args.folder)
            images, labels = faces.images, faces.labels
            for image, name in zip(images, faces.names, strict=True):
                refuse_whole_photos(image, model, Path(args.folder) / name)
        before, gallery = len(model.classes_), len(model.gallery_labels_)
        with warnings.catch_warnings(record=True) as caught:  # heard whatever the filters say
            warnings.simplefilter("always", AlreadyEnrolledWarning)
            if model.finder is not None:
                on_error = "raise" if args.on_no_face == "stop" else left_out
                model.add(images, labels, names=names, on_error=on_error)
            else:
                model.add(images, labels)
        for warning in caught:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
        model.verbose = False
        save(model, target)
    per_image = view_count(1, jitter=model.jitter, mirror=model.mirror)  # codes per image
    added = (len(model.gallery_labels_) - gallery) // per_image
    print(
        f"enrolled {counted(added, 'image')}; {counted(len(model.classes_), 'class', 'classes')} "
        f"({len(model.classes_) - before} new); saved {target}"
    )
    if model.finder is not None:
        print(f"  {face_threshold_note(identity_threshold(model.finder))}")
    return 0
