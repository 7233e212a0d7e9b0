"""The models: FLOPs, memory, communication, step time and reliability.

``gpuplan.estimate`` is both this package and the public function of the Python API
(``gpuplan.estimate(scenario)``, ``gpuplan``'s docstring). Python binds a subpackage to its
parent's attribute on import, so the package itself is made callable: calling it runs
:func:`gpuplan.services.estimate.estimate` and returns its typed result as JSON values.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, scenario: Any, profile: int | None = None) -> dict[str, Any]:
        """The estimate of ``scenario`` (a mapping, a YAML/JSON path or a parsed scenario),
        calibrated by the stored bench run ``profile`` if given, as JSON values
        (``gpuplan.results.estimate.Estimate``)."""
        from gpuplan.jsonable import jsonable
        from gpuplan.services.estimate import estimate

        return dict(jsonable(estimate(scenario, profile=profile)))


sys.modules[__name__].__class__ = _CallableModule
