"""Run the `recognition_rate` experiment: `python experiments/recognition_rate.py --help` (or `eigenvision experiment recognition_rate`)."""

from eigenvision.experiments.recognition_rate import main

if __name__ == "__main__":
    main()
