"""Same as `eigenvision experiment open_set` (options: --help)."""

from eigenvision.experiments.open_set import main

if __name__ == "__main__":
    main()
