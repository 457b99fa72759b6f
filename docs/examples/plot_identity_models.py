"""
Same person? The two shipped identity models
============================================

eigenvision ships two identity models, both trained on LFW's news photos: the
``"classical"`` one describes a face by LBP, HOG, DAISY and Fisher vectors, the
``"deep"`` one by dlib's learned embedding (``pip install "eigenvision[deep]"``);
both compare the descriptions with PLDA and state ``P(same person)``.

Here both look at studio portraits of four men neither saw in training (IMM,
three photos each) and state P(same person) for every pair. The faces are
found and cut as :func:`eigenvision.compare_faces` cuts them. On photos taken
in one studio the classical model finds everyone alike; the learned
description keeps the four men apart.
"""

import matplotlib.pyplot as plt
import numpy as np

import eigenvision as ev
from eigenvision.faces.compare import model_crop
from eigenvision.identity import deep_available

imm = ev.datasets.fetch_imm(as_gray=False, progress=False)  # $EIGENVISION_DATA, else downloaded
chosen = np.concatenate(
    [np.flatnonzero(imm.labels == person)[:3] for person in "01 02 03 04".split()]
)
photos, people = imm.images[chosen], imm.labels[chosen]
finder = ev.default_finder()
faces = [finder.find(photo, max_faces=1)[0] for photo in photos]

names = ["classical", "deep"] if deep_available() else ["classical"]
fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4), squeeze=False)
for ax, name in zip(axes[0], names, strict=True):
    model = ev.default_identity_model(name)
    codes = model.encode(
        np.stack([model_crop(p, f, model) for p, f in zip(photos, faces, strict=True)])
    )
    probability = model.probability(model.pairwise_log_odds(codes, codes))
    same = people[:, None] == people[None, :]
    off = ~np.eye(len(people), dtype=bool)
    print(
        f"{name}: mean P(same) {probability[same & off].mean():.2f} for one man's pairs, "
        f"{probability[~same].mean():.2f} for two men's"
    )
    image = ax.imshow(probability, vmin=0, vmax=1, cmap="viridis")
    ax.set_title(f"{name}: P(same person)")
    ax.set_xticks(range(len(people)), people, fontsize=7)
    ax.set_yticks(range(len(people)), people, fontsize=7)
fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8)
plt.show()
