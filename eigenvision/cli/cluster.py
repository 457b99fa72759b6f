"""``eigenvision cluster``: its options and its work."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

from .._argtypes import count, probability
from ..faces.compare import (
    default_identity_model,
    identity_model_name,
)
from ..faces.crops import face_thumbnail, identity_threshold
from ..faces.groups import CALIBRATED_CUT, LEARNT_CUT, cluster_faces, grouping_summary
from ..faces.photos import (
    default_finder,
)
from ..io import image_entries, load_image
from ._common import (
    add_face_threshold,
    add_identity_options,
    face_json,
    face_threshold_note,
    set_face_threshold,
)


def options(parser):
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
    add_identity_options(parser)
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="find the faces on this Dask cluster (tcp://host:8786; the workers read the "
        "photos' paths), group them here",
    )
    add_face_threshold(parser)


def run(args) -> int:
    if args.output and Path(args.output).exists():
        raise ValueError(f"{args.output} exists; name a new folder for the groups")
    paths = [path for _, path in image_entries(Path(args.folder))]
    if not paths:
        raise ValueError(f"{args.folder} holds no photos")
    finder = default_finder(args.finder)
    set_face_threshold(finder, args)
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
            "faces": [{"photo": str(paths[i]), **face_json(face)} for i, face in group],
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
        print(
            f"  grouped by the {model_name} identity model; "
            + face_threshold_note(identity_threshold(finder))
        )
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
