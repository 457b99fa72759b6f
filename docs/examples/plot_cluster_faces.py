"""
Grouping photos by person
=========================

:func:`eigenvision.cluster_faces` finds every face of every photo and groups
the faces by person, without being told how many people there are: faces
merge into a group while they are likelier one person than two.

Here: twelve studio portraits of four men (IMM, three photos each) the
identity model never saw. A model trained on news photos finds photos of one
studio alike; ``cluster_faces`` learns from the set itself which pairs are of
one person (``adapt=True``, the default), so the studio does not make everyone
one group.

Where wrong groups come from: a false detection (a badge, a poster's face) is
grouped like a face, alone or with the person it resembles; the faces grouped
are the finder's at its identity threshold, which keeps most such clutter out.
"""

import matplotlib.pyplot as plt
import numpy as np

import eigenvision as ev

imm = ev.datasets.fetch_imm(as_gray=False, progress=False)  # $EIGENVISION_DATA, else downloaded
chosen = np.concatenate([np.flatnonzero(imm.labels == p)[[0, 4, 8]] for p in "01 02 03 04".split()])
photos, people = imm.images[chosen], imm.labels[chosen]

groups = ev.cluster_faces(list(photos))
for number, group in enumerate(groups, start=1):
    print(f"group {number}:", [str(people[index]) for index, _ in group])

columns = max(len(group) for group in groups)
fig, axes = plt.subplots(len(groups), columns, figsize=(1.6 * columns, 1.8 * len(groups)))
axes = np.atleast_2d(axes)
for row, group in zip(axes, groups, strict=True):
    for ax in row:
        ax.axis("off")
    for ax, (index, face) in zip(row, group, strict=False):
        ax.imshow(ev.faces.crops.face_thumbnail(photos[index], face))
        ax.set_title(f"IMM {people[index]}", fontsize=8)
fig.suptitle("one row per group found")
plt.show()
