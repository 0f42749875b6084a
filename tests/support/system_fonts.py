"""What the browser tests need from the system besides chromium: a font with Chinese glyphs.

Without one, chromium still renders the pages, but a printed PDF's Chinese text comes back as
`\\x00` and the print test fails far from the cause. The browser fixture asks this first and
names the package to install (`.ci/run` installs it)."""

from __future__ import annotations

import shutil
import subprocess

CJK_FONT_PACKAGE = "fonts-noto-cjk"


def cjk_font_problem() -> str | None:
    """None when fontconfig knows a font for Chinese; otherwise what is missing and how to install it."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return (
            "fontconfig's fc-list is missing, so no font for Chinese can be found: "
            f"install Debian's fontconfig and {CJK_FONT_PACKAGE} (.ci/run does)"
        )
    found = subprocess.run([fc_list, ":lang=zh", "family"], capture_output=True, text=True, timeout=60)
    if found.returncode != 0 or not found.stdout.strip():
        return (
            "no font with Chinese glyphs is installed (`fc-list :lang=zh` lists none), so printed "
            f"Chinese text would come out as \\x00: install Debian's {CJK_FONT_PACKAGE} (.ci/run does)"
        )
    return None
