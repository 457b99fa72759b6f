"""Same as `eigenvision experiment face_recognition_rate` (options: --help)."""

from eigenvision.experiments.face_recognition_rate import main

if __name__ == "__main__":
    main()
