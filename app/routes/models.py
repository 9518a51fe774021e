"""GET /v1/models and /v1/models/{model_id}: the models a front end may pick, in OpenAI's shape."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from app.clients.model_catalog import ModelCard
from app.http.body import StrictJSONRoute
from app.http.chat_schemas import ModelListOut, ModelOut
from app.http.deps import ModelsDep, PrincipalDep
from app.http.errors import NotFound, OpenAIErrorResponses, ValidationFailed
from app.http.ids import MODEL_ID_RULE, is_valid_model_id

router = APIRouter(tags=["chat"], route_class=StrictJSONRoute, responses=OpenAIErrorResponses)


def _out(card: ModelCard) -> ModelOut:
    return ModelOut(id=card.id, created=card.created, owned_by=card.owned_by)


@router.get("/v1/models", response_model=ModelListOut)
async def list_models(_principal: PrincipalDep, catalog: ModelsDep) -> ModelListOut:
    """The upstream's models (its `GET /models`, cached `LLM_MODELS_CACHE_SECONDS`), or the configured
    model (`LLM_MODEL`; `mnemo-offline` without an upstream) when it lists none or cannot be read."""
    return ModelListOut(data=[_out(m) for m in await catalog.models()])


@router.get("/v1/models/{model_id:path}", response_model=ModelOut)
async def retrieve_model(
    _principal: PrincipalDep,
    catalog: ModelsDep,
    model_id: Annotated[str, Path(description="a model id as `GET /v1/models` lists it")],
) -> ModelOut:
    """One listed model; 404 `model_not_found` for an id the list does not hold."""
    if not model_id:  # `/v1/models/`: the API never redirects, and a trailing slash names no route
        raise NotFound("no route /v1/models/ (no trailing slash: GET /v1/models)")
    if not is_valid_model_id(model_id):
        raise ValidationFailed(f"model id must be {MODEL_ID_RULE}")
    card = await catalog.find(model_id)
    if card is None:
        raise NotFound(
            f"no model {model_id!r} (没有这个模型): GET /v1/models lists them", code="model_not_found"
        )
    return _out(card)
