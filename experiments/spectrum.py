"""Run the `spectrum` experiment: `python experiments/spectrum.py --help` (or `eigenvision experiment spectrum`)."""

from eigenvision.experiments.spectrum import main

if __name__ == "__main__":
    main()
