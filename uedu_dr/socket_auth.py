"""Channels' AuthMiddlewareStack with the session and the user read on the loop's thread pool
(uedu_dr.pooled), not on the one thread every socket of the process shares. The same
`channels.auth.get_user` does the reading, so the session checks are Channels' own."""

from __future__ import annotations

from channels.auth import AuthMiddleware, get_user
from channels.sessions import CookieMiddleware, SessionMiddleware

from uedu_dr.pooled import pooled

# channels.auth.get_user is a database_sync_to_async wrapper; `.func` is the sync function it wraps.
_get_user = pooled(get_user.func)


class PooledAuthMiddleware(AuthMiddleware):
    async def resolve_scope(self, scope):
        scope["user"]._wrapped = await _get_user(scope)


def PooledAuthMiddlewareStack(inner):  # noqa: N802 (named like Channels' AuthMiddlewareStack)
    return CookieMiddleware(SessionMiddleware(PooledAuthMiddleware(inner)))
