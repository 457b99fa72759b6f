"""
Same person? Comparing two photos
=================================

:func:`eigenvision.compare_faces` finds the most confident face of each photo
(at the finder's identity threshold), cuts it as the identity model was
trained, and answers with the model's decision and ``P(same person)``.

Where a wrong answer comes from: the face compared is the *most confident* one
of each photo (``result.faces`` says which, ``result.face_counts`` how many
there were), so in a photo of several people crop to the one you mean; and
the probability is calibrated on news photos, so on photos of another kind
(one studio, one camera) it is less sure than it says (the user guide's
recognition page).
"""

import matplotlib.pyplot as plt
import numpy as np

import eigenvision as ev

imm = ev.datasets.fetch_imm(as_gray=False, progress=False)  # $EIGENVISION_DATA, else downloaded


def photo(person, index):
    """The ``index``-th IMM photo of ``person``."""
    return imm.images[np.flatnonzero(imm.labels == person)[index]]


pairs = [(("01", 0), ("01", 6)), (("01", 0), ("02", 0)), (("05", 1), ("05", 8))]
fig, axes = plt.subplots(len(pairs), 2, figsize=(5, 2.4 * len(pairs)))
for row, (a, b) in zip(axes, pairs, strict=True):
    result = ev.compare_faces(photo(*a), photo(*b))
    verdict = "same person" if result.accepted else "different people"
    print(f"{a} vs {b}: {verdict}, P(same person) {result.probability:.3f} ({result.model})")
    for ax, (person, index), face in zip(row, (a, b), result.faces, strict=True):
        ax.imshow(ev.faces.crops.face_thumbnail(photo(person, index), face))
        ax.set_title(f"IMM {person}, photo {index + 1}", fontsize=9)
        ax.axis("off")
    row[0].text(
        1.05,
        -0.08,
        f"{verdict}: P {result.probability:.2f}",
        transform=row[0].transAxes,
        ha="center",
        fontsize=10,
    )
fig.tight_layout()
plt.show()
