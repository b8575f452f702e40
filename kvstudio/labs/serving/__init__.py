"""The serving lab: requests through static or continuous batching on the real model
(`lab`), its records (`records`), the size rule every front shares (`size`) and
why batching pays (`batching`).
"""
