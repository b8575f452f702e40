"""A MiniMind-compatible decoder that can be fed a chunk of tokens on top of a KV cache.

Owns the network: RMSNorm, RoPE (half-split ``rotate_half``), grouped-query
attention with ``repeat_kv``, SwiGLU MLP, optional QK-norm, tied embeddings.
Parameter names match MiniMind's ``MiniMindForCausalLM`` state dict
(``model.layers.0.self_attn.q_proj.weight`` …) so a course checkpoint loads as is.

With autograd off the forward runs ``inference.py``'s path: the same maths on
weights prepared once (transposed, stacked, norms folded in), about 1.5× faster
per decode step. The modules below are the reference and the training path.

It does not sample, time or record anything: see ``generate.py``.

Letters in shape comments: B batch, T new tokens, S visible keys (past + new),
H query heads, G K/V heads, d head_dim, C hidden size, V vocabulary.
"""

from __future__ import annotations

import math
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from kvstudio.engine.cache.kv_cache import DynamicLayer, KVCache
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.inference import (
    AttentionProbe,
    InferenceWeights,
    LayerWeights,
    apply_rope_fast,
    fold_linear,
    inference_forward,
    signed_sin,
)


class RMSNorm(nn.Module):
    """weight · x / sqrt(mean(x²) + eps), computed in fp32 as MiniMind does."""

    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x if x.dtype == torch.float32 else x.float()  # skip a no-op cast on the hot path
        # mean(x²) as ‖x‖²/C: four kernels where .square().mean() dispatches a dozen.
        norm = torch.linalg.vector_norm(xf, dim=-1, keepdim=True)  # (…, 1)
        inv_rms = torch.addcmul(self._eps_tensor(norm), norm, norm, value=1.0 / x.shape[-1])
        normed = xf * inv_rms.rsqrt_()
        return self.weight * (normed if normed.dtype == x.dtype else normed.type_as(x))

    def _eps_tensor(self, like: torch.Tensor) -> torch.Tensor:
        eps = getattr(self, "_eps", None)
        if eps is None or eps.device != like.device:
            with torch.inference_mode(False):  # usable with and without autograd
                eps = torch.tensor(self.eps, dtype=torch.float32, device=like.device)
            self._eps = eps
        return eps


def rope_tables(head_dim: int, length: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables (length, d) for the half-split RoPE layout (MiniMind's)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))  # (d/2,)
    angles = torch.outer(torch.arange(length).float(), inv_freq)  # (length, d/2)
    angles = torch.cat([angles, angles], dim=-1)  # (length, d)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """[x1, x2] → [-x2, x1] over the last dim: the 90° turn RoPE mixes in."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (B, T, heads, d); cos, sin (T, d) → x·cos + rotate_half(x)·sin."""
    cos, sin = cos[:, None, :], sin[:, None, :]  # (T, 1, d) broadcast over heads
    return x * cos + rotate_half(x) * sin


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(B, S, G, d) → (B, S, G·n_rep, d): each K/V head serves n_rep query heads.

    MiniMind calls this on every forward. We keep it as the reference: attention
    below asks SDPA for the same grouping (``enable_gqa``) without materialising
    the n_rep copies, and a test checks both give the same output. Either way the
    cache holds the un-repeated (B, S, G, d) tensors.
    """
    if n_rep == 1:
        return x
    B, S, G, d = x.shape
    return x[:, :, :, None, :].expand(B, S, G, n_rep, d).reshape(B, S, G * n_rep, d)


def attention_mask(
    q_start: int, new_tokens: int, k_start: int, window: int | None, device: torch.device
) -> torch.Tensor | None:
    """Boolean mask (T, S): True where a query may attend to a key.

    Queries sit at positions q_start … q_start+T-1 and keys at k_start … q_start+T-1.
    The causal triangle covers only the newest T columns; with a window W, a query at
    position i sees keys i − W + 1 … i (W keys, itself included, as transformers'
    ``sliding_window``). Returns None when
    every key is visible to every query (a single decode step inside the window).
    """
    k_end = q_start + new_tokens
    q_pos = torch.arange(q_start, k_end, device=device)[:, None]  # (T, 1)
    k_pos = torch.arange(k_start, k_end, device=device)[None, :]  # (1, S)
    allowed = k_pos <= q_pos
    if window is not None:
        allowed &= k_pos > q_pos - window
    if bool(allowed.all()):
        return None
    return allowed


class Attention(nn.Module):
    # True: copy K/V n_rep times like MiniMind (slower); False: grouped SDPA, same maths.
    use_repeat_kv = False

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_heads = cfg.num_attention_heads
        self.n_kv_heads = cfg.num_key_value_heads
        self.n_rep = cfg.n_rep
        self.head_dim = cfg.resolved_head_dim
        C, H, G, d = cfg.hidden_size, self.n_heads, self.n_kv_heads, self.head_dim
        self.q_proj = nn.Linear(C, H * d, bias=False)
        self.k_proj = nn.Linear(C, G * d, bias=False)
        self.v_proj = nn.Linear(C, G * d, bias=False)
        self.o_proj = nn.Linear(H * d, C, bias=False)
        self.q_norm = RMSNorm(d, cfg.rms_norm_eps) if cfg.qk_norm else None
        self.k_norm = RMSNorm(d, cfg.rms_norm_eps) if cfg.qk_norm else None

    def forward(
        self,
        x: torch.Tensor,  # (B, T, C)
        cos: torch.Tensor,  # (T, d)
        sin: torch.Tensor,  # (T, d)
        cache_layer: DynamicLayer | None,
        mask: torch.Tensor | None,  # (T, S) bool, None = all visible
        causal: bool,  # True when mask is the plain square triangle (no cache)
    ) -> torch.Tensor:
        B, T, _ = x.shape
        H, G, d = self.n_heads, self.n_kv_heads, self.head_dim
        q = self.q_proj(x).view(B, T, H, d)  # (B, T, H, d)
        k = self.k_proj(x).view(B, T, G, d)  # (B, T, G, d)
        v = self.v_proj(x).view(B, T, G, d)  # (B, T, G, d)
        if self.q_norm is not None and self.k_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rope_fast(q, cos, sin), apply_rope_fast(k, cos, sin)
        if cache_layer is not None:
            # The cache stores K/V after RoPE and before repeat_kv: (B, S, G, d).
            k, v = cache_layer.update(k, v)
        if self.use_repeat_kv:
            k, v = repeat_kv(k, self.n_rep), repeat_kv(v, self.n_rep)  # (B, S, H, d)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2),  # (B, H, T, d)
            k.transpose(1, 2),  # (B, G, S, d), or (B, H, S, d) after repeat_kv
            v.transpose(1, 2),
            attn_mask=mask,
            is_causal=causal and mask is None and T > 1,
            enable_gqa=not self.use_repeat_kv and self.n_rep > 1,
        )  # (B, H, T, d)
        return self.o_proj(y.transpose(1, 2).reshape(B, T, H * d))  # (B, T, C)


class FeedForward(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        C, F_ = cfg.hidden_size, cfg.resolved_intermediate_size
        self.gate_proj = nn.Linear(C, F_, bias=False)
        self.up_proj = nn.Linear(C, F_, bias=False)
        self.down_proj = nn.Linear(F_, C, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.self_attn = Attention(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = FeedForward(cfg)

    def forward(
        self,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        cache_layer: DynamicLayer | None,
        mask: torch.Tensor | None,
        causal: bool,
    ) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, cache_layer, mask, causal)
        return x + self.mlp(self.post_attention_layernorm(x))

    def folded(self) -> LayerWeights:
        """This block's weights for `inference_forward`: (in, out), norms folded in."""
        attn, mlp = self.self_attn, self.mlp
        q_norm, k_norm = attn.q_norm, attn.k_norm
        return LayerWeights(
            qkv=fold_linear(
                attn.q_proj.weight,
                attn.k_proj.weight,
                attn.v_proj.weight,
                norm=self.input_layernorm.weight,
            ),
            o=fold_linear(attn.o_proj.weight),
            gate_up=fold_linear(
                mlp.gate_proj.weight, mlp.up_proj.weight, norm=self.post_attention_layernorm.weight
            ),
            down=fold_linear(mlp.down_proj.weight),
            q_norm=q_norm.weight.detach() if q_norm is not None else None,
            k_norm=k_norm.weight.detach() if k_norm is not None else None,
        )


class DecoderStack(nn.Module):
    """MiniMind's ``MiniMindModel``: embeddings, blocks, final norm (names kept)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class MiniMindLM(nn.Module):
    """MiniMind's ``MiniMindForCausalLM``: a decoder stack plus a (tied) LM head."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.model = DecoderStack(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        # The inference snapshot (see inference.py) and the parameter versions it was built from.
        self._inference: InferenceWeights | None = None
        self._inference_key: list[int] = []
        self._snapshot_params: list[nn.Parameter] | None = None  # whose versions the key holds
        cos, sin = rope_tables(cfg.resolved_head_dim, cfg.max_position_embeddings, cfg.rope_theta)
        # Not saved in the state dict (MiniMind does the same with freqs_cos/freqs_sin).
        self.rope_cos: torch.Tensor  # (max_positions, d)
        self.rope_sin_signed: torch.Tensor  # (max_positions, d)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin_signed", signed_sin(sin), persistent=False)

    def init_weights(self, seed: int) -> MiniMindLM:
        """Seeded random initialisation (normal std 0.02, residual outputs scaled down)."""
        gen = torch.Generator().manual_seed(seed)
        n_layers = self.config.num_hidden_layers
        for name, p in self.named_parameters():
            if name.endswith("norm.weight"):
                nn.init.ones_(p)
            else:
                std = 0.02
                if name.endswith(("o_proj.weight", "down_proj.weight")):
                    std = 0.02 / math.sqrt(2 * n_layers)
                with torch.no_grad():
                    p.copy_(torch.randn(p.shape, generator=gen) * std)
        return self

    @property
    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def inference_weights(self) -> InferenceWeights | None:
        """The weights laid out for `inference_forward`, rebuilt when a parameter has changed.

        In-place updates (an optimizer step, ``load_state_dict``) bump a parameter's
        version counter and `.to()` goes through `_apply`; both trigger a rebuild.
        Returns None when the parameters are inference tensors, which keep no version.
        """
        if self._snapshot_params is None:
            self._snapshot_params = list(self.parameters())
        try:
            key = [p._version for p in self._snapshot_params]
        except RuntimeError:
            return None
        if self._inference is None or key != self._inference_key:
            self._inference = self._fold_weights()
            self._inference_key = key
        return self._inference

    def _fold_weights(self) -> InferenceWeights:
        cfg = self.config
        weight = self.lm_head.weight
        return InferenceWeights(
            embed=self.model.embed_tokens.weight.detach(),
            layers=tuple(cast(Block, block).folded() for block in self.model.layers),
            lm_head=fold_linear(weight, norm=self.model.norm.weight),
            eps=torch.tensor(cfg.rms_norm_eps, dtype=torch.float32, device=weight.device),
            n_heads=cfg.num_attention_heads,
            n_kv_heads=cfg.num_key_value_heads,
            head_dim=cfg.resolved_head_dim,
        )

    def _apply(self, fn: Any, recurse: bool = True) -> MiniMindLM:  # .to(), .float(), …
        self._forget_inference_weights()
        return super()._apply(fn, recurse)

    def load_state_dict(self, *args: Any, **kwargs: Any) -> Any:
        self._forget_inference_weights()  # assign=True replaces the parameter objects
        return super().load_state_dict(*args, **kwargs)

    def _forget_inference_weights(self) -> None:
        self._inference = None
        self._snapshot_params = None

    def forward(
        self,
        input_ids: torch.Tensor,  # (B, T)
        cache: KVCache | None = None,
        *,
        window: int | None = None,
        logits_to_keep: int = 0,
        probe: AttentionProbe | None = None,
    ) -> torch.Tensor:
        """Logits (B, T', V) for the last `logits_to_keep` positions (0 = all T).

        With a cache, the chunk sits at positions cache.seq_length … +T-1 and the
        cache is updated in place. Without one, the chunk starts at position 0 and
        `window` (if given) limits how far back each query may look, exactly as
        a sliding-window cache would. `probe` (the cache inspector) is called per
        layer with the queries and the keys they attend; it runs the inference path.
        """
        T = input_ids.shape[1]
        start = cache.seq_length if cache is not None else 0
        if start + T > self.rope_cos.shape[0]:
            raise ValueError(
                f"Sequence of {start + T} tokens exceeds the model's "
                f"{self.rope_cos.shape[0]} positions; use a shorter prompt or fewer new tokens."
            )
        if cache is not None:
            window = cache.window
            k_start = cache.visible_start(T)
        else:
            k_start = 0
        mask = None
        causal = False
        # One new token on a cache sees every stored key (a sliding cache only stores
        # the window), so the common decode step needs no mask at all.
        single_decode = cache is not None and T == 1
        if not single_decode and (T > 1 or k_start > 0 or window is not None):
            plain_triangle = start == 0 and window is None
            if plain_triangle:
                causal = True  # SDPA's fused causal path; no mask tensor needed
            else:
                mask = attention_mask(start, T, k_start, window, input_ids.device)
        cos = self.rope_cos[start : start + T]  # (T, d)
        sin = self.rope_sin_signed[start : start + T]  # (T, d), see apply_rope_fast
        weights = None if torch.is_grad_enabled() else self.inference_weights()
        if weights is None and probe is not None:
            weights = self._fold_weights()  # the probe lives on the inference path only
        if weights is not None:
            return inference_forward(
                weights, input_ids, cache, cos, sin, mask, causal, logits_to_keep, probe
            )
        x = self.model.embed_tokens(input_ids)  # (B, T, C)
        for i, block in enumerate(self.model.layers):
            x = block(x, cos, sin, cache[i] if cache is not None else None, mask, causal)
        if logits_to_keep:
            x = x[:, -logits_to_keep:]
        return self.lm_head(self.model.norm(x))  # (B, T', V)
