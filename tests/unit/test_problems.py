"""The API's one error shape (RFC 9457 problem details), built from each kind of refusal."""

from __future__ import annotations

import asyncio
import json

from fastapi import HTTPException
from fastapi.exceptions import RequestValidationError

from memq.workers import problems


def test_a_refusal_is_a_problem_with_one_line() -> None:
    assert problems.problem(400, "no turns\n  at all") == {
        "type": "about:blank", "title": "Bad Request", "status": 400,
        "detail": "no turns at all"}
    assert problems.problem(404, "")["detail"] == "Not Found"  # never empty
    assert problems.problem(599, "odd")["title"] == "Error"  # not a status HTTP names


def test_a_batch_lists_its_refused_items_and_sums_them_up() -> None:
    body = problems.from_detail(400, {"errors": [
        {"item": 1, "reason": "content is empty"}, {"item": 4, "reason": "no time zone"}]})
    assert body["detail"] == "2 refused; item 1: content is empty"
    assert body["errors"] == [{"item": 1, "reason": "content is empty"},
                              {"item": 4, "reason": "no time zone"}]
    assert problems.from_detail(403, "this key may not write")["detail"] == (
        "this key may not write")
    assert "errors" not in problems.from_detail(400, "no turns")


def test_a_field_is_named_by_its_dotted_place() -> None:
    body = problems.from_validation([
        {"loc": ("body", "k"), "msg": "Input should be a valid integer", "type": "int_parsing"},
        {"loc": ("query", "limit"), "msg": "Input should be >= 1", "type": "x"}])
    assert body["status"] == 422 and body["title"] == "Unprocessable Entity"
    assert body["detail"] == "body.k: Input should be a valid integer"
    assert [e["loc"] for e in body["errors"]] == ["body.k", "query.limit"]


def test_handlers_answer_problem_json_and_keep_headers() -> None:
    refused = asyncio.run(problems.http_error(
        None, HTTPException(401, "no API key", headers={"WWW-Authenticate": "Bearer"})))
    assert refused.status_code == 401
    assert refused.media_type == "application/problem+json"
    assert refused.headers["www-authenticate"] == "Bearer"
    assert json.loads(bytes(refused.body))["detail"] == "no API key"
    invalid = asyncio.run(problems.validation_error(None, RequestValidationError(
        [{"loc": ("body", "query"), "msg": "Field required", "type": "missing"}])))
    assert invalid.status_code == 422
    assert json.loads(bytes(invalid.body))["errors"] == [
        {"loc": "body.query", "reason": "Field required"}]


def test_a_refusal_before_routing_has_the_same_shape() -> None:
    assert json.loads(problems.encoded(413, "request body over 10 bytes")) == problems.problem(
        413, "request body over 10 bytes")
