"""Decoding strategies beyond one sampled token per step, over the same decode loop.

`beam` (beam search: several hypotheses per prompt, their cache rows reordered
each step), `speculative` (draft k tokens cheaply, verify them in one forward
of the target model, crop the cache to what was accepted) and `drafters` (the
draft model and prompt lookup that propose those tokens).
"""
