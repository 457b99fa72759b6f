"""Same as `eigenvision experiment lfw_verification` (options: --help)."""

from eigenvision.experiments.lfw_verification import main

if __name__ == "__main__":
    main()
