"""The batch sweep on a transformers model: its bytes and FLOPs follow the same formulas
(an untied input table is a look-up, not a product; K/V read from the HF cache's tensors)."""

from __future__ import annotations

import pytest

from kvstudio.engine.backends.hf import HFBackend
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.common import finish
from kvstudio.labs.serving import batching as lab
from kvstudio.labs.serving import fit as fit_lab

pytestmark = pytest.mark.hf


def test_the_sweep_on_a_transformers_llama(tokenizer: TextTokenizer) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=256, tie_word_embeddings=False)
    backend = HFBackend(LlamaForCausalLM(config).eval(), name="llama-tiny")
    work = lab.model_work(backend)
    table = tokenizer.vocab_size * 64
    assert work.product_parameters == work.parameters - table  # the input table is looked up
    assert work.heads == 4 and work.kv_heads == 2 and work.head_dim == 16
    result = finish(lab.batch_sweep(backend, tokenizer, batch_sizes=(1, 3), context=8, rounds=1,
                                    measure_machine=False), lab.BatchSweepResult)
    for point in result.points:
        assert point.keys == 10
        assert point.kv_bytes == 2 * 2 * 10 * 2 * 16 * 4 * point.batch  # 2·L·S·G·d·bytes·B
        assert point.flops == 2 * point.batch * work.product_parameters + \
            4 * point.batch * 2 * 4 * 16 * 10
    size = fit_lab.measure_cache_size(backend, tokenizer, block_size=4, tokens=10)
    assert size.bytes_per_token == 2 * 2 * 2 * 16 * 4 and size.blocks == 3
