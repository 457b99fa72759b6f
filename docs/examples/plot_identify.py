"""
Naming every face of a photo
============================

A :class:`~eigenvision.Recognizer` of ``method="plda"`` enrols people with the
shipped identity model (trained on other people: enrolling trains nothing),
and :meth:`~eigenvision.Recognizer.identify` names every face of a photo, or
calls it ``"unknown"``.

Six people of the IMM studio set are enrolled from two photos each; the
photo to name is three other photos side by side: two of enrolled people and
one of a stranger. The threshold is calibrated on the enrolled people, each
a stranger to the others, as ``eigenvision train --photos`` does, then set
to a stricter probability.

Where false names come from: the faces named are those the finder finds at
its *identity* threshold (``finder.identity_threshold``), stricter than the
one it detects at, so that a sign or a badge is seldom taken for a person;
what looks much like a face can still pass, and is then named after the
likeliest person or called unknown.
"""

import matplotlib.pyplot as plt
import numpy as np

import eigenvision as ev

imm = ev.datasets.fetch_imm(as_gray=False, progress=False)  # $EIGENVISION_DATA, else downloaded
enrolled = ["01", "02", "03", "04", "05", "06"]


def photo(person, index):
    """The ``index``-th IMM photo of ``person``."""
    return imm.images[np.flatnonzero(imm.labels == person)[index]]


recognizer = ev.Recognizer(method="plda", finder=ev.default_finder())
recognizer.fit(
    [photo(person, i) for person in enrolled for i in (0, 1)],
    [person for person in enrolled for _ in (0, 1)],
)
recognizer.centre_on_gallery()  # the enrolled photos' conditions are the probes'
recognizer.calibrate_threshold(far=0.01)  # on the enrolled people, strangers to each other

probe = np.concatenate([photo("01", 2), photo("12", 0), photo("02", 2)], axis=1)
calibrated = recognizer.identify(probe)
recognizer.threshold = recognizer.distance_at(0.95)  # a name only at P(same person) 0.95
strict = recognizer.identify(probe)
for (face, name, distance), (_, strict_name, _) in zip(calibrated, strict, strict=True):
    probability = recognizer.same_person([distance])[0]
    print(f"x {face.left_eye[0]:6.0f}: {name} / {strict_name}, P(same person) {probability:.3f}")

fig, ax = plt.subplots(figsize=(9, 3))
ax.imshow(probe)
for (face, name, distance), (_, strict_name, _) in zip(calibrated, strict, strict=True):
    x, y, w, h = face.box
    ax.add_patch(plt.Rectangle((x, y), w, h, fill=False, color="lime", lw=2))
    label = f"{name} / {strict_name} (P {recognizer.same_person([distance])[0]:.2f})"
    ax.text(x, y - 12, label, color="white", fontsize=9, backgroundcolor="black")
ax.set_title("enrolled: 01 and 02 (and 03-06); the middle man is not. Calibrated / P >= 0.95")
ax.axis("off")
plt.show()

# %%
# The threshold calibrated on six enrolled people (twelve photos, each person a
# stranger to the others) lets the stranger in as the enrolled man he looks most
# like: twelve decisions say little about the strangers to come. Enrol more
# people, or ask for a surer match (``recognizer.distance_at(0.95)``, as here):
# the two enrolled men keep their names and the stranger is unknown.
