"""Printed tables line up when labels mix Hangul and Latin letters."""

import posviz


def test_printed_tables_count_a_hangul_syllable_as_two_columns():
    assert posviz.text_columns("GRU") == 3
    assert posviz.text_columns("셀프 어텐션") == 11  # five syllables and one space
    assert posviz.pad_text("셀프 어텐션", 15, align_right=True) == "    셀프 어텐션"
    assert posviz.pad_text("RNN", 6) == "RNN   "
    assert posviz.pad_text("too wide", 3) == "too wide"
