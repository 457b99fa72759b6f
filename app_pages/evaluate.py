"""Evaluate: recognition rate against the number of components, and a DFFS ROC."""

from __future__ import annotations

import numpy as np
import streamlit as st

import eigenvision as ev
from app_pages.shared.data import labelled_halves
from eigenvision import plot


def evaluate_page() -> None:
    st.header("Evaluate")
    chosen = labelled_halves("evaluate", "Evaluation")
    if chosen is None:
        return
    images, train, test = chosen
    largest = int(min(60, len(train) - 1, np.prod(images.image_shape) - 1))
    ranks = sorted({r for r in (1, 2, 5, 10, 20, 40, 60) if r <= largest})
    if not st.button("Run the studies", type="primary"):
        st.caption(
            f"Recognition rate against r for r in {ranks}, and the ROC of 'is it class "
            f"{train.classes[0]}?' by DFFS, on {len(train)} training / {len(test)} test images."
        )
        return
    progress = st.progress(0.0, text="recognition rate ...")
    smallest_class = int(np.min(np.unique(train.labels, return_counts=True)[1]))
    nearest, per_class = [], []
    for i, r in enumerate(ranks):
        recognizer = ev.Recognizer(r).fit(train)
        nearest.append(ev.evaluate.recognition_rate(test.labels, recognizer.predict(test)))
        if smallest_class >= 2:  # a per-class eigenspace needs two images of every class
            predicted, _ = ev.nearest_subspace(train, test, r)
            per_class.append(ev.evaluate.recognition_rate(test.labels, predicted))
        progress.progress((i + 1) / (len(ranks) + 1), text=f"recognition rate, r = {r}")
    curves = {"1-NN in component space": nearest}
    if per_class:
        curves["per-class eigenspace"] = per_class
    else:
        st.info("The per-class eigenspace needs two training images of every class; not shown.")
    left, right = st.columns(2)
    left.pyplot(plot.rate_curves(ranks, curves))
    target = train.classes[0]
    members = train[train.labels == target]
    progress.progress(1.0, text="done")
    if len(members) < 2:
        st.info(f"The ROC needs two training images of {target}; not shown.")
        return
    space = ev.Eigenspace(min(10, len(members) - 1)).fit(members)
    flat = test.images.reshape(len(test), -1)
    fpr, tpr, _ = ev.evaluate.roc_curve(test.labels == target, -space.dffs(flat))
    area = ev.evaluate.auc(fpr, tpr)
    right.pyplot(plot.roc({f"DFFS (AUC {area:.3f})": (fpr, tpr)}, title=f"is it {target}?"))


evaluate_page()
