"""The export audit log refuses TRUNCATE too: the row triggers of 0002 stop UPDATE and DELETE, but
TRUNCATE fires no row trigger and would empty the log in one statement.

The test suite empties every table between transactional tests with TRUNCATE (Django's flush);
it opts in on its own connections with `SET uedu.allow_audit_truncate = 'on'` (tests/conftest.py).
No product code sets it."""

from django.db import migrations

REFUSE_TRUNCATE = """
CREATE OR REPLACE FUNCTION governance_exportaudit_refuse_truncate() RETURNS trigger AS $$
BEGIN
    IF coalesce(current_setting('uedu.allow_audit_truncate', true), '') = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'governance_exportaudit is append-only (% refused)', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER governance_exportaudit_refuse_truncate
    BEFORE TRUNCATE ON governance_exportaudit
    FOR EACH STATEMENT EXECUTE FUNCTION governance_exportaudit_refuse_truncate();
"""

DROP = """
DROP TRIGGER IF EXISTS governance_exportaudit_refuse_truncate ON governance_exportaudit;
DROP FUNCTION IF EXISTS governance_exportaudit_refuse_truncate();
"""


class Migration(migrations.Migration):
    dependencies = [("governance", "0002_append_only_audit_and_existing_consent")]

    operations = [migrations.RunSQL(REFUSE_TRUNCATE, DROP)]
