"""Same as `eigenvision experiment lfw_people` (options: --help)."""

from eigenvision.experiments.lfw_people import main

if __name__ == "__main__":
    main()
