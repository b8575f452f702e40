"""Serving: several requests, arriving over time, on one model and one block pool.

Laid out as vLLM's engine is: ``engine.py`` (`LLMEngine`: the loop, one step =
schedule → execute → update the requests → record), ``scheduler.py``
(`Scheduler`: static, continuous and chunked-prefill batching; `schedule()`
returns a plan and never runs the model), ``kv_cache_manager.py``
(`KVCacheManager`: blocks from the one `BlockPool`, and the prefix cache),
``model_runner.py`` (`ModelRunner`: one packed forward per plan, the next
tokens), ``request.py`` (`Request`, `RequestStatus`: one request's mutable
state), ``outputs.py`` (`SchedulerOutput`, `ModelRunnerOutput`: what passes
between them in a step), ``prefix.py`` (prefix caching: vLLM's block hashes,
SGLang's radix tree), ``records.py`` (`RequestSpec`, `SchedulerConfig` and the
frozen per-step `ServingStep` the labs draw) and ``request_file.py`` (a
requests file to `RequestSpec`s).
"""
