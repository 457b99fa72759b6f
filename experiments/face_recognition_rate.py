"""The face_recognition_rate experiment; same as `eigenvision experiment face_recognition_rate` (see --help)."""

from eigenvision.experiments.face_recognition_rate import main

if __name__ == "__main__":
    main()
