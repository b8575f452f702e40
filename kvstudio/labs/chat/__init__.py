"""The chat lab: a conversation with and without KV-cache reuse (`session`) and its
records (`records`).
"""
