"""Training the embedded models: tokenizer, pretraining, SFT, evaluation, export.

Owns everything that *changes* weights or the vocabulary; the engine in
``kvstudio.engine`` only runs them. Modules:

- ``data``: read the public Korean text and the chat pairs, split them by seed;
- ``tokenizer_train``: a byte-level BPE with MiniMind's special tokens;
- ``datasets``: packed pretraining sequences and ChatML SFT examples (loss mask);
- ``trainer``: one small training loop (AdamW, cosine schedule, checkpoints, report);
- ``export``: write and read a shipped model folder (safetensors, MiniMind names);
- ``generate`` / ``evaluate``: a plain cached generation loop and the quality figures;
- their subcommands ``train`` and ``eval-model`` live in ``kvstudio.cli.tools.train``.

Importing this package loads no data and no weights.
"""
