"""An index on the tasks' claim time, for admission control's count of recent claims. Built
CONCURRENTLY: the tasks table takes writes from every start and worker while it is built."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("research", "0013_conflict_decisions"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="researchtask",
            index=models.Index(fields=["started_at"], name="dr_task_started_at"),
        ),
    ]
