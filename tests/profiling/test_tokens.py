import pytest

from profiling import tokens


def test_count_is_exact_with_tiktoken_or_a_labelled_estimate():
    n = tokens.count_tokens("Bottleneck: memory bandwidth bound\n- DRAM Throughput: 70.72 %")
    assert n.tokens > 5
    if n.exact:
        assert n.method == "tiktoken o200k_base"
    else:
        assert n.method.startswith("estimate") and n.tokens == -(-len("Bottleneck: memory bandwidth bound\n- DRAM Throughput: 70.72 %".encode()) // 4)


def test_fallback_when_the_encoding_cannot_load(monkeypatch):
    monkeypatch.setattr(tokens, "_encoding", lambda: (None, "offline"))
    n = tokens.count_tokens("x" * 40)
    assert n == tokens.TokenCount(10, False, "estimate: 1 token per 4 bytes, because offline")


def test_install_encoding_file_rejects_other_files(tmp_path):
    bad = tmp_path / "o200k_base.tiktoken"
    bad.write_bytes(b"not it")
    with pytest.raises(ValueError, match="SHA-256"):
        tokens.install_encoding_file(bad)
