"""The models: FLOPs, memory, communication, step time and reliability."""
