"""The ``gpuplan`` command: one module per command group, registered in ``app.py``."""
