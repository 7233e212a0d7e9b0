"""``python -m gpuplan``: the same command line as the ``gpuplan`` script."""

from gpuplan.cli.app import main

if __name__ == "__main__":
    main()
