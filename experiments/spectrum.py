"""Same as `eigenvision experiment spectrum` (options: --help)."""

from eigenvision.experiments.spectrum import main

if __name__ == "__main__":
    main()
