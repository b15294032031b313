"""Every stable error `code` the API answers with: the one list that the OpenAPI schema (an enum
on the error body) and the README's error-code table are both held to (tests/api/test_contract.py).

A new code is added here, with its statuses and meaning, and a row in the README's table.
"""

from __future__ import annotations

from typing import NamedTuple


class ErrorCode(NamedTuple):
    statuses: tuple[int, ...]
    meaning: str


ERROR_CODES: dict[str, ErrorCode] = {
    "alias_not_removable": ErrorCode(
        (409,), "The alias was recorded by a curator's decision (revert it) or by a sighting."
    ),
    "already_decided": ErrorCode((409,), "The item was decided already; names who and when."),
    "already_reverted": ErrorCode(
        (409,), "The decision (or every decision of the batch) was reverted already."
    ),
    "application_under_way": ErrorCode(
        (409,),
        "An apply or reverse of the sweep is queued or running (`details.run`, `details.job`).",
    ),
    "authentication_failed": ErrorCode((401,), "The token or credentials are wrong."),
    "checkpoint_id_taken": ErrorCode((409,), "The checkpoint id was used for another batch."),
    "cluster_changed": ErrorCode(
        (409,), "A cluster's open links changed since it was shown; look at it again."
    ),
    "conflict": ErrorCode((409,), "The change conflicts with the current state."),
    "content_too_large": ErrorCode(
        (400, 413),
        "The content, a source or provenance, or the request body (413: an MCP message) is "
        "too large.",
    ),
    "database_busy": ErrorCode((503,), "The database is busy; retry after `Retry-After`."),
    "database_unavailable": ErrorCode((503,), "The database cannot be reached."),
    "decision_not_found": ErrorCode((404,), "No decision with that id, or none in that batch."),
    "drawer_deleted": ErrorCode(
        (409,), "The drawer holding the memory was deleted meanwhile; write it again."
    ),
    "drawer_id_taken": ErrorCode((409,), "The client-chosen id names another drawer."),
    "drawer_name_taken": ErrorCode((409,), "The name is taken in the room by other content."),
    "drawer_not_current": ErrorCode((409,), "The drawer is superseded already."),
    "drawer_not_found": ErrorCode((404,), "No drawer with that id."),
    "empty_label": ErrorCode((400,), "A name, kind, wing or room is blank."),
    "entity_not_found": ErrorCode((404,), "No entity with that id (that the key is told of)."),
    "entity_redirected": ErrorCode((409,), "The entity was settled into another one."),
    "error": ErrorCode((400,), "Any other refusal by the framework."),
    "import_not_found": ErrorCode((404,), "No import with that id."),
    "import_reversed": ErrorCode((409,), "The import was reversed already."),
    "invalid": ErrorCode((400,), "Invalid input (a wrong type, NUL, an unknown field)."),
    "invalid_action": ErrorCode(
        (400,),
        "The action or verdict does not apply to the item (`details.offered`: those it takes).",
    ),
    "invalid_cursor": ErrorCode(
        (400,), "A list's cursor is malformed, blank, or another list's (or query's, or order's)."
    ),
    "invalid_id": ErrorCode((400,), "A malformed id."),
    "invalid_json": ErrorCode((400,), "The body is not JSON (malformed, too deep, bad UTF-8)."),
    "item_not_found": ErrorCode(
        (404,), "No review item with that id, or one removed after it was listed."
    ),
    "job_running": ErrorCode(
        (409,), "Cancelling a sweep's Apply or Reverse a worker is doing (all of it or none)."
    ),
    "key_not_for_agent": ErrorCode(
        (403,),
        "The agent key's login is a person's, not an agent's (staff, a superuser, a password, "
        "a curator, or not in the agents group): refused for everything. An admin revokes it "
        "and makes one for an agent (`agent_key create`).",
    ),
    "method_not_allowed": ErrorCode((405,), "The path does not take that method."),
    "no_job_waiting": ErrorCode((409,), "Cancelling where no Apply or Reverse of the run waits."),
    "not_acceptable": ErrorCode((406,), "No answer in a media type the client accepts."),
    "not_authenticated": ErrorCode((401,), "No token or session."),
    "not_found": ErrorCode((404,), "No such path, or an unknown page cursor."),
    "nothing_to_apply": ErrorCode(
        (409,), "Applying the sweep would change nothing (sent twice, or nothing left)."
    ),
    "out_of_scope": ErrorCode((403,), "The agent key does not reach the wing."),
    "permission_denied": ErrorCode((403,), "The user may not do that."),
    "query_too_short": ErrorCode(
        (400,),
        "A search of one character of Chinese, Japanese, Thai... or Korean alone: give two or "
        "more (the index holds pairs of characters).",
    ),
    "remembered_distinct": ErrorCode((409,), "A curator said the two are distinct."),
    "request_too_large": ErrorCode(
        (414, 431), "The request line or headers are over the server's limits (gunicorn's)."
    ),
    "request_timeout": ErrorCode(
        (408,), "The request's head did not arrive in time (gunicorn's head deadline)."
    ),
    "revert_blocked": ErrorCode((409,), "Later decisions depend on it, or the item changed."),
    "revert_target_deleted": ErrorCode(
        (409,), "A side of the item was deleted after the decision."
    ),
    "revert_would_duplicate": ErrorCode(
        (409,), "Reverting would put an exact copy beside a drawer written since."
    ),
    "room_move_splits_supersessions": ErrorCode(
        (409,), "Moving the room alone would leave a supersession spanning two wings."
    ),
    "room_not_empty": ErrorCode((409,), "The room holds drawers; delete or move them first."),
    "room_not_found": ErrorCode((400, 404), "No such wing or room."),
    "run_done": ErrorCode((409,), "Resuming a sweep that has finished."),
    "run_not_applied": ErrorCode((409,), "Nothing of the sweep is applied: nothing to reverse."),
    "run_not_done": ErrorCode((409,), "Only a finished sweep can be applied."),
    "server_error": ErrorCode((500,), "An unexpected failure under /api/ (a bug; it is logged)."),
    "supersede_across_wings": ErrorCode(
        (409,), "The replacing drawer is in another wing than the drawer it would supersede."
    ),
    "sweep_not_found": ErrorCode((404,), "No sweep with that id."),
    "sweep_under_way": ErrorCode(
        (409,), "A sweep of the same scope is queued or running (`details.run`)."
    ),
    "throttled": ErrorCode((429,), "Too many requests."),
    "unsupported_request": ErrorCode(
        (411, 417, 501),
        "An `Expect` or transfer coding the server does not support (gunicorn's), or a body "
        "sent chunked, without a Content-Length (411).",
    ),
    "unsupported_media_type": ErrorCode((415,), "The body is not `application/json`."),
    "wing_not_empty": ErrorCode((409,), "The wing has rooms; delete or move them first."),
    "wing_not_found": ErrorCode((404,), "No wing with that name."),
}

ERROR_CODE_CHOICES = [(code, code) for code in sorted(ERROR_CODES)]
