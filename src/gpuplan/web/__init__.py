"""`gpuplan serve`: plan, estimate, quote, TCO and the catalog in a browser, and a JSON API
under ``/api/``. Needs the optional ``[web]`` extra (FastAPI, uvicorn, python-multipart, Jinja2);
nothing here is imported by ``import gpuplan``."""
