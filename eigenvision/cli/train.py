"""``eigenvision train``: its options and its work."""

from __future__ import annotations

from .._argtypes import count, rate
from ..faces.compare import (
    identity_model_name,
)
from ..faces.photos import (
    default_finder,
)
from ..openset import GALLERY_CALIBRATION_PEOPLE, reads_its_gallery
from ..persist import save
from ._common import (
    SOURCES_HELP,
    add_face_threshold,
    add_no_face_option,
    labelled_photos,
    left_out,
    load_images,
    set_face_threshold,
)
from ._recognizers import add_model_options, recognizer


def options(parser):
    """The options of ``eigenvision train``."""
    parser.add_argument("source", help=SOURCES_HELP)
    parser.add_argument("-o", "--output", required=True, help="model file to write (.npz)")
    parser.add_argument("--shape", type=count(1), nargs=2, metavar=("H", "W"), help="working size")
    parser.add_argument(
        "--photos",
        action="store_true",
        help="SOURCE holds uncropped photos, one face each: find, align, enrol",
    )
    parser.add_argument("--finder", help="a face finder file for --photos (default: data/'s)")
    parser.add_argument(
        "--identity-model",
        metavar="MODEL",
        help="with --photos and --method plda: deep, classical or an identity model file "
        "(default: deep when eigenvision[deep] is installed, else classical)",
    )
    parser.add_argument(
        "--unknown",
        metavar="FOLDER",
        help="images (photos, with --photos) of people not in SOURCE, one "
        "sub-folder each: they set the distance beyond which a face is unknown (default: "
        f"none; method plda with {GALLERY_CALIBRATION_PEOPLE} people or more: SOURCE's people, "
        "as strangers to each other, set it too, and alone without --unknown)",
    )
    parser.add_argument(
        "--far",
        type=rate,
        default=0.01,
        help="the share of strangers to accept: of --unknown's people, or without it (method "
        f"plda, {GALLERY_CALIBRATION_PEOPLE} people or more) of the enrolled people as "
        "strangers to each other (default 0.01)",
    )
    parser.add_argument(
        "--closed-set",
        action="store_true",
        help="no threshold: every face gets the nearest enrolled name (default: a threshold, "
        "see --unknown)",
    )
    add_face_threshold(parser)
    add_no_face_option(parser)
    add_model_options(parser)


def run(args) -> int:
    if args.closed_set and args.unknown is not None:
        raise ValueError(
            "--closed-set names every face and --unknown sets a threshold: give one of them"
        )
    shape = tuple(args.shape) if args.shape else None
    # read first: a bad folder fails before the training's minutes
    unknown = (
        None
        if args.unknown is None
        else (
            labelled_photos(args.unknown)[:2] if args.photos else (load_images(args.unknown), None)
        )
    )
    if args.photos:
        finder = default_finder(args.finder)
        set_face_threshold(finder, args)
        photos, labels, names = labelled_photos(args.source)
        model = recognizer(
            args, len(photos), shape=shape, resize=True, finder=finder, verbose=not args.quiet
        )
        model.check_component_count(photos, option="--n-components")  # before the finding
        model.fit(
            photos,
            labels,
            names=names,
            on_error="raise" if args.on_no_face == "stop" else left_out,
        )
        model.verbose = False  # the progress was for this command, not for the file's users
        trained_on = f"{len(model.gallery_labels_)} photos (one face each)"
    else:
        images = load_images(args.source)
        model = recognizer(args, len(images), shape=shape, resize=True)
        model.check_component_count(images, option="--n-components")
        model.fit(images)
        trained_on = f"{len(images)} images"
    # a model trained on other people (plda) reads the enrolled people's own conditions and
    # strangers from them; every other feature is fitted to them
    by_gallery = reads_its_gallery(model)
    centred = ""
    if by_gallery:
        model.centre_on_gallery()
        centred = ", the identity model centred on them"
    calibrated = "; every face gets the nearest name (--unknown FOLDER sets a threshold" + (
        f", as do {GALLERY_CALIBRATION_PEOPLE} people or more)" if model.method == "plda" else ")"
    )
    if unknown is not None:
        threshold = model.calibrate_threshold(*unknown, far=args.far, enrolled=by_gallery)
        calibrated = (
            f"; unknown {_beyond(model, threshold)} (false-accept rate {args.far:g} of "
            "--unknown's people"
            + (" and of the enrolled as strangers to each other)" if by_gallery else ")")
        )
    elif args.closed_set:
        calibrated = "; every face gets the nearest name (--closed-set)"
    elif by_gallery:
        threshold = model.calibrate_threshold(far=args.far)
        calibrated = (
            f"; unknown {_beyond(model, threshold)} (false-accept rate {args.far:g}, "
            "calibrated on the enrolled people as strangers to each other; --unknown FOLDER "
            "calibrates on strangers)"
        )
    save(model, args.output)
    components = getattr(model.feature_, "n_components_", model.n_components or "all")
    feature = (
        f"the {identity_model_name(getattr(args, 'identity_model', None))} identity model"
        if model.method == "plda"
        else f"{components} components, {args.metric}"
    )
    print(
        f"trained {model.method} ({feature}) on "
        f"{trained_on} of {len(model.classes_)} classes{centred}{calibrated}; saved {args.output}"
    )
    return 0


def _beyond(model, threshold) -> str:
    """Where a name stops, as users read it: a probability for the identity model (its
    decisions are minus scores), else a distance."""
    same = model.same_person([threshold])
    if same is None:
        return f"beyond distance {threshold:.4g}"
    return f"below P(same person) {same[0]:.3g}"
