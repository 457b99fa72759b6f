"""dlib as a peer, called as face_recognition's users call it: HOG faces, 128-D embeddings.

Benchmark and comparison only (``pip install eigenvision[bench]``: ``dlib-bin`` and
``face-recognition-models``), never a runtime dependency of eigenvision.
"""

from __future__ import annotations

import numpy as np


def available() -> bool:
    """Whether dlib and its trained models are installed."""
    try:
        import dlib  # noqa: F401
        import face_recognition_models  # noqa: F401
    except ImportError:
        return False
    return True


class Embedder:
    """dlib's frontal HOG detector (upsampled once), 5-point shape and ResNet face embedding."""

    def __init__(self):
        import dlib
        import face_recognition_models as models

        self.detector = dlib.get_frontal_face_detector()
        self.shapes = dlib.shape_predictor(models.pose_predictor_five_point_model_location())
        self.network = dlib.face_recognition_model_v1(models.face_recognition_model_location())

    def faces(self, image):
        """``(boxes, embeddings)`` of every face: ``(x, y, w, h)`` and ``(128,)`` each.

        Parameters
        ----------
        image : (H, W, 3) uint8 ndarray
            RGB.

        Returns
        -------
        boxes : list of tuple
        embeddings : (n, 128) ndarray
        """
        found = self.detector(image, 1)
        boxes, vectors = [], []
        for rect in found:
            shape = self.shapes(image, rect)
            vectors.append(np.array(self.network.compute_face_descriptor(image, shape)))
            boxes.append((rect.left(), rect.top(), rect.width(), rect.height()))
        return boxes, np.array(vectors).reshape(-1, 128)


class Referee:
    """dlib's CNN (MMOD) and HOG face detectors together: the faces no one annotated."""

    def __init__(self):
        import dlib
        import face_recognition_models as models

        self.cnn = dlib.cnn_face_detection_model_v1(models.cnn_face_detector_model_location())
        self.hog = dlib.get_frontal_face_detector()

    def boxes(self, image, upsample):
        """``(x, y, w, h)`` of every face either finds (the CNN upsampled ``upsample`` times,
        HOG once).

        Parameters
        ----------
        image : (H, W) ndarray
            Grey, in [0, 1].
        upsample : int

        Returns
        -------
        list of tuple
        """
        grey = np.ascontiguousarray(np.clip(image * 255, 0, 255).astype(np.uint8))
        found = [
            (r.rect.left(), r.rect.top(), r.rect.width(), r.rect.height())
            for r in self.cnn(grey, upsample)
        ]
        return found + [(r.left(), r.top(), r.width(), r.height()) for r in self.hog(grey, 1)]


def hog_detector():
    """dlib's frontal-face HOG detector (None when dlib is not installed)."""
    try:
        import dlib
    except ImportError:
        return None
    return dlib.get_frontal_face_detector()


def hog_faces(detector, image, upsample=1):
    """dlib HOG faces as a user finds them by default (``detector(image, 1)``), with scores.

    Parameters
    ----------
    detector : dlib.fhog_object_detector
    image : (H, W) ndarray
        Grey, in [0, 1].
    upsample : int, default 1
        face_recognition's default.

    Returns
    -------
    list of ((x, y, w, h), score)
    """
    grey = np.ascontiguousarray(np.clip(np.asarray(image) * 255, 0, 255).astype(np.uint8))
    rects, scores, _ = detector.run(grey, upsample, 0.0)
    return [
        ((r.left(), r.top(), r.width(), r.height()), float(s))
        for r, s in zip(rects, scores, strict=True)
    ]


def chinese_whispers(embeddings, threshold=0.5) -> np.ndarray:
    """dlib's Chinese-whispers clustering of face embeddings (its example's threshold 0.5).

    Parameters
    ----------
    embeddings : (n, 128) ndarray
    threshold : float, default 0.5
        Faces closer than this (Euclidean) are linked.

    Returns
    -------
    (n,) int ndarray
    """
    import dlib

    vectors = [dlib.vector(list(map(float, row))) for row in embeddings]
    return np.asarray(dlib.chinese_whispers_clustering(vectors, threshold), dtype=np.int64)
