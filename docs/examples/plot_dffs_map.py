"""
A DFFS map: the distance from face space of every window
========================================================

:func:`eigenvision.dffs_map` computes the distance from feature space of
every window of an image at once, by FFT (equal to a brute-force sliding
window). Here an eigenspace of scikit-image's LFW faces scores every window
of a photo. The map's minimum is not the face: a space general enough for
every face explains smooth clutter as well, which is why the photo pipeline
(:mod:`eigenvision.faces`) follows the DFFS candidates with a face/non-face
decision (Sung & Poggio 1998).
"""

import matplotlib.pyplot as plt
import numpy as np
from skimage import data

import eigenvision as ev

faces = ev.datasets.load_lfw_subset()[:100]
space = ev.Eigenspace(n_components=10).fit(ev.normalize_images(faces.images, standardize="norm"))

photo = ev.transform.resize(ev.normalize.to_gray(data.astronaut()), (128, 128))
heat = ev.dffs_map(photo, space, normalize="window", mode="same")
row, col = np.unravel_index(np.nanargmin(heat), heat.shape)
print(f"smallest DFFS at (x, y) = ({col}, {row})")
x, y, w, h = (v * 128 / 512 for v in ev.find_faces(data.astronaut())[0].box)

fig, (left, right) = plt.subplots(1, 2, figsize=(8, 4))
left.imshow(photo, cmap="gray")
left.plot(col, row, "r+", ms=14, mew=2, label="the map's minimum")
left.add_patch(plt.Rectangle((x, y), w, h, fill=False, color="lime", lw=2, label="the face"))
left.legend(loc="lower left", fontsize=8)
left.set_title("photo")
right.imshow(heat, cmap="viridis")
right.set_title("DFFS of every 25x25 window")
for ax in (left, right):
    ax.axis("off")
plt.show()
