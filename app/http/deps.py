"""One-line dependencies: routes reach lifespan clients through `request.state`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Path, Request
from redis.asyncio import Redis

from app.clients.model_catalog import ModelCatalog
from app.http.audit import RequestAudit
from app.http.auth import Principal, bearer_token, ensure_can_act_for
from app.http.errors import Forbidden, RateLimited, request_id_of
from app.http.ids import Id
from app.settings import Settings
from memory import MemoryService, RoutingLongTermStore
from memory.chat.conversation import ConversationService
from memory.chat.llm import ChatModel
from memory.corrections import MemoryEditor, MemoryRestorer
from memory.governance.audit import AuditLog
from memory.governance.erasure import Eraser
from memory.governance.export import UserExport
from memory.governance.usage import UsageLedger
from memory.governance.users import UserDirectory
from memory.outbox.stream import Outbox
from memory.session.idempotency import IdempotencyRecords
from memory.session.store import SessionStore


def get_settings(request: Request) -> Settings:
    return request.state.settings  # type: ignore[no-any-return]


def get_redis(request: Request) -> Redis:
    return request.state.redis  # type: ignore[no-any-return]


def get_store(request: Request) -> RoutingLongTermStore:
    return request.state.store  # type: ignore[no-any-return]


def get_memory(request: Request) -> MemoryService:
    return request.state.memory  # type: ignore[no-any-return]


def get_sessions(request: Request) -> SessionStore:
    return request.state.sessions  # type: ignore[no-any-return]


def get_conversation(request: Request) -> ConversationService:
    return request.state.conversation  # type: ignore[no-any-return]


def get_eraser(request: Request) -> Eraser:
    return request.state.eraser  # type: ignore[no-any-return]


def get_user_directory(request: Request) -> UserDirectory:
    return UserDirectory(request.state.redis)


def get_exporter(request: Request) -> UserExport:
    return request.state.exporter  # type: ignore[no-any-return]


def get_audit_log(request: Request) -> AuditLog:
    return request.state.audit  # type: ignore[no-any-return]


def get_llm(request: Request) -> ChatModel:
    return request.state.llm  # type: ignore[no-any-return]


def get_usage(request: Request) -> UsageLedger:
    return request.state.usage  # type: ignore[no-any-return]


def get_models(request: Request) -> ModelCatalog:
    return request.state.models  # type: ignore[no-any-return]


def get_editor(request: Request) -> MemoryEditor:
    return request.state.editor  # type: ignore[no-any-return]


def get_restorer(request: Request) -> MemoryRestorer:
    return request.state.restorer  # type: ignore[no-any-return]


def get_outbox(request: Request) -> Outbox:
    return request.state.outbox  # type: ignore[no-any-return]


def get_idempotency(request: Request) -> IdempotencyRecords:
    return request.state.idempotency  # type: ignore[no-any-return]


async def get_principal(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    """The caller, authenticated and counted against their per-minute limit."""
    principal: Principal = request.state.tokens.verify(bearer_token(authorization))
    request.state.user_digest = request.state.tokens.digest(principal.user_id)  # for the access log
    if getattr(request.state, "rate_limit_counted", False):
        return principal  # an API call an MCP tool makes in-process: its MCP request was counted
    decision = await request.state.rate_limiter.hit(principal.user_id)
    if decision is not None:
        request.state.rate_limit = decision  # RequestContextMiddleware turns it into X-RateLimit-* headers
        if not decision.allowed:
            raise RateLimited(
                f"more than {decision.limit} requests per minute; retry in {decision.reset_seconds}s",
                headers={"Retry-After": str(decision.reset_seconds)},
            )
    return principal


UserIdPath = Annotated[Id, Path(description="the user whose memory this is")]


def get_acting_user(user_id: UserIdPath, principal: Annotated[Principal, Depends(get_principal)]) -> str:
    """The path's user id, once the caller is known to be allowed to act for it."""
    ensure_can_act_for(principal, user_id)
    return user_id


def get_request_audit(
    request: Request, principal: Annotated[Principal, Depends(get_principal)]
) -> RequestAudit:
    return RequestAudit(request.state.audit, principal, request_id_of(request))


def require_admin(principal: Annotated[Principal, Depends(get_principal)]) -> Principal:
    if not principal.is_admin:
        raise Forbidden("this route is for admins")
    return principal


SettingsDep = Annotated[Settings, Depends(get_settings)]
RedisDep = Annotated[Redis, Depends(get_redis)]
StoreDep = Annotated[RoutingLongTermStore, Depends(get_store)]
ModelsDep = Annotated[ModelCatalog, Depends(get_models)]
UsageDep = Annotated[UsageLedger, Depends(get_usage)]
MemoryDep = Annotated[MemoryService, Depends(get_memory)]
SessionsDep = Annotated[SessionStore, Depends(get_sessions)]
ConversationDep = Annotated[ConversationService, Depends(get_conversation)]
LLMDep = Annotated[ChatModel, Depends(get_llm)]
EraserDep = Annotated[Eraser, Depends(get_eraser)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
AdminDep = Annotated[Principal, Depends(require_admin)]
AuditDep = Annotated[RequestAudit, Depends(get_request_audit)]
AuditLogDep = Annotated[AuditLog, Depends(get_audit_log)]
ExporterDep = Annotated[UserExport, Depends(get_exporter)]
UserDirectoryDep = Annotated[UserDirectory, Depends(get_user_directory)]
OutboxDep = Annotated[Outbox, Depends(get_outbox)]
IdempotencyDep = Annotated[IdempotencyRecords, Depends(get_idempotency)]
EditorDep = Annotated[MemoryEditor, Depends(get_editor)]
RestorerDep = Annotated[MemoryRestorer, Depends(get_restorer)]
ActingUser = Annotated[str, Depends(get_acting_user)]
