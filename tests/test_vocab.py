"""Vocabulary: deterministic ids, round trips, unknown tokens, clear errors."""

import numpy as np
import pytest
import torch

import posviz
from posviz import Vocabulary


def test_ids_follow_specials_then_unk_then_first_appearance():
    vocab = Vocabulary.from_sentences(["the cat sat on the mat", "the dog bit the man"], specials=("<pad>",))
    assert vocab.tokens == ["<pad>", "<unk>", "the", "cat", "sat", "on", "mat", "dog", "bit", "man"]
    assert len(vocab) == 10 and vocab.unk_id == 1
    assert vocab.encode("the dog sat on the mat") == [2, 7, 4, 5, 2, 6]
    assert vocab.token_to_id("man") == 9 and vocab.id_to_token(9) == "man"
    assert "dog" in vocab and "bird" not in vocab


def test_round_trip_and_input_types():
    sentences = posviz.load_sentences("short")["en"] + posviz.load_sentences("short")["ko"]
    vocab = Vocabulary.from_sentences(sentences)
    for sentence in sentences:
        ids = vocab.encode(sentence)
        assert vocab.decode(ids) == sentence
        assert vocab.decode(torch.tensor(ids)) == sentence
        assert vocab.decode(np.array(ids)) == sentence
        assert vocab.encode(posviz.tokenize(sentence)) == ids
    # every id maps back to itself
    assert [vocab.token_to_id(vocab.id_to_token(i)) for i in range(len(vocab))] == list(range(len(vocab)))


def test_unknown_tokens_map_to_unk_or_raise():
    vocab = Vocabulary(["a", "b"])
    assert vocab.encode("a zebra b") == [1, 0, 2]
    assert vocab.decode(vocab.encode("a zebra b")) == "a <unk> b"
    strict = Vocabulary(["a", "b"], unk=None)
    assert strict.unk_id is None and strict.tokens == ["a", "b"]
    with pytest.raises(ValueError, match="'zebra' is not in the vocabulary"):
        strict.encode("a zebra")
    # an unk that is also listed among the specials keeps a single id
    assert Vocabulary(["x"], specials=("<pad>", "<unk>")).tokens == ["<pad>", "<unk>", "x"]


def test_errors():
    vocab = Vocabulary(["a"])
    with pytest.raises(ValueError, match=r"outside \[0, 2\)"):
        vocab.decode([0, 2])
    with pytest.raises(ValueError, match="outside"):
        vocab.id_to_token(-1)
    with pytest.raises(TypeError, match="int"):
        vocab.id_to_token(1.0)
    with pytest.raises(TypeError, match="int"):
        vocab.decode([[0, 1]])
    with pytest.raises(TypeError, match="iterable of int"):
        vocab.decode("a")
    with pytest.raises(TypeError):
        vocab.encode(3)
    with pytest.raises(TypeError, match="single str"):
        Vocabulary.from_sentences("a b")
    with pytest.raises(ValueError, match="whitespace"):
        Vocabulary(["two words"])
    with pytest.raises(ValueError, match="whitespace"):
        Vocabulary([""])
    with pytest.raises(TypeError, match="str"):
        Vocabulary([1])
