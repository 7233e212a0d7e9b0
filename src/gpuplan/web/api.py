"""The JSON API under ``/api/``: the CLI's answers in base units, with pydantic request
models so that ``/openapi.json`` documents them. Bad input is HTTP 422 with the message."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from gpuplan.web import services
from gpuplan.web.encoding import jsonable
from gpuplan.web.inputs import checked_model, parse_strategy

router = APIRouter(prefix="/api", tags=["api"])


class ScenarioBody(BaseModel):
    """What is trained. ``model`` is a catalog name or a mapping of config.json keys."""

    model: str | dict[str, Any] = Field(examples=["llama-3.1-8b"])
    method: Literal["full", "lora", "qlora", "freeze"] = "full"
    tokens: str | None = Field(default=None, examples=["100M"])
    seq_len: int | None = Field(default=None, ge=1, le=1_048_576)
    global_batch: int | None = Field(default=None, ge=1)
    precision: str | None = None
    optimizer: str | None = None
    framework: str | None = None

    def scenario(self) -> dict[str, Any]:
        data = self.model_dump(exclude_none=True)
        data["model"] = checked_model(self.model)
        return data


class PlanBody(ScenarioBody):
    """A plan search: the scenario plus budget, deadline and filters."""

    objective: Literal["cost", "time", "pareto"] = "cost"
    budget: str | None = Field(default=None, examples=["¥2000"])
    deadline: str | None = Field(default=None, examples=["30d"])
    max_gpus: int | None = Field(default=None, ge=1, le=4096)
    gpus: list[str] = []
    exclude_gpus: list[str] = []
    providers: list[str] = []
    billing: list[str] = []
    currency: str | None = None
    limit: int = Field(default=10, ge=1, le=100)
    allow_unlisted_network: bool = False


class EstimateBody(ScenarioBody):
    """One layout on one cluster."""

    gpu: str = Field(examples=["rtx-4090-24gb"])
    count: int = Field(default=1, ge=1, le=65536)
    strategy: dict[str, Any] | str | None = Field(default=None, examples=["tp=1 zero=0"])


class QuoteBody(BaseModel):
    """N instances of an offer for a duration."""

    offer: str = Field(examples=["xingyu-rtx-4090-x1"])
    duration: str = Field(examples=["40d"])
    instances: int = Field(default=1, ge=1, le=10000)
    tokens: str | None = None
    currency: str | None = None


class TCOBody(BaseModel):
    """Buy-versus-rent inputs: the TOML document's tables as JSON (see examples/seed-tco.toml)."""

    inputs: dict[str, Any]


@router.post("/plan")
def api_plan(body: PlanBody) -> Any:
    options: dict[str, Any] = {"objective": body.objective, "limit": body.limit}
    for key in ("budget", "deadline", "max_gpus", "currency"):
        if getattr(body, key) is not None:
            options[key] = getattr(body, key)
    if body.allow_unlisted_network:
        options["allow_unlisted_network"] = True
    for key in ("gpus", "exclude_gpus", "providers", "billing"):
        if getattr(body, key):
            options[key] = tuple(getattr(body, key))
    scenario = ScenarioBody.model_validate(body.model_dump(include=set(ScenarioBody.model_fields)))
    result, _ = services.plan(scenario.scenario(), options)
    return jsonable(result)


@router.post("/estimate")
def api_estimate(body: EstimateBody) -> Any:
    scenario = body.scenario()
    scenario.pop("gpu", None)
    scenario.pop("count", None)
    scenario["hardware"] = {"gpu": body.gpu, "count": body.count}
    strategy = body.strategy
    scenario.pop("strategy", None)
    if isinstance(strategy, str):
        strategy = parse_strategy(strategy)
    if strategy:
        scenario["strategy"] = strategy
    result, _ = services.estimate(scenario)
    return jsonable(result)


@router.post("/quote")
def api_quote(body: QuoteBody) -> Any:
    result, _ = services.quote(
        body.offer, body.duration, body.instances, body.tokens, body.currency
    )
    return jsonable(result)


@router.post("/tco")
def api_tco(body: TCOBody) -> Any:
    result, _ = services.tco(body.inputs)
    return jsonable(result)


@router.get("/models")
def api_models() -> Any:
    return services.models()


@router.get("/gpus")
def api_gpus() -> Any:
    return jsonable(services.gpus())


@router.get("/offers")
def api_offers(gpu: str | None = None, provider: str | None = None) -> Any:
    return jsonable(services.offers(gpu, provider))


@router.get("/health")
async def api_health() -> dict[str, str]:
    """Liveness probe: answered on the event loop, with no catalog work, so its latency is the
    server's own (a load balancer's or the load benchmark's probe)."""
    from gpuplan import __version__

    return {"status": "ok", "version": __version__}
