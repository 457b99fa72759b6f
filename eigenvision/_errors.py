"""The exceptions eigenvision raises.

Every error derives from :class:`EigenvisionError`, so a caller can catch
everything the library raises on purpose with one ``except`` clause.
"""

import numpy as np


class EigenvisionError(Exception):
    """Base class of every error eigenvision raises on purpose."""


class ImageLoadError(EigenvisionError, OSError):
    """An image file could not be read: missing, empty, corrupt, truncated, too large."""


class ImageSetError(EigenvisionError, ValueError):
    """A set of images is unusable: unreadable files, mixed sizes, no images at all."""


class DatasetNotFoundError(EigenvisionError, FileNotFoundError):
    """A named dataset is not where eigenvision looks for it."""


class FaceCountError(EigenvisionError, ValueError):
    """A photo shows no face, or several, where exactly one is needed (enrolling)."""


class NoFaceError(FaceCountError):
    """A photo shows no face where one is needed (comparing, enrolling)."""


class ModelFileError(EigenvisionError, ValueError):
    """A model file is corrupt, truncated, hostile or from a newer format version."""


class AlreadyEnrolledWarning(UserWarning):
    """Images given to :meth:`~eigenvision.Recognizer.add` were enrolled already under the same
    label and were left out (the gallery holds each image once)."""


class UnreadableFilesWarning(UserWarning):
    """Files were left out because they could not be read (``on_error="skip"`` of
    :func:`~eigenvision.load_image_set`, :func:`~eigenvision.load_photos` and
    :func:`~eigenvision.cluster_faces`).

    Catch it to learn which files were left out (``files``) without reading the message.

    Parameters
    ----------
    message : str
    files : sequence of str
        The files left out, as they were given.

    Attributes
    ----------
    files : tuple of str
    """

    def __init__(self, message, files=()):
        super().__init__(message)
        self.files = tuple(str(file) for file in files)

    @classmethod
    def of(cls, errors):
        """The warning for files left out, each named once, by its error.

        Parameters
        ----------
        errors : dict
            Each file left out (as it was given) and its :class:`ImageLoadError`,
            whose message names the file.

        Returns
        -------
        UnreadableFilesWarning
        """
        reasons = "; ".join(str(error) for error in errors.values())
        return cls(f"left out {len(errors)} unreadable file(s): {reasons}", files=list(errors))


def refuse_complex(values, name: str) -> None:
    """Raise ``TypeError`` for complex input, which a cast to float would silently truncate.

    Parameters
    ----------
    values : array_like
    name : str
        What the values are, for the message.

    Returns
    -------
    None
    """
    if np.iscomplexobj(values):
        raise TypeError(f"{name} is complex; pass real values (e.g. np.abs or .real of it)")
