"""The composition root: every client and service mnemo runs, built from `Settings`, and only here. The
API workers' lifespan (app/lifespan.py), the writer and the other CLIs (app/cli) and the benchmarks build
through it: `stores` (models, Chroma stores, the bridge), `services` (memory service, archive, sessions,
LLM client, governance) and `core` (`build_core`, the sequence the API workers and the writer share)."""

from app.composition.core import (
    Core as Core,
)
from app.composition.core import (
    build_core as build_core,
)
from app.composition.core import (
    build_editor as build_editor,
)
from app.composition.core import (
    build_exporter as build_exporter,
)
from app.composition.core import (
    build_restorer as build_restorer,
)
from app.composition.services import (
    at_rest_policy as at_rest_policy,
)
from app.composition.services import (
    bridge_channel as bridge_channel,
)
from app.composition.services import (
    build_archive as build_archive,
)
from app.composition.services import (
    build_compactor as build_compactor,
)
from app.composition.services import (
    build_llm_client as build_llm_client,
)
from app.composition.services import (
    build_memory_service as build_memory_service,
)
from app.composition.services import (
    build_rerank as build_rerank,
)
from app.composition.services import (
    build_sessions as build_sessions,
)
from app.composition.services import (
    cross_keyword as cross_keyword,
)
from app.composition.services import (
    retriever_class as retriever_class,
)
from app.composition.services import (
    sample_gauges as sample_gauges,
)
from app.composition.services import (
    session_limits as session_limits,
)
from app.composition.services import (
    tier_policy as tier_policy,
)
from app.composition.services import (
    token_codec as token_codec,
)
from app.composition.stores import (
    bridge_name as bridge_name,
)
from app.composition.stores import (
    bridge_shared_vectors as bridge_shared_vectors,
)
from app.composition.stores import (
    bridge_stores as bridge_stores,
)
from app.composition.stores import (
    bridged_store as bridged_store,
)
from app.composition.stores import (
    build_bridge as build_bridge,
)
from app.composition.stores import (
    build_embedder as build_embedder,
)
from app.composition.stores import (
    build_store as build_store,
)
from app.composition.stores import (
    check_dense_model as check_dense_model,
)
from app.composition.stores import (
    chroma_client_factory as chroma_client_factory,
)
from app.composition.stores import (
    chroma_stores as chroma_stores,
)
from app.composition.stores import (
    deferring as deferring,
)
from app.composition.stores import (
    dense_model_name as dense_model_name,
)
from app.composition.stores import (
    ensure_layout as ensure_layout,
)
from app.composition.stores import (
    model_collection_prefix as model_collection_prefix,
)
from app.composition.stores import (
    served_model as served_model,
)
