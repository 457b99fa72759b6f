"""Figures for eigenspaces and their evaluation (matplotlib, no global state).

Every function returns a :class:`matplotlib.figure.Figure` built without
``pyplot`` (safe in servers and threads); :func:`save_figure` writes one
atomically. Images are shown in grey with their own contrast unless said
otherwise; eigen-images use a diverging map centred on zero.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ._base import check_fitted
from ._files import atomic_write

__all__ = [
    "image_grid",
    "faces",
    "term_correlations",
    "eigenimages",
    "reconstructions",
    "mode_grid",
    "spectrum",
    "roc",
    "rate_curves",
    "heatmap",
    "confusion",
    "save_figure",
    "sample_data_folder",
]

_CELL = 1.3  # inches per image cell


def sample_data_folder() -> Path:
    """Matplotlib's own sample data (pictures, an MRI slice, terrain), installed with it.

    Here because this module is the one that imports matplotlib.

    Returns
    -------
    Path
    """
    import matplotlib

    return Path(matplotlib.get_data_path()) / "sample_data"


def save_figure(figure: Figure, path, *, dpi: int = 110) -> Path:
    """Write ``figure`` to ``path`` (format from the suffix) atomically.

    Parameters
    ----------
    figure : Figure
    path : path-like
    dpi : int, default 110

    Returns
    -------
    Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(
        path,
        lambda temporary: figure.savefig(temporary, dpi=dpi, bbox_inches="tight"),
        suffix=path.suffix,
    )


def image_grid(
    images, *, titles=None, ncols=8, cmap="gray", symmetric=False, shared=False, suptitle=None
):
    """Images in a grid, each with its own contrast.

    Parameters
    ----------
    images : sequence of (h, w) arrays
    titles : sequence of str, optional
    ncols : int
    cmap : str
    symmetric : bool
        Centre the colour map on zero (for eigen-images and differences).
    shared : bool
        One grey scale for all images (to compare them), not one each.
    suptitle : str, optional

    Returns
    -------
    Figure
    """
    images = [np.asarray(image) for image in images]
    if not images:
        raise ValueError("no images to show")
    flat = [i for i, image in enumerate(images) if not (image.ndim == 2 or image.shape[2:] == (3,))]
    if flat:
        raise ValueError(
            f"image {flat[0]} has shape {images[flat[0]].shape}; image_grid shows (H, W) or "
            "(H, W, 3) images: reshape flattened rows first, e.g. rows.reshape(-1, H, W)"
        )
    ncols = max(1, min(ncols, len(images)))
    nrows = -(-len(images) // ncols)
    aspect = images[0].shape[0] / images[0].shape[1]
    figure = Figure(figsize=(_CELL * ncols, _CELL * nrows * aspect + (0.5 if suptitle else 0.2)))
    axes = figure.subplots(nrows, ncols, squeeze=False)
    for index, ax in enumerate(axes.flat):
        ax.set_axis_off()
        if index >= len(images):
            continue
        image = images[index]
        if symmetric:
            limit = float(np.max(np.abs(image))) or 1.0
            ax.imshow(image, cmap="RdBu_r", vmin=-limit, vmax=limit)
        elif shared:
            low = min(float(np.min(i)) for i in images)
            high = max(float(np.max(i)) for i in images)
            ax.imshow(image, cmap=cmap, vmin=low, vmax=high)
        else:
            ax.imshow(image, cmap=cmap)
        if titles is not None:
            ax.set_title(str(titles[index]), fontsize=8)
    if suptitle:
        figure.suptitle(suptitle)
    return figure


def eigenimages(space, *, n=15, ncols=8):
    """The mean image and the first ``n`` eigen-images of a fitted eigenspace.

    Parameters
    ----------
    space : Eigenspace
        Fitted on ``(n, h, w)`` images.
    n : int, default 15
    ncols : int, default 8

    Returns
    -------
    Figure
    """
    check_fitted(space)
    if getattr(space, "image_shape_", None) is None:
        raise ValueError("the eigenspace has no image shape; fit it on an (n, h, w) stack")
    n = min(n, space.n_components_)
    images = [space.mean_image_, *space.eigenimages_[:n]]
    ratios = getattr(space, "explained_variance_ratio_", None)
    titles = ["mean"] + [
        f"u{i + 1}" + (f" ({100 * ratios[i]:.1f}%)" if ratios is not None else "") for i in range(n)
    ]
    figure = image_grid(images, titles=titles, ncols=ncols)
    for ax in figure.axes[1 : n + 1]:  # eigen-images have a sign: diverging map
        image = ax.images[0]
        limit = float(np.max(np.abs(image.get_array()))) or 1.0
        image.set_cmap("RdBu_r")
        image.set_clim(-limit, limit)
    return figure


def reconstructions(space, images, ranks):
    """Rows of images reconstructed from their first r components, for each r in ``ranks``.

    Parameters
    ----------
    space : Eigenspace
        Fitted on ``(n, h, w)`` images.
    images : (m, h, w) ndarray
    ranks : sequence of int
        Each at most ``space.n_components_``.

    Returns
    -------
    Figure
    """
    check_fitted(space)
    images = np.asarray(images)
    h, w = space.image_shape_
    codes = space.transform(images.reshape(len(images), -1))
    cells, titles = [], []
    for image, code in zip(images, codes, strict=True):
        cells.append(image)
        titles.append("original")
        for r in ranks:
            truncated = np.zeros_like(code)
            truncated[:r] = code[:r]
            cells.append(space.inverse_transform(truncated[None])[0].reshape(h, w))
            titles.append(f"r = {r}")
    return image_grid(cells, titles=titles, ncols=len(ranks) + 1)


def mode_grid(space, *, components=(0, 1), steps=(-2, -1, 0, 1, 2)):
    """Grid of ``m + z_a sqrt(lambda_a) u_a + z_b sqrt(lambda_b) u_b`` over ``steps``.

    Rows vary the first component, columns the second; ``z`` is in standard
    deviations of the training data along each eigenvector.

    Parameters
    ----------
    space : Eigenspace
        Fitted on ``(n, h, w)`` images.
    components : (int, int), default (0, 1)
    steps : sequence of float
        Positions along each component, in standard deviations.

    Returns
    -------
    Figure
    """
    check_fitted(space)
    a, b = components
    h, w = space.image_shape_
    scale = np.sqrt(space.explained_variance_)
    cells, titles = [], []
    for za in steps:
        for zb in steps:
            code = np.zeros(space.n_components_)
            code[a], code[b] = za * scale[a], zb * scale[b]
            cells.append(space.inverse_transform(code[None])[0].reshape(h, w))
            titles.append(f"z{a + 1}={za:+g}, z{b + 1}={zb:+g}")
    figure = image_grid(cells, titles=titles, ncols=len(steps), shared=True)
    for ax in figure.axes:
        ax.title.set_fontsize(6)
    return figure


def spectrum(
    values, *, reference=None, rank=None, labels=("data", "permuted"), log=True, title=None
):
    """Singular values (or eigenvalues) by index, with an optional null band and chosen rank.

    Parameters
    ----------
    values : (m,) array-like
    reference : (p, m) array-like, optional
        The same spectrum of ``p`` null copies (e.g. column-permuted data),
        shown as their median and min-max band.
    rank : int, optional
        Marked with a vertical line.

    Returns
    -------
    Figure
    """
    values = np.asarray(values, dtype=float)
    index = np.arange(1, len(values) + 1)
    figure = Figure(figsize=(6, 4))
    ax = figure.subplots()
    ax.plot(index, values, "o-", ms=3, label=labels[0])
    if reference is not None:
        reference = np.atleast_2d(np.asarray(reference, dtype=float))[:, : len(values)]
        x = index[: reference.shape[1]]
        ax.fill_between(x, reference.min(0), reference.max(0), alpha=0.3, color="C1")
        ax.plot(x, np.median(reference, axis=0), "-", color="C1", label=labels[1])
    if rank is not None:
        ax.axvline(rank + 0.5, color="k", ls="--", lw=1, label=f"selected rank {rank}")
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("component index")
    ax.set_ylabel("singular value")
    ax.legend()
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    return figure


def roc(
    curves,
    *,
    xlabel="false-positive rate",
    ylabel="true-positive rate",
    title=None,
    marks=None,
    xlim=None,
):
    """ROC-style curves.

    Parameters
    ----------
    curves : dict of str to (x, y)
        Legend label to curve points.
    marks : dict of str to (x, y), optional
        Single points to mark (e.g. a published operating point).
    xlim : (float, float), optional

    Returns
    -------
    Figure
    """
    figure = Figure(figsize=(5.5, 4.5))
    ax = figure.subplots()
    styles = ("-", "--", "-.", ":")
    for index, (label, (x, y)) in enumerate(curves.items()):  # dashes keep overlaps visible
        ax.step(x, y, where="post", label=label, lw=2, ls=styles[index % len(styles)])
    markers = "*sD^vPXho<>p"
    for index, (label, (x, y)) in enumerate((marks or {}).items()):  # every mark shown
        ax.plot([x], [y], markers[index % len(markers)], color="k", ms=9, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xlim(*(xlim or (-0.01, 1)))
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title)
    return figure


def rate_curves(
    x,
    curves,
    *,
    references=None,
    xlabel="number of components r",
    ylabel="recognition rate",
    title=None,
    log_x=False,
):
    """Rates against a parameter, with horizontal reference lines.

    Parameters
    ----------
    x : (m,) array-like
    curves : dict of str to (m,) array-like
    references : dict of str to float, optional

    Returns
    -------
    Figure
    """
    figure = Figure(figsize=(6, 4.2))
    ax = figure.subplots()
    for index, (label, y) in enumerate(curves.items()):
        ax.plot(x, y, marker="os^vD"[index % 5], ms=3, label=label)
    for index, (label, value) in enumerate((references or {}).items()):
        ax.axhline(value, ls="--", lw=1, color=f"C{len(curves) + index}", label=label)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return figure


def heatmap(image, values, *, detections=(), points=None, title=None, value_label="DFFS"):
    """An image beside a score map (``mode="same"``), with detections and points drawn on both.

    Parameters
    ----------
    image : (H, W) ndarray
    values : (H, W) ndarray
        E.g. ``dffs_map(..., mode="same")``; NaN where no window fits.
    detections : sequence of Detection
    points : dict of str to (x, y), optional

    Returns
    -------
    Figure
    """
    figure = Figure(figsize=(10, 4.5))
    left, right = figure.subplots(1, 2)
    left.imshow(image, cmap="gray")
    shown = right.imshow(values, cmap="magma_r")
    figure.colorbar(shown, ax=right, label=value_label, fraction=0.046)
    for ax in (left, right):
        ax.set_axis_off()
        for rank, d in enumerate(detections):
            colour = "lime" if rank == 0 else "yellow"
            ax.add_patch(Rectangle((d.x, d.y), d.width, d.height, fill=False, ec=colour, lw=1.5))
        for name, (x, y) in (points or {}).items():
            ax.plot([x], [y], "c+", ms=10, mew=2)
            ax.annotate(
                name, (x, y), color="cyan", fontsize=7, xytext=(4, 4), textcoords="offset points"
            )
    if title:
        figure.suptitle(title)
    return figure


def confusion(matrix, labels, *, title=None):
    """A confusion matrix (rows: true class, columns: predicted), counts in the cells.

    Parameters
    ----------
    matrix : (c, c) array-like
    labels : sequence of str
    title : str, optional

    Returns
    -------
    Figure
    """
    matrix = np.asarray(matrix)
    size = 0.45 * len(labels) + 2
    figure = Figure(figsize=(size, size))
    ax = figure.subplots()
    ax.imshow(matrix, cmap="Blues")
    names = [str(x) for x in labels]
    long = max(map(len, names), default=0) > 4  # names, not digits: turned so they do not overlap
    ax.set_xticks(
        range(len(names)), names, rotation=45 if long else 0, ha="right" if long else "center"
    )
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    threshold = matrix.max() / 2
    for (i, j), count in np.ndenumerate(matrix):
        if count:
            ax.text(
                j,
                i,
                str(count),
                ha="center",
                va="center",
                fontsize=7,
                color="white" if count > threshold else "black",
            )
    if title:
        ax.set_title(title)
    return figure


def term_correlations(singular_values, before, after, terms, rank):
    """Latent semantic analysis: the spectrum and term correlations before and after truncation.

    Parameters
    ----------
    singular_values : (m,) ndarray
        Of the term x document matrix.
    before, after : (t, t) ndarray
        Correlations between the terms' rows, raw and at ``rank``.
    terms : list of str
    rank : int

    Returns
    -------
    Figure
    """
    figure = Figure(figsize=(13, 4.2))
    left, middle, right = figure.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1.4, 1.4]})
    left.bar(np.arange(1, len(singular_values) + 1), singular_values)
    left.set_xlabel("index")
    left.set_ylabel("singular value")
    left.set_title("spectrum of the term x title matrix")
    for ax, matrix, title in (
        (middle, before, "term correlations, raw counts"),
        (right, after, f"term correlations, rank {rank}"),
    ):
        shown = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_xticks(range(len(terms)), terms, rotation=90, fontsize=7)
        ax.set_yticks(range(len(terms)), terms, fontsize=7)
        ax.set_title(title)
    figure.colorbar(shown, ax=right, fraction=0.046)
    return figure


def faces(image, found, *, title=None, names=None):
    """A photo with every face found: its box along the eye line, eyes, nose, mouth, name.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) ndarray
    found : sequence of Face
        From :func:`~eigenvision.find_faces`.
    title : str, optional
    names : sequence of str, optional
        A label per face (e.g. who it is); default its confidence.

    Returns
    -------
    Figure
    """
    height, width = np.shape(image)[:2]
    figure = Figure(figsize=(8, 8 * height / max(width, 1)))
    ax = figure.add_axes([0, 0, 1, 1])
    ax.imshow(image, cmap="gray" if np.ndim(image) == 2 else None)
    for index, face in enumerate(found):
        x, y, w, h = face.box
        angle = face.angle
        ax.add_patch(
            Rectangle(
                (x, y),
                w,
                h,
                fill=False,
                color="lime",
                linewidth=2,
                angle=angle,
                rotation_point="center",
            )
        )
        points = [p for p in (face.left_eye, face.right_eye, face.nose, face.mouth) if p]
        ax.plot(*np.transpose(points), "o", color="yellow", markersize=4)
        label = names[index] if names is not None else f"{face.confidence:.2f}"
        ax.text(x, y - 4, label, color="lime", fontsize=10, weight="bold")
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    return figure


def reliability(curves, *, title=None):
    """Reliability diagram: stated probability against observed frequency, per bin.

    Parameters
    ----------
    curves : dict of str to (stated, observed, counts)
        Legend label to :func:`~eigenvision.evaluate.calibration`'s bins (NaN bins skipped).
    title : str, optional

    Returns
    -------
    Figure
    """
    figure = Figure(figsize=(5.5, 4.5))
    ax = figure.subplots()
    ax.plot([0, 1], [0, 1], color="0.6", lw=1, label="calibrated")
    markers = "osD^vP"
    for index, (label, (stated, observed, counts)) in enumerate(curves.items()):
        kept = np.asarray(counts) > 0
        ax.plot(
            np.asarray(stated)[kept],
            np.asarray(observed)[kept],
            marker=markers[index % len(markers)],
            lw=1.5,
            label=label,
        )
    ax.set_xlabel("stated P(same person)")
    ax.set_ylabel("observed share of same-person pairs")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=7)
    if title:
        ax.set_title(title)
    return figure
