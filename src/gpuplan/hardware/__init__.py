"""Where it runs: GPUs and clusters."""
