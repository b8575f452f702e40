"""What a model does for the generator: the protocol and our MiniMind model; transformers."""
