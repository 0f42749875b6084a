"""Pseudonyms for exported identifiers: HMAC-SHA256 under the study's own random key.

Stable within a study (the same student is the same pseudonym in every export of it, so exports
can be joined), unlinkable across studies (different keys), and not reversible without the key,
which never leaves the database. Tasks and chat-log rows get pseudonyms too, so no internal id or
task uuid that leads back to the live platform is exported."""

from __future__ import annotations

import hashlib
import hmac


class Pseudonymizer:
    LENGTH = 24  # hex characters kept: 96 bits, no collisions at any study's size

    def __init__(self, key: bytes):
        if not key or len(key) < 16:
            raise ValueError("a study's pseudonym key must be at least 16 random bytes")
        self._key = bytes(key)

    def _digest(self, kind: str, value) -> str:
        return hmac.new(self._key, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()[: self.LENGTH]

    def person(self, user_id: int | None) -> str:
        return f"p_{self._digest('user', user_id)}" if user_id is not None else ""

    def task(self, task_uuid) -> str:
        return f"t_{self._digest('task', task_uuid)}" if task_uuid is not None else ""

    def message(self, chat_log_id: int | None) -> str:
        return f"m_{self._digest('chat_log', chat_log_id)}" if chat_log_id is not None else ""
