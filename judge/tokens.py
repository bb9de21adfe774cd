"""The model's tokenizer, seen from outside: rating tokens and prompt lengths.

SelectIT reads the next-token distribution over the ratings "1".."5". Over
an OpenAI-compatible API the alternatives come back as token *text*
(``top_logprobs``), so a rating token is recognised by its text, and which
texts are rating tokens is asked of the model's own tokenizer, never
hard-coded: ``discover_rating_tokens`` tokenizes "1".."5" (and " 1".." 5")
through llama.cpp's ``/tokenize`` (the embedded LM has it) and keeps every
form that is a single token, with its id. A rating that is no single token
cannot be read from one position: ``RatingTokenError``. Servers without
``/tokenize`` (OpenAI's own API) fall back to the surface rule: a token whose
text, stripped of whitespace, is the digit.

``ServerTokenizer`` also counts and truncates prompts exactly
(``/tokenize`` + ``/detokenize``); ``CharTokenizer`` estimates at a fixed
number of characters per token where the server cannot tokenize.
"""

from __future__ import annotations

import json
import logging
import math
import re
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from judge.errors import RatingTokenError
from lm.config import Endpoint

log = logging.getLogger(__name__)

RATINGS = (1, 2, 3, 4, 5)


class Tokenizer(Protocol):
    exact: bool  # True when counts come from the model's tokenizer

    def count(self, text: str) -> int:
        """Tokens in ``text`` (no special tokens)."""

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that is at most ``max_tokens`` tokens."""


class CharTokenizer:
    """An estimate for servers that cannot tokenize: ``chars_per_token`` characters per token.

    3 characters per token over-counts English for BPE vocabularies (about 4), so
    a prompt judged to fit does fit.
    """

    exact = False

    def __init__(self, chars_per_token: float = 3.0) -> None:
        if chars_per_token <= 0:
            raise ValueError("chars_per_token must be > 0")
        self.chars_per_token = chars_per_token

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def truncate(self, text: str, max_tokens: int) -> str:
        return text[: max(0, int(max_tokens * self.chars_per_token))]


def _server_root(url: str) -> str:
    return re.sub(r"/v1/?$", "", url.rstrip("/"))


class ServerTokenizer:
    """llama.cpp's ``/tokenize`` and ``/detokenize`` at the server's root (beside ``/v1``)."""

    exact = True

    def __init__(self, endpoint: Endpoint, *, timeout_s: float = 30.0) -> None:
        if endpoint.url is None:
            raise ValueError("ServerTokenizer needs a server URL")
        self.root = _server_root(endpoint.url)
        self._token = endpoint.token
        self.timeout_s = timeout_s

    def _post(self, path: str, body: Mapping[str, Any]) -> Any:
        headers = {"Content-Type": "application/json"}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token.get()}"
        req = urllib.request.Request(self.root + path, data=json.dumps(body).encode(), headers=headers, method="POST")
        with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
            return json.loads(resp.read())

    def tokenize(self, text: str) -> list[tuple[int, str]]:
        """(id, text) of every token of ``text``, without special tokens."""
        data = self._post("/tokenize", {"content": text, "with_pieces": True, "add_special": False})
        out = []
        for item in data["tokens"]:
            piece = item["piece"]
            if isinstance(piece, list):  # bytes that are not valid UTF-8 on their own
                piece = bytes(piece).decode("utf-8", errors="replace")
            out.append((int(item["id"]), str(piece)))
        return out

    def detokenize(self, ids: Sequence[int]) -> str:
        return str(self._post("/detokenize", {"tokens": list(ids)})["content"])

    def count(self, text: str) -> int:
        return len(self.tokenize(text)) if text else 0

    def truncate(self, text: str, max_tokens: int) -> str:
        tokens = self.tokenize(text)
        if len(tokens) <= max_tokens:
            return text
        return self.detokenize([i for i, _ in tokens[: max(0, max_tokens)]])

    def works(self) -> bool:
        """Whether the server has a usable ``/tokenize`` (OpenAI's API has none)."""
        try:
            return len(self.tokenize("1")) == 1
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError):
            return False


def open_tokenizer(endpoint: Endpoint, *, timeout_s: float = 30.0) -> Tokenizer:
    """The server's tokenizer when it exposes one, else the character estimate (logged)."""
    if endpoint.url is not None:
        server = ServerTokenizer(endpoint, timeout_s=timeout_s)
        if server.works():
            return server
    log.info(
        "%s has no /tokenize: prompt lengths are estimated (3 characters per token)", endpoint.label or endpoint.url
    )
    return CharTokenizer()


@dataclass(frozen=True)
class RatingTokens:
    """Which token texts are ratings. ``source``: "tokenizer" (asked of the model) or "surface" (fallback)."""

    forms: Mapping[str, int]  # token text -> rating
    ids: Mapping[int, int]  # token id -> rating (empty for the surface rule)
    source: str

    @classmethod
    def by_surface(cls) -> RatingTokens:
        return cls({str(r): r for r in RATINGS}, {}, "surface")

    def rating_of(self, token: str) -> int | None:
        if token in self.forms:
            return self.forms[token]
        if self.source == "surface":
            t = token.strip()
            return int(t) if t in ("1", "2", "3", "4", "5") else None
        return None


def discover_rating_tokens(tokenizer: Tokenizer | None) -> RatingTokens:
    """The rating tokens of the model behind ``tokenizer`` (a ``ServerTokenizer``), else the surface rule."""
    if not isinstance(tokenizer, ServerTokenizer):
        return RatingTokens.by_surface()
    forms: dict[str, int] = {}
    ids: dict[int, int] = {}
    for rating in RATINGS:
        for text in (str(rating), f" {rating}"):
            tokens = tokenizer.tokenize(text)
            if len(tokens) == 1:
                token_id, piece = tokens[0]
                forms[piece] = rating
                ids[token_id] = rating
            elif text == str(rating):
                raise RatingTokenError(
                    f'the rating "{rating}" is {len(tokens)} tokens in this model\'s '
                    f"tokenizer; SelectIT reads ratings from a single next-token distribution"
                )
    log.debug("rating tokens: %s", forms)
    return RatingTokens(forms, ids, "tokenizer")
