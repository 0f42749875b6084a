"""Tests: the dev settings on the same real PostgreSQL + pgvector, made faster where speed costs no
realism (password hashing).

Each test run gets its own Valkey (so concurrent runs never consume each other's Celery
messages or rate-limit counters) and its own test database name. Worker processes that the
tests start inherit REDIS_URL and receive DATABASE_URL explicitly, so they join this run."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

if not os.environ.get("REDIS_URL"):
    from uedu_dr import devstack

    _valkey = devstack.start_valkey(Path(tempfile.mkdtemp(prefix="uedu-test-valkey-")))
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{_valkey.port}/0"
    atexit.register(_valkey.kill)

from .dev import *  # noqa: E402,F401,F403
from .dev import DATABASES  # noqa: E402

# Uploaded materials of this run go to a scratch folder, never into var/media.
MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="uedu-test-media-"))
atexit.register(shutil.rmtree, MEDIA_ROOT, ignore_errors=True)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
# Workers the tests start write their mail to files the test can read (locmem stays in-process).
if os.environ.get("UEDU_TEST_MAIL_DIR"):
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = os.environ["UEDU_TEST_MAIL_DIR"]
DATABASES["default"]["TEST"] = {"NAME": f"test_uedu_dr_{os.getpid()}"}
# A failed Bloom classification is retried after this many seconds (doubling): short in tests so
# a real worker's retry is seen within a test.
UEDU_BLOOM_RETRY_SECONDS = 1
# Tests queue researches no worker claims and keep them queued for minutes; a start is refused for
# the workers' queue only in the tests of admission control, which set their own wait.
UEDU_DR_MAX_QUEUE_WAIT_SECONDS = 86_400
