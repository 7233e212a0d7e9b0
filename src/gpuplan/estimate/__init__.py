"""The models: FLOPs, memory, communication, step time and reliability.

``gpuplan.estimate`` is both this package and the public function of DESIGN.md's Python API
(``gpuplan.estimate(scenario)``). Python binds a subpackage to its parent's attribute on import,
so the package itself is made callable: calling it runs :func:`gpuplan.api.estimate`.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, scenario: Any) -> dict[str, Any]:
        from gpuplan.api import estimate

        return estimate(scenario)


sys.modules[__name__].__class__ = _CallableModule
