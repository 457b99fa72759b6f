"""The command line's commands: their options and what each runs (``eigenvision.cli`` dispatches).

Imported only when a command runs, so ``eigenvision --help`` stays light. The
options read the models' declarations (``Recognizer._params``) for their
choices, defaults and help.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shutil
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import scipy
import skimage
import sklearn
from PIL import Image

from . import datasets, evaluate
from ._argtypes import count, finite, probability, rate
from ._base import counted, format_below, progress
from ._errors import AlreadyEnrolledWarning
from ._files import updating
from ._version import __version__
from .experiments import EXPERIMENTS, summaries
from .faces.compare import (
    SHIPPED_IDENTITY,
    compare_faces,
    default_identity_model,
    file_scale,
    identity_model_name,
)
from .faces.crops import face_thumbnail
from .faces.features import FeatureDetector
from .faces.groups import CALIBRATED_CUT, LEARNT_CUT, cluster_faces, grouping_summary
from .faces.photos import (
    DEFAULT_FINDER,
    build_finder,
    default_finder,
    fit_appearance_check,
    fit_eye_regressor,
)
from .faces.recipes import build_identity_model
from .io import image_entries, load_image, load_image_set, load_photos
from .openset import GALLERY_CALIBRATION_PEOPLE, reads_its_gallery
from .persist import load, save
from .plot import faces as plot_faces
from .plot import save_figure
from .recognize import Recognizer
from .views import view_count


def _left_out(where, error) -> None:
    """Say on stderr that a file (unreadable, or a photo without its one face) was left out:
    the ``on_error`` callable of the readers and the photo front end, so that the user hears of
    it whatever the warning filters say."""
    print(f"eigenvision: left out {error}", file=sys.stderr)


def _load_images(source: str):
    """An ImageSet from a folder of labelled sub-folders or a dataset name."""
    if source in datasets.REGISTRY and not Path(source).exists():
        return datasets.load(source)
    return load_image_set(source, on_error=_left_out)


def _cmd_info(args) -> int:
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


def _options_fetch(parser):
    """The options of ``eigenvision fetch``."""
    parser.add_argument(
        "names",
        nargs="+",
        choices=[*datasets.DATASETS, "all"],
        metavar="NAME",
        help=f"datasets to download: {', '.join(datasets.DATASETS)}, or all",
    )
    parser.add_argument(
        "--data-home",
        metavar="FOLDER",
        help=f"where to put them (default: ${datasets.DATA_ENV}, else the cache 'info' names)",
    )
    parser.add_argument(
        "--mirror",
        metavar="URL",
        help="download from this address instead, laid out as a data home (URL/att_faces/s1/1.pgm)",
    )


def _cmd_fetch(args) -> int:
    names = list(datasets.DATASETS) if "all" in args.names else dict.fromkeys(args.names)
    for name in names:
        folder = datasets.fetch(name, args.data_home, mirror=args.mirror, progress=not args.quiet)
        print(f"{name}: {folder}")
    return 0


def _load_model(path, cls):
    """A model file's model, refused unless it is a ``cls``."""
    model = load(path)
    if not isinstance(model, cls):
        raise ValueError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}")
    return model


def _component_count(args, n_images):
    """``--n-components``, else 40 where the images give plenty (80 views), else all they give."""
    if args.n_components is not None:
        return args.n_components
    views = view_count(n_images, jitter=args.jitter, mirror=args.mirror)
    return 40 if views >= 80 else None


def _method(args) -> str:
    """``--method``, by default ``plda`` for photos (the shipped identity model: enrolment
    only, one photo per person works) and ``eigenfaces`` for face images."""
    if args.method is not None:
        return args.method
    return "plda" if getattr(args, "photos", False) else "eigenfaces"


def _recognizer(args, n_images, **options):
    """The Recognizer the model options of ``train`` and ``evaluate`` describe."""
    method = _method(args)
    detector = None
    if method in ("modular", "combined"):
        if not args.detector:
            raise ValueError(
                f"--method {method} needs --detector FEATURES.npz "
                "(make one with 'eigenvision features -o features.npz')"
            )
        detector = _load_model(args.detector, FeatureDetector)
    if method == "plda":
        if args.n_components is not None:
            raise ValueError(
                "--n-components sizes an eigenspace; --method plda (the default for --photos) "
                "uses the shipped identity model: leave it out, or pass --method eigenfaces"
            )
        # the shipped identity model is the background: training only enrols
        chosen = getattr(args, "identity_model", None)
        options = {"feature": default_identity_model(chosen), **options}
        if options.get("finder") is None and options.get("shape") is None:
            options["shape"] = tuple(options["feature"].shape)
    return Recognizer(
        n_components=_component_count(args, n_images),
        method=method,
        metric=args.metric,
        mirror=args.mirror,
        jitter=args.jitter,
        detector=detector,
        face_box=tuple(args.face_box) if args.face_box else None,
        **options,
    )


def _cmd_train(args) -> int:
    if args.closed_set and args.unknown is not None:
        raise ValueError(
            "--closed-set names every face and --unknown sets a threshold: give one of them"
        )
    shape = tuple(args.shape) if args.shape else None
    # read first: a bad folder fails before the training's minutes
    unknown = (
        None
        if args.unknown is None
        else (_load_photos(args.unknown)[:2] if args.photos else (_load_images(args.unknown), None))
    )
    if args.photos:
        finder = default_finder(args.finder)
        finder.threshold = finder.threshold if args.face_threshold is None else args.face_threshold
        photos, labels, names = _load_photos(args.source)
        model = _recognizer(
            args, len(photos), shape=shape, resize=True, finder=finder, verbose=not args.quiet
        )
        model.check_component_count(photos, option="--n-components")  # before the finding
        model.fit(
            photos,
            labels,
            names=names,
            on_error="raise" if args.on_no_face == "stop" else _left_out,
        )
        model.verbose = False  # the progress was for this command, not for the file's users
        trained_on = f"{len(model.gallery_labels_)} photos (one face each)"
    else:
        images = _load_images(args.source)
        model = _recognizer(args, len(images), shape=shape, resize=True)
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
            f"; unknown beyond distance {threshold:.4g} (false-accept rate {args.far:g} of "
            "--unknown's people"
            + (" and of the enrolled as strangers to each other)" if by_gallery else ")")
        )
    elif args.closed_set:
        calibrated = "; every face gets the nearest name (--closed-set)"
    elif by_gallery:
        threshold = model.calibrate_threshold(far=args.far)
        calibrated = (
            f"; unknown beyond distance {threshold:.4g} (false-accept rate {args.far:g}, "
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


def _load_photos(source: str):
    """``(photos, labels, names)`` from a folder of labelled photos of any sizes or a dataset."""
    if source in datasets.REGISTRY and not Path(source).exists():
        faces = datasets.load(source)
        return list(faces.images), faces.labels, faces.names
    return load_photos(source, on_error=_left_out)


def _recognize_photos(model, args) -> list:
    """Every face of each photo with its name (a model trained with ``--photos``)."""
    if args.face_threshold is not None:
        model.finder.threshold = args.face_threshold
    results = []
    for path in progress(args.images, desc="recognising", enabled=not args.quiet):
        image = load_image(path, as_gray=False, max_side=model.finder.max_side)
        named = model.identify(image)
        to_file = file_scale(path, image)  # decoded reduced: faces in the file's pixels
        results.append(
            {
                "image": path,
                "faces": [
                    {
                        **_face_json(face.scaled(to_file)),
                        "label": _plain(label),
                        "distance": _plain(distance),
                    }
                    for face, label, distance in named
                ],
            }
        )
    if not args.json:
        for result in results:
            cells = "; ".join(
                f"{face['label']} ({face['distance']:.4g}) at box "
                + " ".join(f"{v:.0f}" for v in face["box"])
                for face in result["faces"]
            )
            print(
                f"{result['image']}: {counted(len(result['faces']), 'face')}"
                + (cells and f": {cells}")
            )
    return results


def _image_paths(items) -> list:
    """The image files named on the command line, each folder among them replaced by the images
    it holds (and its sub-folders'), in natural order."""
    paths = []
    for item in items:
        if not Path(item).is_dir():
            paths.append(item)
            continue
        inside = [str(path) for _, path in image_entries(item)]
        if not inside:
            raise ValueError(
                f"{item}: a folder without images; name image files or folders of them"
            )
        paths += inside
    return paths


def _cmd_recognize(args) -> int:
    args.images = _image_paths(args.images)
    model = _load_model(args.model, Recognizer)
    if args.threshold is not None:
        model.threshold = args.threshold
    if model.finder is not None:
        results = _recognize_photos(model, args)
        if args.json:
            print(json.dumps(results, indent=2, allow_nan=False))
        return 0
    if args.face_threshold is not None:
        raise ValueError("--face-threshold is for models trained on photos (train --photos)")
    results = []
    for path in progress(args.images, desc="recognising", enabled=not args.quiet):
        image = load_image(path)
        _refuse_whole_photos(image, model, path)
        distances, labels = model.kneighbors(image, k=args.top)
        predicted = model.predict(image)[0]
        # P(same person) of the nearest match, where the method has one (bayesian)
        same_person = model.verify(image, labels[0, 0]).probability
        results.append(
            {
                "image": path,
                "label": _plain(predicted),
                "probability": same_person,
                "matches": [
                    {"label": _plain(label), "distance": float(distance)}
                    for label, distance in zip(labels[0], distances[0], strict=True)
                ],
            }
        )
    if args.json:
        print(json.dumps(results, indent=2, allow_nan=False))
    else:
        for result in results:
            matches = ", ".join(f"{m['label']} ({m['distance']:.4g})" for m in result["matches"])
            sure = "" if result["probability"] is None else f" (P same {result['probability']:.3f})"
            print(f"{result['image']}: {result['label']}{sure}    nearest: {matches}")
    return 0


def _refuse_whole_photos(image, model, path):
    """Refuse to squash a photo into the face crops a model was trained on (it would name a cup).

    A probe more than twice the training images' size on a side, or of another shape by more
    than a quarter, is not such a crop.
    """
    height, width = model.image_shape_
    ratio = (image.shape[0] / image.shape[1]) / (height / width)
    if image.shape[0] > 2 * height or image.shape[1] > 2 * width or not 0.75 <= ratio <= 4 / 3:
        raise ValueError(
            f"{path} is {image.shape[1]}x{image.shape[0]} pixels; this model was trained on "
            f"{width}x{height} face crops and would squash the whole picture into one: crop the "
            "face first, or train on photos ('eigenvision train FOLDER --photos'), which finds "
            "and names every face"
        )


def _plain(value):
    """A JSON-ready value: numpy scalars as Python ones, non-finite floats as None (null)."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _cmd_enroll(args) -> int:
    target = args.output or args.model
    with updating(target):  # a second enroll into the same model waits, then adds to this one
        model = _load_model(args.model, Recognizer)
        if model.finder is not None:
            model.verbose = not args.quiet
            images, labels, names = _load_photos(args.folder)
        else:
            faces = _load_images(args.folder)
            images, labels = faces.images, faces.labels
            for image, name in zip(images, faces.names, strict=True):
                _refuse_whole_photos(image, model, Path(args.folder) / name)
        before, gallery = len(model.classes_), len(model.gallery_labels_)
        with warnings.catch_warnings(record=True) as caught:  # heard whatever the filters say
            warnings.simplefilter("always", AlreadyEnrolledWarning)
            if model.finder is not None:
                on_error = "raise" if args.on_no_face == "stop" else _left_out
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
    return 0


def _cmd_evaluate(args) -> int:
    images = _load_images(args.source)
    n_train = {  # the training images of one fold
        "first_k_per_class": args.train_per_class * len(np.unique(images.labels)),
        "kfold": len(images) * (args.folds - 1) // args.folds,
        "loo": len(images) - 1,
    }[args.scheme]
    model = _recognizer(args, min(n_train, len(images)))
    rates = evaluate.cross_validate(
        model,
        images,
        scheme=args.scheme,
        n_splits=args.folds,
        k=args.train_per_class,
        seed=args.seed,
        progress=not args.quiet,
    )
    summary = {
        "scheme": args.scheme,
        "recognition_rate_mean": float(rates.mean()),
        "recognition_rate_std": float(rates.std()),
        "folds": rates.tolist(),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"{model.method}/{args.metric}, {model.n_components or 'all'} components, "
            f"{args.scheme}: "
            f"recognition rate {rates.mean():.3f}"
            + (
                f" +- {rates.std():.3f} over {len(rates)} folds"
                if len(rates) > 1
                else f" (one split: the first {args.train_per_class} images of each class train)"
            )
        )
    return 0


def _cmd_features(args) -> int:
    faces = datasets.load_imm()
    detector = FeatureDetector(n_components=args.n_components).fit(faces)
    save(detector, args.output)
    print(f"trained eye/nose/mouth eigenspaces on {len(faces)} IMM faces; saved {args.output}")
    return 0


def _cmd_locate(args) -> int:
    args.images = _image_paths(args.images)
    detector = _load_model(args.model, FeatureDetector)
    report = {}
    for path in progress(args.images, desc="locating", enabled=not args.quiet):
        found = detector.locate(load_image(path, as_gray=True), box=args.box)
        report[path] = {
            f: {
                key: _plain(float(value))
                for key, value in (
                    ("x", x),
                    ("y", y),
                    ("score", found.scores[f]),
                    ("confidence", found.confidence[f]),
                )
            }
            for f, (x, y) in found.positions.items()
        }
        if not args.json:
            cells = "  ".join(
                f"{f} ({x:.1f}, {y:.1f}) conf {found.confidence[f]:.2f}"
                for f, (x, y) in found.positions.items()
            )
            print(f"{path}: {cells}")
    if args.json:
        print(json.dumps(report, indent=2, allow_nan=False))
    return 0


def _cmd_detect(args) -> int:
    args.images = _image_paths(args.images)
    finder = default_finder(args.model)
    report = []
    for path in progress(args.images, desc="finding faces", enabled=not args.quiet):
        image = load_image(path, as_gray=False)
        found, likeliest = finder.find(image, threshold=args.threshold, return_likeliest=True)
        report.append({"image": path, "faces": [_face_json(face) for face in found]})
        if args.draw:
            target = Path(args.draw)
            if len(args.images) > 1:
                target = target.with_name(f"{Path(path).stem}-{target.name}")
            save_figure(plot_faces(image, found, title=Path(path).name), target)
        if not args.json:
            cells = "; ".join(
                f"box ({f.box[0]:.0f}, {f.box[1]:.0f}, {f.box[2]:.0f}, {f.box[3]:.0f}) eyes "
                f"({f.left_eye[0]:.0f}, {f.left_eye[1]:.0f}) ({f.right_eye[0]:.0f}, "
                f"{f.right_eye[1]:.0f}) p {f.confidence:.2f}"
                for f in found
            )
            threshold = finder.threshold if args.threshold is None else args.threshold
            hint = (
                ""
                if found or likeliest is None
                else (
                    f" (the likeliest has p {format_below(likeliest, threshold)} at most, below "
                    f"the threshold {threshold:.4g}: a lower --threshold may show it)"
                )
            )
            print(f"{path}: {counted(len(found), 'face')}" + (f": {cells}" if found else hint))
    if args.json:
        print(json.dumps(report, indent=2, allow_nan=False))
    return 0


def _face_json(face):
    point = lambda p: None if p is None else [_plain(float(v)) for v in p]  # noqa: E731
    return {
        "box": point(face.box),
        "left_eye": point(face.left_eye),
        "right_eye": point(face.right_eye),
        "nose": point(face.nose),
        "mouth": point(face.mouth),
        "score": _plain(face.score),
        "confidence": _plain(face.confidence),
        "angle": _plain(face.angle),
    }


def _identity_summary(model) -> str:
    """What an identity model's PLDA is: one model's rank, or each description's."""
    blocks = getattr(model.plda_, "models_", None)
    if blocks is None:
        return f"PLDA of rank {model.plda_.n_components_}"
    ranks = ", ".join(str(block.n_components_) for block in blocks.values())
    return f"{len(blocks)} PLDA models, one per description, of ranks {ranks}"


def _cmd_build_models(args) -> int:
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    if args.identity:
        recipe = "deep" if args.deep else "classical"
        model = build_identity_model(recipe=recipe, progress=not args.quiet)
        saved = out / SHIPPED_IDENTITY[recipe].name
        save(model, saved)
        print(
            f"trained the {recipe} identity model on LFW's View 1 training people ("
            f"{_identity_summary(model)}, threshold {model.threshold_:.3g}); saved {saved}"
        )
        return 0
    if args.eyes:
        saved = out / "face_finder.npz"
        finder = default_finder(saved if saved.exists() else None)
        finder.eye_regressor_ = fit_eye_regressor(progress=not args.quiet)
        save(finder, saved)
        print(f"fitted the eye refinement on HELEN's training faces; saved {saved}")
        return 0
    if args.appearance:
        saved = out / "face_finder.npz"
        finder = default_finder(saved if saved.exists() else None)
        fit_appearance_check(finder, progress=not args.quiet)
        save(finder, saved)
        print(
            f"fitted the appearance check on the training people's photos, threshold "
            f"{finder.threshold:g}; saved {saved}"
        )
        return 0
    finder = build_finder(n_backgrounds=args.backgrounds, progress=not args.quiet)
    save(finder, out / "face_finder.npz")
    print(
        f"trained the face finder on HELEN, IMM and LFW ({finder.n_negatives_} mined "
        "non-faces); "
        f"saved {out / 'face_finder.npz'}"
    )
    return 0


def _cmd_experiment(args) -> int:
    if args.name is None:
        raise ValueError(
            "name an experiment: eigenvision experiment NAME [options]; one of\n"
            + _experiment_list()
        )
    # The one import by name in the package: the experiment the user asked for.
    module = importlib.import_module(f".experiments.{args.name}", __package__)
    quiet = ["--quiet"] if args.quiet and "--quiet" not in args.arguments else []
    module.main([*args.arguments, *quiet])
    return 0


def _add_model_options(parser):
    methods = Recognizer._params["method"].choices
    parser.add_argument(
        "--method",
        choices=methods,
        help="the feature: whole-face eigenspace, Fisherfaces, Bayesian intra/extra-personal, "
        "eigenfeatures, both, or the shipped identity model (plda: trained on LFW, training "
        "only enrols) (default: plda for --photos, else eigenfaces)",
    )
    parser.add_argument("--detector", help="FeatureDetector model file (modular, combined)")
    parser.add_argument(
        "--face-box",
        type=finite,
        nargs=4,
        metavar=("X", "Y", "W", "H"),
        help="where the face lies in every image, for locating features",
    )
    parser.add_argument(
        "--n-components",
        type=count(1),
        help="eigenspace components (fisherfaces: discriminant directions; bayesian: "
        "intrapersonal components; default: 40, or all the training images give when they "
        "are fewer than 80)",
    )
    metrics = Recognizer._params["metric"].choices
    parser.add_argument(
        "--metric",
        choices=metrics,
        default="euclidean",
        help="distance between codes (default: %(default)s)",
    )
    parser.add_argument(
        "--mirror", action="store_true", help="also use mirrored images (twice the views)"
    )
    parser.add_argument(
        "--jitter",
        type=count(0),
        default=0,
        metavar="PIXELS",
        help="also use copies shifted by this many pixels (8 per image; try 2 with --mirror)",
    )


def _add_no_face_option(parser):
    parser.add_argument(
        "--on-no-face",
        choices=["skip", "stop"],
        default="skip",
        help="models on photos: a photo without one face is left out and named "
        "(skip), or stops the command (default: %(default)s)",
    )


def _add_face_threshold(parser):
    parser.add_argument(
        "--face-threshold",
        type=probability,
        metavar="P",
        help="models on photos: smallest probability of a face "
        "(default the finder's calibrated one)",
    )


_SOURCES = (
    "a folder with one sub-folder per label, or a dataset name ('eigenvision info' lists them)"
)


def add_options(name, parser):
    """Add command ``name``'s options to its ``parser``.

    Parameters
    ----------
    name : str
        A key of :data:`RUNNERS`.
    parser : argparse.ArgumentParser

    Returns
    -------
    None
    """
    options, run = RUNNERS[name]
    options(parser)
    parser.set_defaults(run=run)


def _options_info(parser):
    """The options of ``eigenvision info``."""
    pass


def _options_train(parser):
    """The options of ``eigenvision train``."""
    parser.add_argument("source", help=_SOURCES)
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
    _add_face_threshold(parser)
    _add_no_face_option(parser)
    _add_model_options(parser)


def _options_recognize(parser):
    """The options of ``eigenvision recognize``."""
    parser.add_argument("model", help="model file from 'eigenvision train'")
    parser.add_argument(
        "images",
        nargs="+",
        help="image files or folders of them (photos, every face named, for --photos models)",
    )
    parser.add_argument(
        "--top", type=count(1), default=5, help="nearest matches to list (default: %(default)s)"
    )
    parser.add_argument("--threshold", type=finite, help="reject matches farther than this")
    parser.add_argument("--json", action="store_true", help="print JSON")
    _add_face_threshold(parser)


def _options_enroll(parser):
    """The options of ``eigenvision enroll``."""
    parser.add_argument("model", help="model file from 'eigenvision train' (updated in place)")
    parser.add_argument("folder", help="one sub-folder per label (photos for --photos models)")
    parser.add_argument("-o", "--output", help="write here instead of updating the model")
    _add_no_face_option(parser)


def _options_evaluate(parser):
    """The options of ``eigenvision evaluate``."""
    parser.add_argument("source", help=_SOURCES)
    parser.add_argument(
        "--scheme",
        choices=["kfold", "loo", "first_k_per_class"],
        default="first_k_per_class",
        help="stratified k folds, leave one out, or the first images of each class train and "
        "the rest test (default: %(default)s)",
    )
    parser.add_argument(
        "--folds", type=count(2), default=5, help="with kfold: folds (default: %(default)s)"
    )
    parser.add_argument(
        "--train-per-class",
        type=count(1),
        default=5,
        help="with first_k_per_class: training images per class (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="with kfold: the shuffle's seed (default: %(default)s)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    _add_model_options(parser)


def _options_features(parser):
    """The options of ``eigenvision features``."""
    parser.add_argument("-o", "--output", required=True, help="model file to write (.npz)")
    parser.add_argument(
        "--n-components",
        type=count(0),
        default=10,
        help="components of each feature's eigenspace (default: %(default)s)",
    )


def _options_locate(parser):
    """The options of ``eigenvision locate``."""
    parser.add_argument("model", help="model file from 'eigenvision features'")
    parser.add_argument(
        "images", nargs="+", help="face images or folders of them (brows to chin, or use --box)"
    )
    parser.add_argument(
        "--box",
        type=finite,
        nargs=4,
        metavar=("X", "Y", "W", "H"),
        help="where the face lies in every image (default: the whole image)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def _options_detect(parser):
    """The options of ``eigenvision detect``."""
    parser.add_argument("images", nargs="+", help="photo files or folders of them")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--draw", metavar="OUT.png", help="draw the faces found into this file")
    parser.add_argument("--threshold", type=probability, help="smallest probability of a face")
    parser.add_argument("--model", help="a face finder file (default: the one in data/)")


def _options_build_models(parser):
    """The options of ``eigenvision build-models``."""
    parser.add_argument(
        "-o", "--output", default=str(DEFAULT_FINDER.parent), help="folder (default: %(default)s)"
    )
    parser.add_argument(
        "--backgrounds",
        type=count(1),
        default=250,
        help="HELEN photos mined for non-faces (default 250)",
    )
    parser.add_argument(
        "--identity",
        action="store_true",
        help="build data/identity_model.npz from LFW (lfw_train/) instead of the finder",
    )
    parser.add_argument(
        "--deep",
        action="store_true",
        help="with --identity: build the learned model, data/identity_deep.npz (dlib's "
        "embedding under PLDA; needs eigenvision[deep])",
    )
    parser.add_argument(
        "--eyes",
        action="store_true",
        help="refit only the finder's eye refinement (HELEN's training faces) and save the finder",
    )
    parser.add_argument(
        "--appearance",
        action="store_true",
        help="refit only the finder's appearance check and threshold (HELEN and LFW training "
        "photos) and save the finder",
    )


def _options_compare(parser):
    """The options of ``eigenvision compare``."""
    parser.add_argument("photo_a", help="a photo (the most confident face is compared)")
    parser.add_argument("photo_b", help="another photo")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--model",
        help="deep (dlib's learned embedding; needs eigenvision[deep]), classical (LBP, HOG, "
        "DAISY, Fisher vectors), or an identity model file (default: deep when installed, "
        "else classical)",
    )
    parser.add_argument("--finder", help="a face finder file (default: the one in data/)")


def _cmd_compare(args) -> int:
    result = compare_faces(
        args.photo_a, args.photo_b, finder=default_finder(args.finder), model=args.model
    )
    if args.json:
        photos = []
        for face, count in zip(result.faces, result.face_counts, strict=True):
            photos.append({"box": [_plain(v) for v in face.box], "faces_in_photo": count})
        print(
            json.dumps(
                {
                    "same_person": bool(result.accepted),
                    "probability": _plain(result.probability),
                    "score": _plain(-result.distance),
                    "threshold": _plain(-result.threshold),
                    "model": result.model,
                    "photos": photos,
                }
            )
        )
    else:
        verdict = "the same person" if result.accepted else "two different people"
        print(
            f"{args.photo_a} and {args.photo_b}: {verdict} (P(same) {result.probability:.3f}, "
            f"score {-result.distance:.3g}, threshold {-result.threshold:.3g}; "
            f"{result.model} identity model)"
        )
        for path, count in zip((args.photo_a, args.photo_b), result.face_counts, strict=True):
            if count > 1:
                print(f"{path} shows {count} faces: the most confident was compared")
    return 0


def _options_cluster(parser):
    """The options of ``eigenvision cluster``."""
    parser.add_argument("folder", help="photos (and sub-folders of photos), any faces each")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FOLDER",
        help="a new folder: one sub-folder of face thumbnails per person, and groups.json",
    )
    parser.add_argument("--json", action="store_true", help="print the groups as JSON")
    parser.add_argument(
        "--people", type=count(1), metavar="N", help="the number of people, when known"
    )
    parser.add_argument(
        "--threshold",
        type=probability,
        help="where merging stops: the probability that two groups are one person (default "
        f"{LEARNT_CUT} learnt from the photos, {CALIBRATED_CUT} with --no-adapt). Higher: purer, "
        "smaller groups",
    )
    parser.add_argument(
        "--no-adapt",
        action="store_true",
        help="judge pairs by the model's calibrated probability alone, not by the two kinds "
        "of pairs the photos show",
    )
    parser.add_argument(
        "--model",
        help="deep (dlib's learned embedding; needs eigenvision[deep]), classical (LBP, HOG, "
        "DAISY, Fisher vectors), or an identity model file (default: deep when installed, "
        "else classical)",
    )
    parser.add_argument("--finder", help="a face finder file (default: the one in data/)")
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="find the faces on this Dask cluster (tcp://host:8786; the workers read the "
        "photos' paths), group them here",
    )
    _add_face_threshold(parser)


def _cmd_cluster(args) -> int:
    if args.output and Path(args.output).exists():
        raise ValueError(f"{args.output} exists; name a new folder for the groups")
    paths = [path for _, path in image_entries(Path(args.folder))]
    if not paths:
        raise ValueError(f"{args.folder} holds no photos")
    finder = default_finder(args.finder)
    if args.face_threshold is not None:
        finder.threshold = args.face_threshold
    model_name = identity_model_name(args.model)
    options = dict(
        finder=finder,
        model=default_identity_model(args.model),
        n_people=args.people,
        threshold=args.threshold,
        adapt=not args.no_adapt,
    )
    given = [path.resolve() for path in paths] if args.scheduler else paths
    unreadable = []  # told by cluster_faces, whatever the user's warning filters show
    options["on_error"] = lambda index, _: unreadable.append(index)
    if args.scheduler:
        from dask.distributed import Client  # the dask extra, only for this option

        with Client(args.scheduler):
            groups = cluster_faces(given, backend="dask", **options)
    else:
        groups = cluster_faces(given, progress=not args.quiet, **options)
    report = [
        {
            "person": number,
            "model": model_name,
            "faces": [{"photo": str(paths[i]), **_face_json(face)} for i, face in group],
        }
        for number, group in enumerate(groups, start=1)
    ]
    if args.output:
        _write_groups(Path(args.output), groups, paths, report, max_side=finder.max_side)
    if args.json:
        print(json.dumps(report, indent=2, allow_nan=False))
    else:
        print(
            grouping_summary(groups, [path.name for path in paths], unreadable=unreadable)
            + (f"; written to {args.output}" if args.output else "")
        )
        print(f"  grouped by the {model_name} identity model")
        for entry in report[:20]:
            photos = sorted({Path(face["photo"]).name for face in entry["faces"]})
            shown = ", ".join(photos[:6]) + (" ..." if len(photos) > 6 else "")
            count = len(entry["faces"])
            print(f"  person {entry['person']}: {count} face{'s' * (count > 1)} ({shown})")
        if len(report) > 20:
            print(f"  ... {len(report) - 20} more (--json or -o lists all)")
    return 0


def _write_groups(output, groups, paths, report, *, max_side):
    """One folder of face thumbnails per person and groups.json, made whole then renamed."""
    output.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    try:
        width = len(str(len(groups)))
        folders = [scratch / f"person_{n:0{width}d}" for n in range(1, len(groups) + 1)]
        by_photo = {}  # each photo read once, however many faces it shows
        for folder, group in zip(folders, groups, strict=True):
            folder.mkdir()
            for i, face in group:
                by_photo.setdefault(i, []).append((folder, face))
        for i, faces in by_photo.items():
            image = load_image(paths[i], as_gray=False, max_side=max_side)
            with Image.open(paths[i]) as opened:  # the faces are in the file's pixels
                to_image = max(image.shape[:2]) / max(opened.size)
            for folder, face in faces:
                name = paths[i].stem
                while (folder / f"{name}.png").exists():  # two faces of one photo, one person
                    name += "+"
                crop = face_thumbnail(image, face.scaled(to_image))
                crop = np.repeat(crop[..., None], 3, axis=2) if crop.ndim == 2 else crop
                Image.fromarray((crop * 255).round().astype(np.uint8)).save(folder / f"{name}.png")
        (scratch / "groups.json").write_text(json.dumps(report, indent=2, allow_nan=False))
        os.rename(scratch, output)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _options_experiment(parser):
    """The options of ``eigenvision experiment``."""
    parser.add_argument(
        "name", nargs="?", choices=EXPERIMENTS, metavar="NAME", help="the experiment (below)"
    )
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the experiment's options")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "experiments (eigenvision experiment NAME --help for its options):\n" + (
        _experiment_list()
    )


def _experiment_list():
    """One line per experiment: its name and what it shows."""

    return "\n".join(
        f"  {name:24s}" + textwrap.shorten(summary, 74, placeholder=" ...")
        for name, summary in summaries().items()
    )


#: Each command of :data:`eigenvision.cli.COMMANDS`: its options and what it runs.
RUNNERS = {
    "info": (_options_info, _cmd_info),
    "train": (_options_train, _cmd_train),
    "recognize": (_options_recognize, _cmd_recognize),
    "enroll": (_options_enroll, _cmd_enroll),
    "evaluate": (_options_evaluate, _cmd_evaluate),
    "features": (_options_features, _cmd_features),
    "locate": (_options_locate, _cmd_locate),
    "detect": (_options_detect, _cmd_detect),
    "build-models": (_options_build_models, _cmd_build_models),
    "compare": (_options_compare, _cmd_compare),
    "cluster": (_options_cluster, _cmd_cluster),
    "fetch": (_options_fetch, _cmd_fetch),
    "experiment": (_options_experiment, _cmd_experiment),
}
