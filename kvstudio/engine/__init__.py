"""The engine a student reads: the model, its cache, sampling and the run, step by step."""
