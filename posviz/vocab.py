"""A small whitespace vocabulary: token ↔ id, encode and decode (notebook 02).

An embedding table (Vaswani et al. 2017, §3.4, https://arxiv.org/abs/1706.03762) is indexed
by token ids; this module turns whitespace-separated words into those ids and back. Real
models use subword tokenisers (WordPiece, BPE); the idea of a fixed id per token is the same.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence

from .data import tokenize

__all__ = ["Vocabulary"]


def _as_tokens(text: str | Sequence[str]) -> list[str]:
    if isinstance(text, str):
        return tokenize(text)
    if not isinstance(text, Sequence) or not all(isinstance(tok, str) for tok in text):
        raise TypeError(f"text must be a str or a sequence of str, got {type(text).__name__}")
    return list(text)


class Vocabulary:
    """A fixed mapping between tokens (strings) and ids ``0 … len(vocab)-1``.

    Ids are given in this order: the ``specials`` as listed, then ``unk`` (if any and not
    already among the specials), then the ``tokens`` in order of first appearance (duplicates
    are skipped), so the same input always gives the same ids.

    Unknown tokens: with ``unk="<unk>"`` (the default) :meth:`encode` maps a token that is not
    in the vocabulary to the id of ``"<unk>"``; with ``unk=None`` it raises ``ValueError``
    naming the token.

    Args:
        tokens: the words of the vocabulary, e.g. from :func:`posviz.tokenize`.
        unk: the unknown token, or ``None`` for strict encoding.
        specials: extra reserved tokens placed first, e.g. ``("<pad>",)``.

    Raises:
        TypeError: if a token is not a ``str``.
        ValueError: if a token is empty or contains whitespace (it could never come out of
            whitespace tokenisation).

    Example:
        >>> vocab = Vocabulary.from_sentences(["the cat sat", "the dog"], specials=("<pad>",))
        >>> vocab.encode("the dog sat")
        [2, 5, 4]
        >>> vocab.decode([2, 5, 1])
        'the dog <unk>'
    """

    def __init__(self, tokens: Iterable[str], *, unk: str | None = "<unk>", specials: Sequence[str] = ()) -> None:
        ordered: list[str] = []
        for token in (*specials, *([unk] if unk is not None else []), *tokens):
            if not isinstance(token, str):
                raise TypeError(f"tokens must be str, got {type(token).__name__} ({token!r})")
            if not token or token != token.strip() or len(token.split()) != 1:
                raise ValueError(f"a token must be non-empty and contain no whitespace, got {token!r}")
            ordered.append(token)
        self._id_of: dict[str, int] = {}
        for token in ordered:
            self._id_of.setdefault(token, len(self._id_of))
        self._tokens = list(self._id_of)
        self.unk = unk
        self.specials = tuple(specials)

    @classmethod
    def from_sentences(
        cls, sentences: Iterable[str], *, unk: str | None = "<unk>", specials: Sequence[str] = ()
    ) -> Vocabulary:
        """Build a vocabulary from whitespace-tokenised sentences (first appearance order)."""
        if isinstance(sentences, str):
            raise TypeError("sentences must be an iterable of str, not a single str")
        return cls((tok for s in sentences for tok in tokenize(s)), unk=unk, specials=specials)

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token: object) -> bool:
        return token in self._id_of

    def __repr__(self) -> str:
        shown = ", ".join(self._tokens[:8]) + (", …" if len(self) > 8 else "")
        return f"Vocabulary({len(self)} tokens: {shown})"

    @property
    def tokens(self) -> list[str]:
        """All tokens, in id order (a copy): ``vocab.tokens[i]`` has id ``i``."""
        return list(self._tokens)

    @property
    def unk_id(self) -> int | None:
        """The id of the unknown token, or ``None`` when the vocabulary is strict."""
        return None if self.unk is None else self._id_of[self.unk]

    def token_to_id(self, token: str) -> int:
        """The id of ``token``; the unknown id for an unseen token, or ``ValueError`` when strict."""
        if not isinstance(token, str):
            raise TypeError(f"token must be a str, got {type(token).__name__}")
        if token in self._id_of:
            return self._id_of[token]
        if self.unk is None:
            raise ValueError(
                f"token {token!r} is not in the vocabulary ({len(self)} tokens) and this vocabulary "
                "has no unknown token; build it with unk='<unk>' to map unseen tokens to one id"
            )
        return self._id_of[self.unk]

    def id_to_token(self, index: int) -> str:
        """The token with id ``index`` (``0 <= index < len(vocab)``, else ``ValueError``)."""
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise TypeError(f"a token id must be an int, got {type(index).__name__} ({index!r})")
        if not 0 <= index < len(self):
            raise ValueError(f"token id {index} is outside [0, {len(self)})")
        return self._tokens[int(index)]

    def encode(self, text: str | Sequence[str]) -> list[int]:
        """Token ids of ``text``: a sentence (split on whitespace) or a list of tokens.

        Returns:
            A list of ``int`` ids, one per token (feed ``torch.tensor(ids)`` to ``nn.Embedding``).

        Raises:
            TypeError: if ``text`` is neither a ``str`` nor a sequence of ``str``.
            ValueError: for an unseen token when the vocabulary has no unknown token.
        """
        return [self.token_to_id(tok) for tok in _as_tokens(text)]

    def decode(self, ids: Iterable[int]) -> str:
        """The tokens of ``ids`` joined by single spaces (``decode(encode(s)) == s`` for known tokens).

        ``ids`` may be a list, a 1-D numpy array or a 1-D torch tensor of integers.

        Raises:
            TypeError / ValueError: for a non-integer id or one outside ``[0, len(vocab))``.
        """
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be an iterable of int, got {type(ids).__name__}")
        return " ".join(self.id_to_token(i) for i in ids)
