"""
Eigen-digits: the mean and the first eigenvectors of one digit
==============================================================

An eigenspace of the threes of scikit-learn's digits: the mean, the first
eigen-digits, and the grid ``m + z1 v1 + z2 v2`` that shows what each
component does (the lecture's first figure).
"""

import matplotlib.pyplot as plt
import numpy as np

import eigenvision as ev

digits = ev.datasets.load_digits()
threes = digits.images[digits.labels == 3]
space = ev.Eigenspace(n_components=10).fit(threes)
print(f"{len(threes)} threes; v1 and v2 explain {space.explained_variance_ratio_[:2].sum():.1%}")

fig, axes = plt.subplots(1, 6, figsize=(9, 1.8))
images = [space.mean_, *space.components_[:5]]
titles = ["mean", *[f"v{i + 1}" for i in range(5)]]
for ax, image, title in zip(axes, images, titles, strict=True):
    ax.imshow(image.reshape(space.image_shape_), cmap="gray")
    ax.set_title(title)
    ax.axis("off")

# %%
# Moving along the first two components, in standard deviations:
steps = np.array([-2, -1, 0, 1, 2])
sd = np.sqrt(space.eigenvalues_[:2])
fig, axes = plt.subplots(5, 5, figsize=(5, 5))
for i, a in enumerate(steps):
    for j, b in enumerate(steps):
        code = np.zeros((1, space.n_components_))
        code[0, :2] = a * sd[0], b * sd[1]
        image = space.inverse_transform(code).reshape(space.image_shape_)
        axes[i, j].imshow(image, cmap="gray")
        axes[i, j].axis("off")
fig.suptitle("m + z1 v1 (down) + z2 v2 (across)")
plt.show()
