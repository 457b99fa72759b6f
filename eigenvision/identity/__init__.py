"""Identity in the wild: descriptions of a face, probabilistic identity subspaces, and the model
that says "same person?".

- :mod:`.describe`: :class:`FaceDescriber`, a face crop's descriptions (LBP, HOG, DAISY, Fisher
  vectors, a learned embedding), one block of columns each;
- :mod:`.deep`: the learned embedding (dlib's ResNet; the optional ``eigenvision[deep]``);
- :mod:`.plda`: :class:`PLDA` and :class:`JointBayesian`, fitted by EM, and their pair ratio;
- :mod:`.fusion`: :class:`PLDAFusion`, one PLDA model per description, ratios summed;
- :mod:`.model`: :class:`IdentityModel` (describer, PLDA, cohort, calibration) and
  :func:`centred_on`;
- :mod:`.forms`: the forms a fitted model ships in (:func:`quantized`, :func:`half_precision`).
"""

from .deep import CHIP_EYE_POSITIONS, DEEP_INSTALL, MissingExtraError, deep_available
from .describe import IDENTITY_DESCRIPTORS, FaceDescriber
from .forms import half_precision, quantized
from .fusion import PLDAFusion
from .model import IDENTITY_EYE_POSITIONS, IdentityModel, centred_on, centring_shift, tempered
from .plda import PLDA, JointBayesian, PairForm, diagonal_pair_scoring, log_likelihood

__all__ = [
    "PLDA",
    "JointBayesian",
    "PLDAFusion",
    "IdentityModel",
    "FaceDescriber",
    "half_precision",
    "quantized",
    "centred_on",
    "centring_shift",
    "tempered",
    "diagonal_pair_scoring",
    "log_likelihood",
    "PairForm",
    "deep_available",
    "MissingExtraError",
    "CHIP_EYE_POSITIONS",
    "DEEP_INSTALL",
    "IDENTITY_DESCRIPTORS",
    "IDENTITY_EYE_POSITIONS",
]
