"""The chat lab: a conversation with and without KV-cache reuse (`session`), its
records (`records`) and its run, one turn at a time (`lab`).
"""
