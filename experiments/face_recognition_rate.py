"""Run the `face_recognition_rate` experiment: `python experiments/face_recognition_rate.py --help` (or `eigenvision experiment face_recognition_rate`)."""

from eigenvision.experiments.face_recognition_rate import main

if __name__ == "__main__":
    main()
