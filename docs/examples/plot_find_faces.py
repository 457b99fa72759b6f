"""
Faces in a photograph
=====================

:func:`eigenvision.find_faces` runs the finder that ships in ``data/``: every
face, its eyes, nose and mouth, most confident first. Each face is then cut
to a canonical crop by :func:`eigenvision.align_face`, the input of
recognition.

Where false detections come from: the finder reports every window whose
probability of a face passes its threshold, and some things look enough like
a face to pass. On scikit-image's astronaut the second detection is her name
badge: a dark bar over a light one, eyes over a mouth. Its probability is far
below the face's; a stricter threshold drops it (``find_faces(photo,
threshold=0.7)``) at the cost of the faces it would also drop. Naming,
comparing and grouping take faces from the finder's stricter identity
threshold (``finder.identity_threshold``).
"""

import matplotlib.pyplot as plt
from skimage import data

import eigenvision as ev

photo = data.astronaut()
finder = ev.default_finder()
faces = ev.find_faces(photo)
print(f"threshold {finder.threshold}, identity threshold {finder.identity_threshold}")
for face in faces:
    print([round(v) for v in face.box], f"p = {face.confidence:.3f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(8, 4), width_ratios=(3, 1))
left.imshow(photo)
for face in faces:
    x, y, w, h = face.box
    left.add_patch(plt.Rectangle((x, y), w, h, fill=False, color="lime", lw=2))
    left.text(x, y - 6, f"p {face.confidence:.2f}", color="white", backgroundcolor="black")
    for point in (face.left_eye, face.right_eye, face.nose, face.mouth):
        left.plot(*point, "r+", ms=10)
left.axis("off")
right.imshow(ev.align_face(photo, faces[0], shape=(112, 92)), cmap="gray")
right.set_title("aligned crop")
right.axis("off")
plt.show()
