"""The export audit log refuses TRUNCATE as it refuses UPDATE and DELETE (governance 0003)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction


def test_truncate_of_the_audit_log_is_refused(db):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            # What any other session sees: the test suite's own opt-in switched off for this transaction.
            cursor.execute("SET LOCAL uedu.allow_audit_truncate = 'off'")
            cursor.execute("TRUNCATE governance_exportaudit")


def test_truncate_is_refused_even_with_cascade_from_another_table(db):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL uedu.allow_audit_truncate = 'off'")
            cursor.execute("TRUNCATE governance_exportaudit, auth_user CASCADE")
