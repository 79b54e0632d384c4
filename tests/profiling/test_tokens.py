import pytest

from profiling import tokens


def test_count_is_exact_offline_with_the_shipped_o200k_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: only the shipped file can serve
    tokens._encoding.cache_clear()
    try:
        n = tokens.count_tokens("hello world")
        assert n == tokens.TokenCount(2, True, "tiktoken o200k_base")
        assert any(tmp_path.iterdir()), "the shipped encoding was installed into the cache"
    finally:
        tokens._encoding.cache_clear()


def test_fallback_when_the_encoding_cannot_load(monkeypatch):
    monkeypatch.setattr(tokens, "_encoding", lambda: (None, "offline"))
    n = tokens.count_tokens("x" * 40)
    assert n == tokens.TokenCount(10, False, "estimate: 1 token per 4 bytes, because offline")


def test_install_encoding_file_rejects_other_files(tmp_path):
    bad = tmp_path / "o200k_base.tiktoken"
    bad.write_bytes(b"not it")
    with pytest.raises(ValueError, match="SHA-256"):
        tokens.install_encoding_file(bad)
