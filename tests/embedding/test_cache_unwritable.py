"""A cache directory that cannot be written is one line naming it and the setting, not a traceback (every command
that embeds writes the weights' checksum memo there first)."""

from __future__ import annotations

import pytest

from consensus.errors import EmbeddingError
from embedding.cache import default_model_dir, weights_checksum


def test_an_unwritable_cache_directory_is_named_with_the_setting(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    with pytest.raises(EmbeddingError) as caught:
        weights_checksum(default_model_dir(), cache_dir=blocker / "cache")
    message = str(caught.value)
    assert message.startswith(f"cache directory {blocker / 'cache'} is not writable (Not a directory): ")
    assert "VALIDATOR_CACHE_DIR" in message and "\n" not in message


def test_a_writable_cache_directory_keeps_the_memo(tmp_path):
    first = weights_checksum(default_model_dir(), cache_dir=tmp_path)
    assert (tmp_path / "checksums.json").is_file()
    assert weights_checksum(default_model_dir(), cache_dir=tmp_path) == first
