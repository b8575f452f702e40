"""What users hand us and what we write: checkpoints, conversion, run files, atomic folders."""
