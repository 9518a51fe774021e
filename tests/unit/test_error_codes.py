"""The error contract, three ways that must agree: the registry (`app.http.errors.ERROR_CODES`), the
table under `## Errors` in docs/api.md, and every code the source can emit (found on the syntax tree, so
a new `code="..."` anywhere in app/ that is not registered fails here). Plus the plumbing every route
shares: the strict JSON reader, and the one id validator instead of ad-hoc patterns.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.http import errors
from app.http.body import StrictJSONRoute
from app.http.errors import ERROR_CODES
from app.http.fields import RequestBody
from app.main import create_app
from tests.conftest import make_settings

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "api.md"
_EMITTERS = {"envelope", "_json_error"}  # (status, code, ...) positional


def documented_codes(markdown: str) -> dict[str, int]:
    """code -> status from the table under `## Errors` (a row may name several codes: `a` / `b`)."""
    found = re.search(r"^## Errors\n(.*?)(?=^## |\Z)", markdown, re.MULTILINE | re.DOTALL)
    assert found, "docs/api.md has no '## Errors' section"
    rows = [line for line in found.group(1).splitlines() if line.startswith("|")]
    assert len(rows) > 2, "the Errors section has no table"
    table: dict[str, int] = {}
    for row in rows[2:]:  # past the header and the |---| line
        cells = [c.strip() for c in row.strip("|").split("|")]
        codes = re.findall(r"`([a-z0-9_]+)`", cells[0])
        assert codes, f"a row without a code: {row}"
        assert cells[1].isdigit(), f"the status of {codes} is not a number: {row}"
        for code in codes:
            assert code not in table, f"{code} is in the table twice"
            table[code] = int(cells[1])
    return table


def _strings(node: ast.AST, stores: set[str]) -> Iterator[str]:
    """The codes an expression can be: its string constants, and `f"{x.store}_unavailable"` for
    every store the source names in `StoreUnavailable("<store>", ...)`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        tail = node.values[-1]
        if isinstance(tail, ast.Constant) and tail.value == "_unavailable":
            yield from (f"{store}_unavailable" for store in stores)
    else:
        for child in ast.iter_child_nodes(node):
            yield from _strings(child, stores)


def _status_of_class(name: str) -> int | None:
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.ServiceError):
        return cls.status_code
    return None


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def store_names(*trees: Path) -> set[str]:
    stores: set[str] = set()
    for tree in trees:
        for path in tree.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and _name(node.func) == "StoreUnavailable"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    stores.add(node.args[0].value)
                # a subclass naming its store: `super().__init__("embeddings", reason)`
                if isinstance(node, ast.ClassDef) and "StoreUnavailable" in {_name(b) for b in node.bases}:
                    stores.update(
                        call.args[0].value
                        for call in ast.walk(node)
                        if isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "__init__"
                        and call.args
                        and isinstance(call.args[0], ast.Constant)
                        and isinstance(call.args[0].value, str)
                    )
    return stores


def emitted_codes(app_dir: Path, stores: set[str]) -> dict[str, set[int | None]]:
    """code -> the statuses it is emitted with (None where the source does not say), from every place
    a code is written: `code=` arguments, `code = ...` assignments (class defaults with the class's
    `status_code`), `"code"` keys of dict literals, `envelope`/`_json_error` calls, `_HTTP_CODES`, and
    what `_describe*` functions return first."""
    found: dict[str, set[int | None]] = {}

    def add(node: ast.AST, status: int | None) -> None:
        for code in _strings(node, stores):
            found.setdefault(code, set()).add(status)

    for path in sorted(app_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                status = next(
                    (
                        _int(s.value)
                        for s in node.body
                        if isinstance(s, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "status_code" for t in s.targets)
                    ),
                    None,
                )
                for s in node.body:
                    if isinstance(s, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "code" for t in s.targets
                    ):
                        add(s.value, status)
            elif isinstance(node, ast.Call):
                name = _name(node.func)
                for kw in node.keywords:
                    if kw.arg == "code":
                        add(kw.value, _status_of_class(name))
                if name in _EMITTERS and len(node.args) >= 2:
                    add(node.args[1], _int(node.args[0]))
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {t.id for t in targets if isinstance(t, ast.Name)}
                if "code" in names and node.value is not None and not _in_class_body(tree, node):
                    add(node.value, None)
                if "_HTTP_CODES" in names and isinstance(node.value, ast.Dict):
                    for k, v in zip(node.value.keys, node.value.values, strict=True):
                        assert k is not None
                        add(v, _int(k))
            elif isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == "code":
                        add(v, None)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "_describe"
            ):
                for ret in ast.walk(node):
                    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple):
                        add(ret.value.elts[0], None)
    return found


def _int(node: ast.expr) -> int | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _in_class_body(tree: ast.Module, node: ast.stmt) -> bool:
    return any(isinstance(c, ast.ClassDef) and node in c.body for c in ast.walk(tree))


class TestRegistry:
    def test_the_docs_table_is_the_registry(self) -> None:
        documented = documented_codes(DOCS.read_text())
        assert documented == dict(ERROR_CODES), (
            f"only in docs: {sorted(set(documented) - set(ERROR_CODES))}; "
            f"only in the registry: {sorted(set(ERROR_CODES) - set(documented))}; "
            f"status differs: {sorted(c for c in documented if c in ERROR_CODES and documented[c] != ERROR_CODES[c])}"
        )

    def test_the_source_emits_exactly_the_registry(self) -> None:
        emitted = emitted_codes(ROOT / "app", store_names(ROOT / "app", ROOT / "memory"))
        assert set(emitted) == set(ERROR_CODES), (
            f"emitted but not registered: {sorted(set(emitted) - set(ERROR_CODES))}; "
            f"registered but never emitted: {sorted(set(ERROR_CODES) - set(emitted))}"
        )
        for code, statuses in emitted.items():
            assert statuses - {None} <= {ERROR_CODES[code]}, (code, statuses)

    def test_the_scan_finds_a_planted_code(self, tmp_path: Path) -> None:
        """The scanner is a function of a tree: a code written in a new file shows up, with its status."""
        (tmp_path / "planted.py").write_text(
            "from app.http.errors import Forbidden, envelope\n"
            "def f() -> None:\n"
            '    raise Forbidden("不行 no", code="brand_new_code")\n'
            'def g() -> object:\n    return envelope(418, "teapot_code", "", "")\n'
            'def h(exc: object) -> dict[str, str]:\n    return {"code": f"{exc}_unavailable"}\n'
        )
        found = emitted_codes(tmp_path, {"kafka"})
        assert found == {"brand_new_code": {403}, "teapot_code": {418}, "kafka_unavailable": {None}}

    def test_docs_parser_reads_grouped_rows(self) -> None:
        table = "## Errors\n\n| code | status | when |\n|---|---|---|\n| `a_x` / `b_y` | 401 | 没有 no |\n## Next\n"
        assert documented_codes(table) == {"a_x": 401, "b_y": 401}

    @pytest.mark.parametrize(
        ("raised", "status", "code"),
        [
            (400, 400, "invalid_json"),  # FastAPI: "There was an error parsing the body"
            (404, 404, "not_found"),
            (405, 405, "method_not_allowed"),
            (413, 413, "payload_too_large"),
            (418, 500, "internal_error"),  # no code for it: a bug, answered as one
            (401, 500, "internal_error"),  # mnemo's 401s are ServiceErrors with their own codes
        ],
    )
    async def test_http_exceptions_answer_registered_codes(self, raised: int, status: int, code: str) -> None:
        request = Request(
            {"type": "http", "method": "GET", "path": "/", "headers": [], "state": {"request_id": "r1"}}
        )
        resp = await errors._http_exception(request, StarletteHTTPException(raised, "错误 error"))
        assert (resp.status_code, json.loads(bytes(resp.body))["error"]) == (status, code)
        assert ERROR_CODES[code] == status

    def test_openapi_lists_every_error_status(self) -> None:
        app = create_app(make_settings("redis://127.0.0.1:1", "http://127.0.0.1:2"))
        responses = app.openapi()["paths"]["/v1/chat/completions"]["post"]["responses"]
        assert {int(s) for s in responses if s != "200"} >= set(ERROR_CODES.values())


def api_routes(app: FastAPI) -> list[APIRoute]:
    """Every FastAPI route of the app, through the routers it includes."""
    return [
        c.original_route for c in iter_route_contexts(app.routes) if isinstance(c.original_route, APIRoute)
    ]


class TestSharedPlumbing:
    def test_every_route_reads_bodies_strictly(self) -> None:
        routes = api_routes(create_app(make_settings("redis://127.0.0.1:1", "http://127.0.0.1:2")))
        assert len(routes) >= 14
        assert [r.path for r in routes if not isinstance(r, StrictJSONRoute)] == []

    def test_every_body_model_checks_unicode(self) -> None:
        routes = api_routes(create_app(make_settings("redis://127.0.0.1:1", "http://127.0.0.1:2")))
        bodies = {r.path: r.body_field.field_info.annotation for r in routes if r.body_field is not None}
        assert len(bodies) == 7  # messages, imports, search, forget, chat, the edit of a memory, a merge
        for path, model in bodies.items():
            assert isinstance(model, type), path
            assert issubclass(model, BaseModel), path
            assert issubclass(model, RequestBody), path

    @pytest.mark.parametrize("pattern", [r"\bpattern\s*=", r"\bre\.match\(", r"\bre\.compile\("])
    def test_ids_are_checked_by_one_validator(self, pattern: str) -> None:
        """No ad-hoc id regex in the HTTP layer: `app/http/ids.py` holds the rules (fullmatch)."""
        offenders = [
            str(p.relative_to(ROOT))
            for p in sorted((ROOT / "app").rglob("*.py"))
            if p.name != "ids.py"
            and p.parent.name in {"http", "routes"}
            and re.search(pattern, p.read_text())
        ]
        assert offenders == []
