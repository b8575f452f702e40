"""Serving: several requests, arriving over time, on one model and one block pool.

``records.py`` (what each scheduler step did), ``requests.py`` (a requests file to
`Request`s), ``prefix.py`` (prefix caching: vLLM's block hashes, SGLang's radix
tree), ``engine.py`` (`ServingEngine`: one step = one packed forward over the
scheduled requests, their caches in the `BlockPool`) and ``schedulers.py`` (static,
continuous and chunked-prefill batching as policies over that engine).
"""
