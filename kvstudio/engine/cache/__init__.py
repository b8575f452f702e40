"""The KV cache kinds (dynamic, static, sliding, paged, quantized), their spec and byte layout."""
