"""The chat lab: a conversation with and without KV-cache reuse (`session`), its
records (`records`), a scripted conversation's cost and run (`script`) and the lab's run (`lab`).
"""
