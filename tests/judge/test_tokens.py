"""Rating tokens from the model's tokenizer (llama.cpp /tokenize), and exact truncation."""

from __future__ import annotations

import pytest

from judge.errors import RatingTokenError
from judge.tokens import CharTokenizer, RatingTokens, ServerTokenizer, discover_rating_tokens, open_tokenizer
from lm.config import Endpoint, Secret
from tests.lm.fake_server import FakeServer


def never(body):
    raise AssertionError("no chat call expected")


def test_rating_tokens_are_asked_of_the_tokenizer():
    with FakeServer(never) as server:
        tok = open_tokenizer(Endpoint(server.url))
        assert isinstance(tok, ServerTokenizer)
        found = discover_rating_tokens(tok)
    assert found.source == "tokenizer"
    assert found.forms == {str(r): r for r in range(1, 6)} and found.ids == {ord(str(r)): r for r in range(1, 6)}
    assert found.rating_of(" 4") is None  # " 4" is two tokens here: it can never be one alternative


def test_a_vocabulary_with_space_digit_tokens_gets_both_forms():
    with FakeServer(never, space_digits=True) as server:
        found = discover_rating_tokens(ServerTokenizer(Endpoint(server.url)))
    assert found.rating_of(" 4") == 4 and found.rating_of("4") == 4 and found.ids[100_004] == 4


def test_a_rating_that_is_not_one_token_is_refused():
    with FakeServer(never, split_digit="3") as server:
        with pytest.raises(RatingTokenError, match='rating "3" is 2 tokens'):
            discover_rating_tokens(ServerTokenizer(Endpoint(server.url)))


def test_servers_without_tokenize_fall_back_to_the_surface_rule_and_an_estimate():
    with FakeServer(never, tokenize=False) as server:
        tok = open_tokenizer(Endpoint(server.url))
    assert isinstance(tok, CharTokenizer) and not tok.exact
    found = discover_rating_tokens(tok)
    assert found == RatingTokens.by_surface() and found.rating_of(" 4") == 4 and found.rating_of("4.") is None


def test_server_tokenizer_counts_truncates_and_sends_the_key():
    with FakeServer(never) as server:
        tok = ServerTokenizer(Endpoint(server.url, Secret("sk-tok")))
        assert tok.count("hello") == 5 and tok.count("") == 0
        assert tok.truncate("hello world", 5) == "hello" and tok.truncate("hi", 5) == "hi"
        assert server.requests[0]["auth"] == "Bearer sk-tok"
        assert server.requests[0]["path"] == "/tokenize"  # at the root, beside /v1


def test_char_tokenizer_over_counts():
    tok = CharTokenizer()
    assert tok.count("abcdefg") == 3 and tok.truncate("abcdefg", 2) == "abcdef"
    with pytest.raises(ValueError):
        CharTokenizer(0)
