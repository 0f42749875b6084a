"""The one error type services raise for a refusal the user should see, and its JSON shape.

Views map it to `{"error": {"code", "message"}}` with its HTTP status (see research/api); pages
show the message. Services never return half-done work with an error: they raise before writing."""

from __future__ import annotations


class ServiceError(Exception):
    status = 400

    def __init__(self, code: str, message: str, *, status: int | None = None, retry_after: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        if status is not None:
            self.status = status
        self.retry_after = retry_after

    def as_json(self) -> dict:
        return {"error": {"code": self.code, "message": str(self.message)}}
