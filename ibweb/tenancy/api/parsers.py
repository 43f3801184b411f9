from rest_framework.parsers import BaseParser


class PlainTextParser(BaseParser):
    """``text/plain`` bodies (an uploaded ``partitions.conf``) as one string."""

    media_type = "text/plain"

    def parse(self, stream, media_type=None, parser_context=None) -> str:
        charset = (parser_context or {}).get("encoding", "utf-8")
        return stream.read().decode(charset)
