"""The use cases that the CLI, the web app and the Python API all call, each returning a typed
result (``gpuplan.results``); the faces only render it.

==========================  ====================================================
use case                    module
==========================  ====================================================
estimate, memory            :mod:`gpuplan.services.estimate`
plan search                 :mod:`gpuplan.services.plan`
quote, buy versus rent,     :mod:`gpuplan.services.pricing`
offers listing
==========================  ====================================================
"""
