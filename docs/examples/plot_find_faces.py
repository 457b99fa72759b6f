"""
Faces in a photograph
=====================

:func:`eigenvision.find_faces` runs the finder that ships in ``data/``: every
face, its eyes, nose and mouth, most confident first. Each face is then cut
to a canonical crop by :func:`eigenvision.align_face`, the input of
recognition.
"""

import matplotlib.pyplot as plt
from skimage import data

import eigenvision as ev

photo = data.astronaut()
faces = ev.find_faces(photo)
for face in faces:
    print([round(v) for v in face.box], f"p = {face.confidence:.3f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(8, 4), width_ratios=(3, 1))
left.imshow(photo)
for face in faces:
    x, y, w, h = face.box
    left.add_patch(plt.Rectangle((x, y), w, h, fill=False, color="lime", lw=2))
    for point in (face.left_eye, face.right_eye, face.nose, face.mouth):
        left.plot(*point, "r+", ms=10)
left.axis("off")
right.imshow(ev.align_face(photo, faces[0], shape=(112, 92)), cmap="gray")
right.set_title("aligned crop")
right.axis("off")
plt.show()
