"""The data files: example sentences and the MiniLM learned position table."""

import hashlib

import numpy as np
import pytest

import posviz

MINILM_SHA256 = "70380d1f35f5fc2f2f15e93a9a2fc14747730b6cdc10caecdb1dcdb827bc4567"


def test_order_pairs_are_permutations_with_both_languages():
    pairs = posviz.load_sentences("order_pairs")
    assert len(pairs) >= 2
    for pair in pairs:
        for lang in ("ko", "en"):
            a, b = pair[lang]
            assert a != b and sorted(posviz.tokenize(a)) == sorted(posviz.tokenize(b))


def test_korean_pairs_keep_their_tokens_and_the_no_particle_pair_comes_first():
    # particles keep the roles: the same tokens, reordered
    for item in posviz.load_sentences("focus_order") + posviz.load_sentences("free_order"):
        a, b = item["ko"]
        assert a != b and sorted(posviz.tokenize(a)) == sorted(posviz.tokenize(b))
    assert posviz.load_sentences("focus_order")[0]["ko"] == ["나는 항상 빵을 먹는다", "나는 빵을 항상 먹는다"]
    # notebooks 00 and 01 use the first order pair: in Korean, one whose words carry no particles
    assert posviz.load_sentences("order_pairs")[0]["ko"] == ["개 물린 사람", "사람 물린 개"]


def test_repeated_word_positions_point_at_the_word():
    item = posviz.load_sentences("repeated_word")
    for lang in ("ko", "en"):
        tokens = posviz.tokenize(item[lang])
        positions = item[f"positions_{lang}"]
        assert len(positions) == 2 and positions[0] != positions[1]
        assert all(tokens[p] == item[f"word_{lang}"] for p in positions)


def test_short_sentences_and_copies():
    short = posviz.load_sentences("short")
    assert short["ko"] and short["en"]
    short["ko"].append("x")
    assert "x" not in posviz.load_sentences("short")["ko"]
    with pytest.raises(ValueError, match="order_pairs"):
        posviz.load_sentences("nope")
    with pytest.raises(TypeError):
        posviz.tokenize(3)


def test_minilm_table_shape_dtype_checksum():
    table = posviz.load_minilm_position_embeddings()
    assert table.shape == (512, 384) and table.dtype == np.float32
    path = posviz.data_dir() / posviz.data.MINILM_FILE
    assert hashlib.sha256(path.read_bytes()).hexdigest() == MINILM_SHA256
    # a learned table: neighbouring positions are more alike than distant ones
    offsets, cos = posviz.offset_similarity(table, 64)
    assert cos[1] > cos[64]


def test_data_dir_env_override(tmp_path, monkeypatch):
    (tmp_path / "sentences.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("POSVIZ_DATA", str(tmp_path))
    assert posviz.data_dir() == tmp_path
