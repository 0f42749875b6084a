"""Local development: DEBUG on, an insecure key is acceptable. The default for manage.py."""

from .base import *  # noqa: F401,F403
from .base import env

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default="dev-only-insecure-key-do-not-deploy")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
