"""``eigenvision build-models``: its options and its work."""

from __future__ import annotations

from pathlib import Path

from .._argtypes import count
from ..faces.compare import (
    SHIPPED_IDENTITY,
)
from ..faces.photos import DEFAULT_FINDER, default_finder
from ..faces.recipes import (
    build_finder,
    build_identity_model,
    fit_appearance_check,
    fit_eye_regressor,
)
from ..persist import save


def options(parser):
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


def run(args) -> int:
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
            f"{finder.threshold:g} (identity work from {finder.identity_threshold:g}); "
            f"saved {saved}"
        )
        return 0
    finder = build_finder(n_backgrounds=args.backgrounds, progress=not args.quiet)
    save(finder, out / "face_finder.npz")
    print(
        f"trained the face finder on HELEN, IMM and LFW ({finder.decision.n_negatives_} mined "
        "non-faces); "
        f"saved {out / 'face_finder.npz'}"
    )
    return 0


def _identity_summary(model) -> str:
    """What an identity model's PLDA is: one model's rank, or each description's."""
    blocks = getattr(model.plda_, "models_", None)
    if blocks is None:
        return f"PLDA of rank {model.plda_.n_components_}"
    ranks = ", ".join(str(block.n_components_) for block in blocks.values())
    return f"{len(blocks)} PLDA models, one per description, of ranks {ranks}"
