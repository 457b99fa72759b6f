"""Faces in photographs: the photo pipeline, one module per stage in the order it runs.

=====================  ====================================================================
module                 stage
=====================  ====================================================================
``candidates``         stage 1, ``CandidateSearch``: DFFS minima over a pyramid and rotations
``decision``           stage 2, ``FaceDecision``: face or not, from face and non-face clusters
``refine``             stage 3: candidates moved to the decision's best window nearby
``features``           stage 4: eyes, nose and mouth (eigenfeatures) located, the eye-pair check
``appearance``         stage 4, ``AppearanceCheck``: HOG of each face, fused with the decision
``eyes``               stage 5: the placed eyes refined by cascaded regression
``geometry``           the face box, the detection window, the eye frame
``crops``              faces cut to canonical crops: the recogniser's front end
``photos``             the finder that ships in ``data/``, the photos' splits and annotations
``compare``            the identity models that ship, ``compare_faces``
``recipes``            every recipe ``build-models`` runs (the finder, the identity models)
``groups``             faces grouped by person (``cluster_faces``)
``finder``             :class:`~eigenvision.FaceFinder`: the stages composed, in order; its training
``training``           the background photos a finder mines its non-faces from
=====================  ====================================================================
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submodules=[
        "appearance",
        "candidates",
        "compare",
        "crops",
        "decision",
        "eyes",
        "features",
        "finder",
        "geometry",
        "groups",
        "photos",
        "recipes",
        "refine",
        "training",
    ],
    submod_attrs={
        "appearance": ["AppearanceCheck"],
        "candidates": ["CandidateSearch"],
        "decision": ["FaceDecision"],
    },
)
