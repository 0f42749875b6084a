"""Request body parsers of the API."""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser. Python's decoder raises RecursionError (not ValueError, which DRF turns
    into a 400) on deeply nested input such as `[[[[…]]]]`; that is bad input too, not a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply.") from None
