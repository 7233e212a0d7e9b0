"""Fuzzed JSON bodies for every POST endpoint: an answer (200) or a 4xx that names the
problem; never a 500, a hang or a runaway response."""

from __future__ import annotations

import json

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from gpuplan.web.app import create_app

from .bounds import bounded, fuzz_settings
from .strategies import web_bodies

pytestmark = pytest.mark.fuzz

CLIENT = TestClient(create_app(), raise_server_exceptions=True)
MAX_RESPONSE_BYTES = 4 * 2**20


def _encoded(body: object) -> bytes:
    """The body as JSON text; NaN and infinities are written as JSON's non-standard tokens,
    which a client can send and the server must refuse."""
    return json.dumps(body, allow_nan=True, default=str).encode()


@fuzz_settings(share=0.5)
@given(
    path_and_body=st.sampled_from(sorted(web_bodies)).flatmap(
        lambda path: st.tuples(st.just(path), web_bodies[path])
    )
)
def test_a_fuzzed_body_is_answered_or_refused_with_4xx(path_and_body):
    path, body = path_and_body
    response = bounded(
        lambda: CLIENT.post(
            path, content=_encoded(body), headers={"content-type": "application/json"}
        )
    )
    event(f"{path}: HTTP {response.status_code}")
    assert response.status_code in (200, 400, 413, 422), (response.status_code, response.text)
    assert len(response.content) < MAX_RESPONSE_BYTES
    if response.status_code != 200:
        assert response.json()["detail"]
