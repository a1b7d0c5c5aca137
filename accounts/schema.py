"""How the API's token authentication appears in the OpenAPI schema (drf-spectacular): the same
security scheme as knox's (``Authorization: Token <key>``), for the project's one-query
``accounts.auth.TokenAuthentication``; and the error envelope on every operation
(``error_responses_hook``)."""

from typing import Any

from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme


class TokenScheme(KnoxTokenScheme):
    """knox's scheme, for ``accounts.auth.TokenAuthentication`` (a subclass of knox's, which
    drf-spectacular does not match by itself)."""

    target_class = "accounts.auth.TokenAuthentication"


ERROR_ENVELOPE = {
    "type": "object",
    "description": "every 4xx answer of the API (and a 503), docs/api.md",
    "properties": {
        "errors": {
            "type": "array",
            "description": "every problem found, in the order met",
            "items": {
                "type": "object",
                "properties": {
                    "field": {
                        "type": "string",
                        "nullable": True,
                        "description": "the path of the field at fault (document.options[1].pue),"
                        " or null when the problem belongs to no field",
                    },
                    "message": {"type": "string", "description": "what is wrong, in words"},
                },
                "required": ["field", "message"],
            },
        }
    },
    "required": ["errors"],
}
ERROR_STATUSES = {
    "400": "bad input: a field, a query parameter or the path, each named",
    "401": "not signed in, or a wrong password or token",
    "403": "signed in without the role this needs",
    "404": "no such object, or one of another user's private objects",
    "406": "no answer in the type the Accept header asks for",
    "409": "the object is in use, or in a state that forbids this",
    "413": "the body is over the size limit",
    "415": "the body is not JSON",
    "429": "too many requests, or too many failed sign-ins: see Retry-After",
    "503": "a service this needs is down: see Retry-After",
}


def _statuses(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    """The error statuses ``operation`` may answer."""
    statuses = ["400", "401", "403", "406", "429"]
    pages = any(param.get("name") == "page" for param in operation.get("parameters", []))
    if "{" in path or pages:  # a page past the last is a 404 too
        statuses.append("404")
    if "requestBody" in operation:
        statuses += ["413", "415"]
    if method == "delete":
        statuses.append("409")
    return statuses


def error_responses_hook(
    result: dict[str, Any], generator: Any, request: Any, public: Any
) -> dict[str, Any]:
    """drf-spectacular postprocessing: the error envelope (``Errors``) on every status each
    operation may answer with an error, the ones a view declares without a body included."""
    result.setdefault("components", {}).setdefault("schemas", {})["Errors"] = ERROR_ENVELOPE
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            declared = [code for code in responses if code[0] in "45"]
            for code in {*_statuses(path, method, operation), *declared}:
                response = responses.setdefault(code, {})
                response.setdefault("description", ERROR_STATUSES.get(code, "an error"))
                if not response.get("content"):
                    response["content"] = content
                if code in ("429", "503"):
                    response.setdefault(
                        "headers",
                        {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds"}},
                    )
    return result
