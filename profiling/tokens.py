"""Token counts of texts shown to the LLM (tiktoken's o200k_base encoding).

tiktoken downloads its encoding file on first use and caches it (in $TIKTOKEN_CACHE_DIR, else
<tmp>/data-gym-cache). Offline, with no cached file, the count falls back to an estimate of one
token per 4 UTF-8 bytes, and `TokenCount.exact` is False with the reason in `method`.
`install_encoding_file(path)` puts a copy of o200k_base.tiktoken where tiktoken looks for it.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ENCODING = "o200k_base"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
BYTES_PER_TOKEN = 4.0
DOWNLOAD_WAIT_S = 10.0


@dataclass(frozen=True)
class TokenCount:
    tokens: int
    exact: bool
    method: str


def _cache_dir() -> Path:
    return Path(
        os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or Path(tempfile.gettempdir()) / "data-gym-cache"
    )


PACKAGED = Path(__file__).parent / "data" / "o200k_base.tiktoken.gz"


def _install_packaged_encoding() -> None:
    """Put the shipped o200k_base file into tiktoken's cache, so no download is needed."""
    target = _cache_dir() / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.exists() or not PACKAGED.exists():
        return
    import gzip

    data = gzip.decompress(PACKAGED.read_bytes())
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)


@cache
def _encoding():
    """(encoding or None, why not). A download that hangs (a machine with no way out) is given up on
    after DOWNLOAD_WAIT_S; the cached file, when present, loads without the network."""
    try:
        import tiktoken
    except ImportError:
        return None, "tiktoken is not installed"
    _install_packaged_encoding()
    result: list = []

    def load() -> None:
        try:
            result.append((tiktoken.get_encoding(ENCODING), ""))
        except Exception as exc:  # noqa: BLE001 - tiktoken raises network errors of several libraries
            result.append((None, f"tiktoken could not load {ENCODING} ({type(exc).__name__}; offline?)"))

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(DOWNLOAD_WAIT_S)
    enc, why = result[0] if result else (None, f"tiktoken did not load {ENCODING} within {DOWNLOAD_WAIT_S:g} s (offline?)")
    if enc is None:
        why += ": put the encoding file in place with profiling.tokens.install_encoding_file(PATH)"
    return enc, why


def count_tokens(text: str) -> TokenCount:
    enc, why = _encoding()
    if enc is not None:
        return TokenCount(len(enc.encode(text, disallowed_special=())), True, f"tiktoken {ENCODING}")
    return TokenCount(
        math.ceil(len(text.encode()) / BYTES_PER_TOKEN), False, f"estimate: 1 token per {BYTES_PER_TOKEN:g} bytes, because {why}"
    )


def install_encoding_file(path: Path) -> Path:
    """Copy o200k_base.tiktoken into tiktoken's cache (checked against its published SHA-256)."""
    data = Path(path).read_bytes()
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise ValueError(f"{path} is not the o200k_base.tiktoken file (SHA-256 differs)")
    target = _cache_dir() / hashlib.sha1(O200K_URL.encode()).hexdigest()
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)
    _encoding.cache_clear()
    return target
