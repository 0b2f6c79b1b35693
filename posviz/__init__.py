"""posviz: reference implementations and plots for the positional-encoding course.

The notebooks write each idea out first; this package holds the tested versions they are
checked against, plus the plotting and training helpers that keep notebook cells short.
"""

from . import exercises
from ._version import __version__
from .alibi import ALiBiMultiheadAttention, alibi_bias, alibi_slopes
from .analysis import PCAResult, pca, plot_position_pca
from .attention import MultiheadSelfAttention, causal_mask, scaled_dot_product_attention
from .data import data_dir, load_minilm_position_embeddings, load_sentences, tokenize
from .encodings import LearnedPositionalEmbedding, SinusoidalPositionalEncoding, sinusoidal_encoding
from .methods import POSITION_METHODS, PositionMethod, register_position_method, shaw_method, t5_method
from .models import TinyTransformer
from .plots import (
    offset_similarity,
    plot_dimension_waves,
    plot_encoding_heatmap,
    plot_similarity_vs_offset,
    tick_stride,
)
from .recurrence import (
    VASWANI_TABLE_1,
    TinyRecurrent,
    jacobian_norms,
    make_recurrent_layer,
    median_seconds,
    plot_rnn_unrolled,
    rnn_forward,
    set_spectral_radius,
)
from .relative import (
    DEFAULT_MAX_RELATIVE_POSITION,
    RelativeMultiheadAttention,
    relative_attention,
    relative_position_index,
)
from .results import paired_stats, provenance, seed_stats
from .rope import (
    ROPE_LAYOUTS,
    RotaryEmbedding,
    RotaryMultiheadAttention,
    apply_rope,
    half_to_interleaved,
    interleaved_to_half,
    rope_angles,
    rope_decay_bound,
    rope_frequencies,
    rope_rotation_matrix,
)
from .rope2d import (  # notebook 08: positions in 2-D and 3-D
    apply_mrope,
    axial_frequencies_2d,
    axial_rope_2d,
    grid_positions,
    mixed_rope_2d,
    mrope_position_ids,
    qwen2_vl_rope_index,
)
from .rope_scaling import (
    CONTEXT_RULES,
    ntk_scaled_base,
    scaled_rope_frequencies,
    set_rope_frequencies,
    yarn_attention_factor,
    yarn_correction_range,
)
from .style import (
    get_language,
    plain_log_ticks,
    seed_everything,
    set_language,
    setup,
    t,
    use_korean_font,
    wrap_text,
)
from .t5 import (
    T5_MAX_DISTANCE,
    T5_NUM_BUCKETS,
    T5MultiheadAttention,
    T5RelativePositionBias,
    t5_relative_position_bucket,
)
from .tables import pad_text, text_columns
from .tasks import IGNORE, CharLMTask, FirstTokenTask, OffsetCopyTask, OrderTask, Task
from .training import TrainResult, evaluate, per_token_loss, train
from .vocab import Vocabulary

__all__ = [
    "__version__",
    "exercises",
    # style
    "setup",
    "seed_everything",
    "use_korean_font",
    "set_language",
    "get_language",
    "t",
    "plain_log_ticks",
    "wrap_text",
    # printed tables
    "text_columns",
    "pad_text",
    # data
    "data_dir",
    "load_sentences",
    "tokenize",
    "load_minilm_position_embeddings",
    # encodings
    "sinusoidal_encoding",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding",
    # attention and models
    "scaled_dot_product_attention",
    "causal_mask",
    "MultiheadSelfAttention",
    "PositionMethod",
    "POSITION_METHODS",
    "register_position_method",
    "TinyTransformer",
    # relative position representations (Shaw et al. 2018)
    "DEFAULT_MAX_RELATIVE_POSITION",
    "relative_position_index",
    "relative_attention",
    "RelativeMultiheadAttention",
    "shaw_method",
    # T5 relative position bias (Raffel et al. 2020)
    "T5_NUM_BUCKETS",
    "T5_MAX_DISTANCE",
    "t5_relative_position_bucket",
    "T5RelativePositionBias",
    "T5MultiheadAttention",
    "t5_method",
    # rotary position embedding
    "ROPE_LAYOUTS",
    "rope_frequencies",
    "rope_angles",
    "rope_rotation_matrix",
    "apply_rope",
    "interleaved_to_half",
    "half_to_interleaved",
    "RotaryEmbedding",
    "RotaryMultiheadAttention",
    "rope_decay_bound",
    # 2-D RoPE and M-RoPE (notebook 08)
    "grid_positions",
    "axial_frequencies_2d",
    "axial_rope_2d",
    "mixed_rope_2d",
    "mrope_position_ids",
    "apply_mrope",
    "qwen2_vl_rope_index",
    # context extension: RoPE scaling rules (notebook 05b)
    "CONTEXT_RULES",
    "ntk_scaled_base",
    "scaled_rope_frequencies",
    "set_rope_frequencies",
    "yarn_correction_range",
    "yarn_attention_factor",
    # ALiBi (notebook 06)
    "alibi_slopes",
    "alibi_bias",
    "ALiBiMultiheadAttention",
    # stored results
    "paired_stats",
    "provenance",
    "seed_stats",
    # tasks and training
    "IGNORE",
    "Task",
    "FirstTokenTask",
    "OrderTask",
    "OffsetCopyTask",
    "CharLMTask",
    "TrainResult",
    "train",
    "evaluate",
    "per_token_loss",
    # recurrence (notebook 01)
    "rnn_forward",
    "TinyRecurrent",
    "make_recurrent_layer",
    "set_spectral_radius",
    "jacobian_norms",
    "median_seconds",
    "plot_rnn_unrolled",
    "VASWANI_TABLE_1",
    # plots
    "tick_stride",
    "offset_similarity",
    "plot_encoding_heatmap",
    "plot_dimension_waves",
    "plot_similarity_vs_offset",
    # vocabulary and PCA (notebook 02)
    "Vocabulary",
    "PCAResult",
    "pca",
    "plot_position_pca",
]
