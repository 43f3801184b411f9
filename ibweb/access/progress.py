"""What a view reads of the feed's ``progress`` messages."""

from __future__ import annotations

from .view import View

__all__ = ["progress_message"]


def progress_message(view: View, payload: dict) -> dict:
    """A feed ``progress`` payload as ``view`` sees it.

    Below ``ALL`` an analysis that ended says only its status: a what-if's summary names jobs
    (the worst one) and a failure's message may name hosts; those views read the result from
    the API, redacted. Running steps, an eBB's result and the engine's progress are fabric-wide.
    """
    if view.sees_all or payload.get("task") != "analysis" or payload.get("status") == "running":
        return payload
    if payload.get("kind") == "ebb" and payload.get("status") == "done":
        return payload
    return {**payload, "message": f"analysis {payload.get('status')}"}
